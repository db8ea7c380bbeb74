"""A body answer that states the value asked for, on the text of the shared arXiv PDFs as
papers.fulltext.parse reads it: the sentence after the one matching the question's words often
holds the value ("… a single Wikipedia dump …" / "… we use the December 2018 dump"), a list
opened by a line ending with a colon has its first item as a sentence of its own, and for a
question after a quantity the sentence whose number stands next to what was asked comes first."""

from chat.llm.base import AnswerRequest, SourceText
from chat.llm.extractive import (
    answering_scores,
    asked_value_terms,
    gives_value,
    item_label,
    values_another,
)
from chat.llm.sentences import passage_sentences
from chat.llm.shapes import compose_shaped
from chat.understanding.intent import Intent
from chat.understanding.quantity import asks_for_quantity


def _between(text: str, start: str, end: str) -> str:
    at = text.index(start)
    return text[at : text.index(end, at)]


def _chunk(number: int, text: str, section: str, arxiv_id: str, page: int = 1) -> SourceText:
    return SourceText(
        number=number, title="A paper", authors="A. Author", published="2020-05-22", text=text,
        arxiv_id=arxiv_id, where=f"p. {page}, {section}", section=section,
    )


def _answer(question: str, sources: list[SourceText]) -> str:
    request = AnswerRequest(
        question=question, sources=sources, messages=[], intent=Intent("overview")
    )
    return compose_shaped(request)


def _bullets(answer: str) -> list[str]:
    return [line for line in answer.splitlines() if line.startswith("- ")]


def test_the_sentence_after_the_answer_gives_the_value_it_leads_up_to(settings, text_of):
    settings.EMBEDDING_BACKEND = "minilm"
    rag = _chunk(
        1, _between(text_of("2005.11401v4"), "3 Experiments", "We consider k"), "3 Experiments",
        "2005.11401", page=4,
    )
    bullets = _bullets(_answer("Which Wikipedia dump does RAG use as its non-parametric memory?", [rag]))
    said = next(i for i, b in enumerate(bullets) if "a single Wikipedia dump" in b)
    assert "we use the December 2018 dump" in bullets[said + 1]

    resnet = _chunk(
        1, _between(text_of("1512.03385v1"), "34-layer net with this 3-layer", "Remarkably"),
        "4.1. ImageNet Classification", "1512.03385", page=6,
    )
    answer = _answer("How many FLOPs does the 50-layer ResNet have?", [resnet])
    assert "This model has 3.8 billion FLOPs [1]." in answer
    assert not answer.startswith("The passages found do not state the number")


def test_a_symbols_value_in_the_next_sentence_continues_the_answer(settings, text_of):
    settings.EMBEDDING_BACKEND = "minilm"
    rag = _chunk(
        1, _between(text_of("2005.11401v4"), "Karpukhin et al. [26], we use", "3.1 Open-domain"),
        "3 Experiments", "2005.11401", page=4,
    )
    bullets = _bullets(_answer("How many documents does RAG retrieve per query?", [rag]))
    said = next(i for i, b in enumerate(bullets) if "we retrieve the top k documents" in b)
    # "k" is no word of the question: the value is tied to the answer by its symbol.
    assert bullets[said + 1].startswith("- We consider k ∈ {5, 10} for training")


def test_a_next_sentence_sharing_only_words_is_no_continuation(settings, text_of):
    settings.EMBEDDING_BACKEND = "minilm"
    bn = _chunk(
        1, _between(text_of("1502.03167v3"), "By only using Batch", "We also verified"),
        "4.2.2 Single-Network Classification", "1502.03167", page=7,
    )
    answer = _answer("What learning rate did BN-x5 use?", [bn])
    # "It reaches 74.8% after 6·106 steps" states a number, but not of a learning rate.
    assert "It reaches 74.8%" not in answer
    assert "BN-x5 needs 14 times fewer steps" in answer


def test_a_line_ending_with_a_colon_opens_a_list_whose_first_item_is_a_sentence(text_of):
    text = _between(text_of("1502.03167v3"), "4.2.2 Single-Network", "BN-x30")
    sentences = passage_sentences(text)
    assert any(s.endswith("tested on the validation data:") for s in sentences)
    item = "Inception: the network described at the beginning of Section 4.2, trained with the initial learning rate of 0.0015."
    assert item in sentences
    # A lower-case line after a colon goes on with the sentence ("… the formula: lrate = …").
    transformer = passage_sentences(_between(text_of("1706.03762v7"), "5.3 Optimizer", "5.4"))
    assert any("according to the formula: lrate" in s for s in transformer)


def test_the_number_next_to_what_was_asked_answers_a_quantity_question(text_of):
    text = text_of("1502.03167v3")
    networks = _chunk(
        1, _between(text, "4.2.2 Single-Network", "In Figure 2"),
        "4.2.2 Single-Network Classification", "1502.03167", page=7,
    )
    results = _chunk(
        2, _between(text, "In Figure 2, we show", "By applying"),
        "4.2.2 Single-Network Classification", "1502.03167", page=7,
    )
    question = "What initial learning rate did the Inception baseline use in the batch normalization experiments?"
    scores = answering_scores(question, [networks, results])
    best = max(scores.values())[1]
    # Not "… in less than half the number of training steps", whose number is no rate.
    assert best.endswith("trained with the initial learning rate of 0.0015.")


def test_a_names_digits_are_no_value():
    things = {"size"}
    question = "What batch size did Vision Transformer pre-training use?"
    assert not gives_value(
        "First, we pre-train ViT models on datasets of increasing size: ImageNet, ImageNet-21k, "
        "and JFT-300M.", things, question,
    )
    assert gives_value("We use a batch size of 4096.", things, question)
    assert not gives_value("The batch size is given in Table 3.", things, question)


def test_a_range_answers_a_question_after_the_largest(text_of):
    text = text_of("2305.13048v1")
    intro = _chunk(
        1, _between(text, "• We conduct a comprehensive series", "2 Related Work"),
        "1 Introduction", "2305.13048", page=2,
    )
    visualisation = _chunk(
        2, _between(text, "These patterns of", "The experiment follows"),
        "G Model Behavior Visualization", "2305.13048", page=16,
    )
    scores = answering_scores("What is the largest RWKV model?", [visualisation, intro], ["RWKV"])
    # No sentence says "largest": the one giving the range of sizes does, not "the RWKV-430M
    # model" that shares the question's two other words.
    assert max(scores.values())[1].startswith("We release pretrained model ranging in size")


def test_the_datasets_of_the_experiments_asked_about_come_first(settings, text_of):
    settings.EMBEDDING_BACKEND = "minilm"
    text = text_of("1412.6980v9")
    related = _chunk(
        1, _between(text, "The Sum-of-Functions Optimizer", "6 EXPERIMENTS"), "5 RELATED WORK",
        "1412.6980", page=5,
    )
    logistic = _chunk(
        2, _between(text, "6.1 EXPERIMENT", "The 10,000 dimension"),
        "6.1 EXPERIMENT: LOGISTIC REGRESSION", "1412.6980", page=5,
    )
    answer = _answer(
        "Which datasets were used in the logistic regression experiments of Adam?",
        [related, logistic],
    )
    # Related work naming "SFO" and "GPU" beside "dataset" named more, and came first.
    assert "IMDB movie review dataset" in answer and "MNIST" in answer
    assert "Sum-of-Functions" not in answer


def test_what_a_model_was_trained_on_names_a_dataset(settings, text_of):
    settings.EMBEDDING_BACKEND = "minilm"
    text = text_of("2305.13048v1")
    evaluations = _chunk(
        1, _between(text, "Addressing RQ1 and RQ2", "6 Inference Experiments"), "5 Evaluations",
        "2305.13048", page=7,
    )
    intro = _chunk(
        2, _between(text, "• We conduct a comprehensive series", "2 Related Work"),
        "1 Introduction", "2305.13048", page=2,
    )
    answer = _answer("On which dataset were RWKV models trained?", [evaluations, intro])
    # Beside the six benchmarks it was evaluated on, without a dataset word of its own.
    assert "trained on the Pile" in answer


def test_trained_on_a_proper_noun_names_it_as_a_dataset():
    from chat.llm.shapes import _dataset_names

    assert _dataset_names(
        "We release pretrained model ranging in size from 169 million to 14 billion parameters "
        "trained on the Pile (Gao et al., 2020)."
    ) == {"Pile"}
    assert _dataset_names("All models are trained on the same hardware.") == set()


def test_a_value_of_another_quantity_does_not_follow_the_answer(settings, text_of):
    """"dropout rate Pdrop = 0.1, instead of 0.3" shares "rate" with "What learning rate schedule
    …?", states a number beside it, and answers another question: once the answer states the
    learning rate, it is no bullet of it."""
    settings.EMBEDDING_BACKEND = "minilm"
    text = text_of("1706.03762v7")
    optimizer = _chunk(
        1, _between(text, "5.3 Optimizer", "5.4 Regularization"), "5.3 Optimizer", "1706.03762",
        page=7,
    )
    results = _chunk(
        2, _between(text, "6.1 Machine Translation", "6.2 Model Variations"),
        "6.1 Machine Translation", "1706.03762", page=8,
    )
    # As the pipeline passes it (chat.retrieval.named): the question names the paper.
    named = {
        "papers": [{"arxiv_id": "1706.03762", "name": "Transformer", "asked": "the Transformer"}],
        "unknown": [],
        "about": True,
    }

    def answer(question: str, sources: list[SourceText]) -> str:
        request = AnswerRequest(
            question=question, sources=sources, messages=[], intent=Intent("overview"),
            analysis={"named": named},
        )
        return compose_shaped(request)

    said = answer("What learning rate schedule did the Transformer use?", [optimizer, results])
    assert "increasing the learning rate linearly for the first warmup_steps" in said
    assert "We used warmup_steps = 4000 [1]." in said
    assert "dropout rate Pdrop = 0.1, instead of 0.3" not in said
    # Its own question still gets it: "dropout" qualifies the rate there.
    said = answer("What dropout rate did the Transformer big model use?", [results, optimizer])
    assert "dropout rate Pdrop = 0.1, instead of 0.3" in said


def test_a_value_of_another_quantity_weighs_less_as_the_answer():
    question = "What learning rate schedule did the Transformer use?"
    things = asked_value_terms(question)
    assert values_another(
        "The Transformer (big) model trained for English-to-French used dropout rate Pdrop = 0.1, "
        "instead of 0.3.", things, question,
    )
    assert not values_another(
        "Inception: the network described at the beginning of Section 4.2, trained with the "
        "initial learning rate of 0.0015.", things, question,
    )
    # A question that qualifies nothing ("What batch size …") has no other quantity.
    assert not values_another(
        "We use a batch size of 4096.", {"size"}, "What size did ViT pre-training use?"
    )


def test_a_list_item_named_by_the_question_answers_it_and_another_item_does_not(text_of):
    """Batch Normalization's list of networks: "BN-x5: Inception with Batch Normalization …
    The initial learning rate was increased by a factor of 5, to 0.0075." then "BN-x30: Like
    BN-x5, but with the initial learning rate 0.045 …". The item's label is its sentences'
    context, and another item that mentions the named one is about itself."""
    networks = _chunk(
        1, _between(text_of("1502.03167v3"), "4.2.2 Single-Network", "In Figure 2"),
        "4.2.2 Single-Network Classification", "1502.03167", page=7,
    )
    best = max(answering_scores("What learning rate did BN-x5 use?", [networks]).values())[1]
    assert best == "The initial learning rate was increased by a factor of 5, to 0.0075."
    best = max(answering_scores("What learning rate did BN-x30 use?", [networks]).values())[1]
    assert best.startswith("BN-x30: Like BN-x5, but with the initial learning rate 0.045")
    # The next item is no continuation of the answer, nor one of its bullets.
    answer = _answer("What learning rate did BN-x5 use?", [networks])
    assert _bullets(answer)[0] == "- The initial learning rate was increased by a factor of 5, to 0.0075 [1]."
    assert "BN-x30" not in answer


def test_an_items_label_is_one_to_three_words_before_a_colon():
    assert item_label("BN-x5: Inception with Batch Normalization and the modifications.") == "BN-x5"
    assert item_label("Linear Reading: A non-personalized baseline that assumes …") == (
        "Linear Reading"
    )
    # A caption, a table's row and a sentence opening a list are no item.
    assert item_label("Table 1: Model 175B, #L 96") is None
    assert item_label("We use three: a, b and c.") is None


def test_once_the_answer_says_what_was_asked_for_the_quotes_after_it_say_it_too(settings, text_of):
    """ "What GPUs was RAG trained on?": "… distributing training across 8, 32GB NVIDIA V100
    GPUs …" answers; the abstract's "We introduce RAG models where … a pre-trained neural
    retriever" shares only the paper's name and "trained"."""
    settings.EMBEDDING_BACKEND = "minilm"
    text = text_of("2005.11401v4")
    setup = _chunk(
        1, _between(text, "C Training setup Details", "D Further Details"),
        "C Training setup Details", "2005.11401", page=17,
    )
    abstract = _chunk(2, _between(text, "Abstract", "1 Introduction"), "Abstract", "2005.11401")
    bullets = _bullets(_answer("What GPUs was RAG trained on?", [setup, abstract]))
    assert "32GB NVIDIA V100 GPUs" in bullets[0]
    assert all("GPU" in b for b in bullets)


def test_a_metric_is_a_quantity_and_the_asked_size_is_what_was_asked(settings, text_of):
    question = "What exact match does Fusion-in-Decoder large reach on Natural Questions?"
    assert asks_for_quantity(question) and asked_value_terms(question) == {"match"}
    assert asks_for_quantity("What BLEU score does the big Transformer reach?")
    assert not asks_for_quantity("Which papers match my reading list?")


def test_a_property_word_that_modifies_a_noun_asks_for_no_number():
    # This opened "The passages found do not state the number asked for".
    assert not asks_for_quantity("What is parameter initialization in QAOA and why does it matter?")
    assert not asks_for_quantity("What error correction scheme is used?")
    # The property asked is found past the modifier, and an -ing preposition is no noun.
    assert asks_for_quantity("What is the depth estimation accuracy?")
    assert asks_for_quantity("What batch size during pre-training?")


def test_a_question_after_how_long_is_answered_by_a_duration(settings, text_of):
    # "How long did the CiteSee field deployment last?" opened "In Study 2, we use the winning
    # strategy as part of a field deployment study" (its "2" names the study) and said no paper
    # mentions "last".
    from chat.understanding.quantity import numbers_in, states_duration

    settings.EMBEDDING_BACKEND = "hashing"
    assert numbers_in("In Study 2, we use the winning strategy") == set()
    assert numbers_in("a study of 24 participants") == {"24"}
    assert states_duration("… on their personal and work computers for one to two weeks.")
    assert not states_duration("In the week-long deployment, one of the two strategies won.")
    text = text_of("2302.07302v1")
    study = _chunk(
        1, _between(text, "In Study 2, we use the winning strategy", "After completing"),
        "5 STUDY 1: DISCOVER RELEVANT", "2302.07302", page=9,
    )  # fmt: skip
    deployment = _chunk(
        2, _between(text, "We conducted a field deployment by recruiting", "Before\nthe study"),
        "6 STUDY 2: FIELD DEPLOYMENT", "2302.07302", page=11,
    )  # fmt: skip
    question = "How long did the CiteSee field deployment last?"
    best = max(answering_scores(question, [study, deployment], ["CiteSee"]).values())[1]
    assert states_duration(best)
    assert "“last”" not in _answer(question, [study, deployment])

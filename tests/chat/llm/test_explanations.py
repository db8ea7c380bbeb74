"""Explanatory questions on the text of the shared arXiv PDFs: "How does X do Y?" and "Why …?" are
answered by the sentence saying by what means or for what reason, not by the ones that say again
what the question says; "What are the limitations of X?" by the sentences that state the work's
limits, not by its definitions (chat.understanding.answer_kinds, chat.llm.extractive,
chat.llm.shapes)."""

from chat.llm.base import AnswerRequest, SourceText
from chat.llm.shapes import compose_shaped
from chat.understanding.answer_kinds import (
    asks_for_procedure,
    asks_for_reason,
    others_limits,
    procedure_weight,
    reason_weight,
    states_limit,
)
from chat.understanding.intent import Intent

COVARIATE = "How does batch normalization reduce internal covariate shift?"


def _between(text: str, start: str, end: str) -> str:
    at = text.index(start)
    return text[at : text.index(end, at)]


def _source(number: int, text: str, arxiv_id: str, section: str = "", page: int = 1,
            title: str = "A paper") -> SourceText:
    where = f"p. {page}, {section}" if section else ""
    return SourceText(
        number=number, title=title, authors="A. Author", published="2015-02-01", text=text,
        arxiv_id=arxiv_id, where=where, section=section,
    )


def test_a_why_question_is_answered_by_the_reason_not_by_its_own_words(text_of):
    text = text_of("2007.01282v2")
    method = _source(
        1, _between(text, "3 Method", "4 Experiments"), "2007.01282", "3 Method", 3,
        title="Leveraging Passage Retrieval with Generative Models for Open Domain Question "
        "Answering",
    )
    request = AnswerRequest(
        question="Why does Fusion-in-Decoder process passages independently in the encoder?",
        sources=[method], messages=[], intent=Intent("overview"),
    )
    bullets = [line for line in compose_shaped(request).splitlines() if line.startswith("- ")]
    # Not "More precisely, each retrieved passage and its title are concatenated with the
    # question, and processed independently from other passages by the encoder", which says
    # again what the question says.
    assert bullets[0].startswith(
        "- Processing passages independently in the encoder allows to scale to large number of "
        "contexts, as it only performs self attention over one context at a time"
    ), bullets


def test_a_reason_given_by_pointing_back_is_quoted_with_the_sentence_before_it(text_of):
    text = text_of("1706.03762v7")
    scaled = _source(
        1, _between(text, "3.2.1 Scaled Dot-Product Attention", "3.2.2 Multi-Head Attention"),
        "1706.03762", "3.2.1 Scaled Dot-Product Attention", 4, title="Attention Is All You Need",
    )
    request = AnswerRequest(
        question="Why does the Transformer scale the dot products by √dk?",
        sources=[scaled], messages=[], intent=Intent("overview"),
    )
    bullets = [line for line in compose_shaped(request).splitlines() if line.startswith("- ")]
    # "To counteract this effect, we scale the dot products by 1/√dk" alone says again what the
    # question says; "this effect" is the reason, in the sentence before it.
    assert bullets[0].startswith(
        "- We suspect that for large values of dk, the dot products grow large in magnitude"
    ), bullets
    assert bullets[1].startswith("- To counteract this effect, we scale the dot products"), bullets


DPR_TITLE = "Dense Passage Retrieval for Open-Domain Question Answering"


def test_how_a_model_is_trained_is_answered_by_its_training_section_not_its_results(text_of):
    text = text_of("2004.04906v3")
    results = _source(
        1, _between(text, "6.2 Results", "7 Related Work"), "2004.04906", "6.2 Results", 8,
        title=DPR_TITLE,
    )
    training = _source(
        2, _between(text, "3.2 Training", "4 Experimental Setup"), "2004.04906", "3.2 Training",
        3, title=DPR_TITLE,
    )
    request = AnswerRequest(
        question="How is DPR trained?", sources=[results, training], messages=[],
        intent=Intent("overview"),
        analysis={"named": {"papers": [{"arxiv_id": "2004.04906", "name": "DPR", "asked": "DPR"}],
                            "about": True}},
    )
    bullets = [line for line in compose_shaped(request).splitlines() if line.startswith("- ")]
    # Not "Single and Multi denote that our Dense Passage Retriever (DPR) is trained using
    # individual or combined training datasets", a caption of its results.
    assert bullets[0].startswith(
        "- Training the encoders so that the dot-product similarity (Eq. (1)) becomes a good "
        "ranking function"
    ), bullets
    assert not any("Single and Multi denote" in b for b in bullets[:4]), bullets


def test_what_a_model_was_trained_on_is_answered_by_its_corpus_section(text_of):
    text = text_of("2205.01068v1")
    title = "OPT: Open Pre-trained Transformer Language Models"
    limitations = _source(
        1, _between(text, "5 Limitations", "6 Considerations"), "2205.01068", "5 Limitations", 8,
        title=title,
    )
    corpus = _source(
        2, _between(text, "2.3 Pre-training Corpus", "2.4 Training Efficiency"), "2205.01068",
        "2.3 Pre-training Corpus", 2, title=title,
    )
    request = AnswerRequest(
        question="What data was OPT trained on?", sources=[limitations, corpus], messages=[],
        intent=Intent("overview"),
        analysis={"named": {"papers": [{"arxiv_id": "2205.01068", "name": "OPT", "asked": "OPT"}],
                            "about": True}},
    )
    bullets = [line for line in compose_shaped(request).splitlines() if line.startswith("- ")]
    # Not "… we believe more scrutiny should be afforded to the training data …", which says
    # "data" and "training" and no word of what the data was.
    assert bullets[0].startswith(
        "- The pre-training corpus contains a concatenation of datasets used in RoBERTa"
    ), bullets


def test_a_training_method_outweighs_a_result_for_how_it_is_trained():
    assert asks_for_procedure("How is DPR trained?")
    assert asks_for_procedure("how is it trained?")
    assert asks_for_procedure("What is RAG's training objective?")
    assert not asks_for_procedure("How many GPUs was RAG trained on?")
    method = "We jointly train the retriever and generator components without any direct supervision."
    result = "Our Dense Passage Retriever (DPR) is exceptionally strong."
    assert procedure_weight(method) > 1 > procedure_weight(result)
    assert reason_weight(result, "How is DPR trained?") < 1
    # Under "3.2 Training" a sentence is the method, whatever its words.
    assert procedure_weight("Our best model uses gold passages from the same mini-batch.",
                            frozenset({"train"})) > 1


def test_how_and_why_ask_for_a_connective_the_question_does_not_say():
    assert asks_for_reason(COVARIATE)
    assert asks_for_reason("Why does the Transformer scale the dot products?")
    assert asks_for_reason("What is the intuition behind Adam's bias correction?")
    assert not asks_for_reason("How many GPUs were used?")
    assert not asks_for_reason("What optimizer did the Transformer use?")
    why = "Why does batch normalization allow higher learning rates?"
    # "allows" is the question's own word: that sentence says it again, it gives no reason.
    assert reason_weight("Batch Normalization allows us to use much higher learning rates.", why) == 1
    assert reason_weight("… by reducing the dependence of gradients on the scale of the "
                         "parameters.", why) > 1
    assert reason_weight("We normalize layer inputs by subtracting the mean.", "What is BN?") == 1


def test_limits_are_the_works_own():
    assert states_limit("Since our goal is to demonstrate the technique, we do not use human "
                        "labels for harmlessness.")
    assert states_limit("RWKV-4 is very sensitive to prompt engineering.")
    assert not states_limit("We refer to these instructions as principles forming a constitution.")
    others = "Each of these has distinct drawbacks that restrict their efficiency."
    assert others_limits(others) and not states_limit(others)


def test_limitations_are_answered_by_the_limits_not_the_definitions(text_of):
    text = text_of("2212.08073v1")
    constitution = _source(
        1, _between(text, "3 Constitutional AI: Critiques, Revisions", "3.1 Method"),
        "2212.08073", "3 Constitutional AI: Critiques, Revisions, and Supervised Learning", 7,
    )
    contributions = _source(
        2, _between(text, "1.3 Contributions", "1.4 Models and Data"), "2212.08073",
        "1.3 Contributions", 5,
    )
    request = AnswerRequest(
        question="What are the limitations of Constitutional AI?",
        sources=[constitution, contributions], messages=[], intent=Intent("overview"),
    )
    bullets = [line for line in compose_shaped(request).splitlines() if line.startswith("- ")]
    assert bullets and all(states_limit(b) for b in bullets), bullets
    assert not any("forming a ‘constitution’" in b for b in bullets)


def test_a_title_page_saying_only_title_and_authors_is_no_card(text_of):
    from chat.retrieval.chunks import Chunk
    from chat.retrieval.search import front_matter

    text = text_of("1502.03167v3")
    page = text[: text.index("Abstract")]  # title, authors, their addresses
    abstract = _between(text, "Abstract", "1 Introduction")

    def chunk(body: str, start: int) -> Chunk:
        return Chunk(1, 1, body, 1, 1, "", start, start + len(body), 0.0, 0.0)

    assert front_matter(chunk(page, 0))
    assert not front_matter(chunk(abstract, len(page)))
    assert not front_matter(chunk(page + abstract, 0))  # the abstract's start joined to it

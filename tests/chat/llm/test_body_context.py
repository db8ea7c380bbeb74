"""What the composer may quote from a chunk of a paper's body, and what a sentence stands under
(chat.llm.extractive's body candidates), on the text of the shared arXiv PDFs as
papers.fulltext.parse reads it: a section's heading answers for the sentences below it, a
sentence opening a list for the list's items; fragments, the sentences opening lists and a
figure's printed text are never quoted."""


from chat.llm.base import SourceText
from chat.llm.extractive import answering_scores, compose_answer
from chat.llm.sentences import is_figure_text, passage_sentences
from chat.understanding.quantity import asks_for_quantity


def _between(text: str, start: str, end: str) -> str:
    at = text.index(start)
    return text[at : text.index(end, at)]


def _chunk(number: int, text: str, section: str, page: int = 1) -> SourceText:
    return SourceText(
        number=number, title="A paper", authors="A. Author", published="2017-06-12", text=text,
        arxiv_id="1706.03762", where=f"p. {page}, {section}", section=section,
    )


def _best(question: str, sources: list[SourceText], names=()) -> str:
    return max(answering_scores(question, sources, names).values())[1]


def test_the_sections_heading_answers_for_the_sentences_under_it(text_of):
    text = text_of("1706.03762v7")
    hardware = _chunk(
        1, _between(text, "5.2 Hardware and Schedule", "5.3 Optimizer"), "5.2 Hardware and Schedule"
    )
    big_model = _chunk(
        2,
        _between(text, "The Transformer (big) model trained for English-to-French", "6.2"),
        "6.1 Machine Translation",
    )
    # "hardware" is said only by the heading; "Transformer" and "trained" by the big model's
    # dropout sentence, which answered the question before.
    best = _best("What hardware was the Transformer trained on?", [big_model, hardware],
                 ["Transformer"])
    assert best == "We trained our models on one machine with 8 NVIDIA P100 GPUs."
    # A chunk starting inside the section knows its heading from the card's section alone.
    regularization = _chunk(
        1, _between(text, "Residual Dropout", "6 Results"), "5.4 Regularization", page=8
    )
    architecture = _chunk(
        2, _between(text, "3 Model Architecture", "3.1 Encoder and Decoder Stacks"),
        "3 Model Architecture",
    )
    best = _best("How was the Transformer regularised?", [architecture, regularization],
                 ["Transformer"])
    assert best.startswith("Residual Dropout We apply dropout")


def test_a_tables_cells_before_a_sentence_are_not_part_of_it(text_of):
    text = text_of("1706.03762v7")
    # Table 2's last rows are printed on page 8 before the section's first paragraph.
    sentences = passage_sentences(_between(text, "Transformer (base model) 27.3", "Label Smoothing"))
    assert any(s.startswith("Residual Dropout We apply dropout [33] to the output") for s in sentences)
    assert not any("27.3 38.1" in s and "Residual Dropout" in s for s in sentences)
    # A table's cells before its own caption are the table: they stay with it, each row a
    # sentence with its header and caption (not a wall of the three models' numbers).
    vit = passage_sentences(_between(text_of("2010.11929v2"), "Model Layers Hidden size", "We also"))
    table = next(s for s in vit if "ViT-Huge" in s)
    assert table.startswith("Table 1: ViT-Huge 32 1280 5120 16 632M (columns: Model Layers")
    assert "Details of Vision Transformer" in table and "ViT-Large" not in table
    assert not is_figure_text(table)


def test_a_lists_items_are_quoted_with_the_sentence_opening_the_list_as_context(text_of):
    text = text_of("2305.13048v1")
    inference = _chunk(
        1, _between(text, "I Inference results", "A comparison at 512 tokens"),
        "I Inference results", page=17,
    )
    scores = answering_scores("Which RWKV model sizes were benchmarked?", [inference], ["RWKV"])
    assert scores[1][1] == "RWKV: 169m, 430m, 1.4b, 3b, 7b, 14b"
    answer = compose_answer("Which model families and sizes were benchmarked?", [inference])
    assert "We benchmark the following model families and sizes" not in answer


def test_a_sentence_a_figure_cut_in_two_is_never_quoted(text_of):
    text = text_of("2302.07302v1")
    chunk = _chunk(
        1, _between(text, "2.2 Paper Recommendation and Exploration", "Inline citations"),
        "2.2 Paper Recommendation and Exploration", page=3,
    )
    scores = answering_scores("What did the evaluation use?", [chunk])
    assert all(not text.endswith("we used") for _, text in scores.values())
    assert "In our evaluation, we used [1]" not in compose_answer("What did the evaluation use?", [chunk])


def test_a_figures_printed_text_and_a_caption_naming_a_table_are_not_prose():
    assert is_figure_text(
        "10 M 30 M 100 M 300 M Number of JFT pre-training samples 30 40 50 60 70 Linear 5-shot "
        "ImageNet Top1 [%] ViT-L/16 ViT-L/32 ViT-B/32 ViT-b/32 ResNet50x1 (BiT) ResNet152x2 (BiT)"
    )
    assert is_figure_text("Table 3: Variations on the Transformer architecture.")
    assert not is_figure_text(
        "Table 2: The Transformer achieves better BLEU scores than previous state-of-the-art "
        "models on the English-to-German and English-to-French newstest2014 tests."
    )
    assert not is_figure_text("We trained our models on one machine with 8 NVIDIA P100 GPUs.")


def test_the_largest_model_asks_for_a_size():
    assert asks_for_quantity("What is the largest RWKV model?")
    assert asks_for_quantity("Which is the biggest OPT model?")
    assert not asks_for_quantity("What is the largest open problem in quantum computing?")


def test_a_section_only_its_heading_ties_to_the_question_is_quoted_as_the_answer(
    text_of, settings
):
    from chat.llm.base import AnswerRequest
    from chat.llm.shapes import compose_shaped
    from chat.understanding.intent import Intent

    settings.EMBEDDING_BACKEND = "hashing"
    text = text_of("1706.03762v7")
    regularization = _chunk(
        1, _between(text, "Residual Dropout", "6 Results"), "5.4 Regularization", page=8
    )
    architecture = _chunk(
        2, _between(text, "3 Model Architecture", "3.1 Encoder and Decoder Stacks"),
        "3 Model Architecture",
    )
    answer = compose_shaped(
        AnswerRequest(
            question="How was the Transformer regularised?",
            sources=[regularization, architecture],
            messages=[],
            intent=Intent("overview"),
        )
    )
    # Both kinds of regularisation the section names, residual dropout first.
    dropout = answer.index("Residual Dropout We apply dropout")
    assert dropout < answer.index("we employed label smoothing of value")


def test_a_footnote_is_a_sentence_of_its_own_without_its_mark(text_of):
    # "1Code and demo available at https://github.com/allenai/paper-plain\n2Example from …" at
    # the foot of Paper Plain's first page was quoted, marks and all, as one sentence.
    text = text_of("2203.00130v1")
    sentences = passage_sentences(_between(text, "In the words of one patient", "Who needs access"))
    assert "Code and demo available at https://github.com/allenai/paper-plain" in sentences
    assert not any(s.startswith(("1Code", "2Example")) for s in sentences)
    chunk = _chunk(1, _between(text, "In the words of one patient", "Who needs access"), "1 INTRODUCTION")
    best = _best("Is the code available?", [chunk])
    assert best == "Code and demo available at https://github.com/allenai/paper-plain"


def _paper_chunk(number, text, section, arxiv_id, page):
    return SourceText(
        number=number, title="A paper", authors="A. Author", published="2022-05-02", text=text,
        arxiv_id=arxiv_id, where=f"p. {page}, {section}", section=section,
    )


def test_the_section_a_heading_names_for_what_is_asked_is_the_answer(text_of, settings):
    """ "What limitations …?": the paper's "Limitations" section answers, not its introduction's
    "… mitigating their known limitations" nor the datasheet's "please describe these limits";
    the question's "the authors describe/acknowledge" only asks."""
    from chat.llm.base import AnswerRequest
    from chat.llm.shapes import compose_shaped
    from chat.understanding.intent import Intent

    settings.EMBEDDING_BACKEND = "minilm"
    rwkv = text_of("2305.13048v1")
    contributions = _paper_chunk(
        1, _between(rwkv, "Our contributions in this paper", "We release pretrained"),
        "1 Introduction", "2305.13048", 2,
    )
    limitations = _paper_chunk(
        2, _between(rwkv, "9 Limitations", "Acknowledgements"), "9 Limitations", "2305.13048", 9
    )
    best = _best(
        "What limitations of RWKV do the authors acknowledge?", [contributions, limitations],
        ["RWKV"],
    )
    assert best in passage_sentences(limitations.text)

    opt = text_of("2205.01068v1")
    datasheet = _paper_chunk(
        1, _between(opt, "Is there an erratum?", "Will older versions"), "C.7 Maintenance",
        "2205.01068", 23,
    )
    section = _paper_chunk(
        2, _between(opt, "5 Limitations", "6 Considerations for Release"), "5 Limitations",
        "2205.01068", 8,
    )
    request = AnswerRequest(
        question="What limitations of OPT-175B do the authors describe?",
        sources=[datasheet, section], messages=[], intent=Intent("overview"),
    )
    bullets = [line for line in compose_shaped(request).splitlines() if line.startswith("- ")]
    said = passage_sentences(section.text)
    # The section's sentences, one after another: what the limitations are.
    assert len(bullets) >= 3
    assert all(any(b.startswith(f"- {s[:40]}") for s in said) for b in bullets[:3])
    assert not any("please describe these limits" in b for b in bullets)


def test_words_that_only_ask_are_no_topic():
    from chat.llm.sentences import content_words

    words = content_words("What limitations of OPT-175B do the authors describe?")
    assert "authors" not in words and "describe" not in words and "limitations" in words
    assert "acknowledge" not in content_words("Which limitations do the authors acknowledge?")


def test_sections_that_credit_people_are_never_quoted(text_of):
    from chat.llm.extractive import quotable_body_sentences

    text = text_of("2305.13048v1")
    limitations = quotable_body_sentences(_between(text, "9 Limitations", "Alon Albalak"))
    assert any("minutiae" in s for s in limitations)
    assert not any("Discord" in s or "EleutherAI" in s for s in limitations)
    # An appendix's "A Author Contributions" states RWKV's sizes, as who trained them.
    contributions = _between(text, "A Author Contributions", "B ")
    assert not any("0.1B to 14B" in s for s in quotable_body_sentences(contributions))
    assert not quotable_body_sentences("Bo Peng trained RWKV models from 0.1B to 14B.",
                                       "A Author Contributions")


def test_a_paragraph_a_paper_repeats_is_quoted_once(text_of, settings):
    from chat.llm.base import AnswerRequest
    from chat.llm.shapes import compose_shaped
    from chat.understanding.intent import Intent

    settings.EMBEDDING_BACKEND = "minilm"
    text = text_of("2301.01531v1")
    paragraph = "Datasets.For the quantitative evaluation"
    body = _paper_chunk(1, _between(text, paragraph, "Baselines."), "4 Experiments", "2301.01531", 6)
    at = text.index(paragraph, text.index(paragraph) + 1)  # the supplement's copy
    supplement = _paper_chunk(2, text[at : at + 400], "Supplementary", "2301.01531", 14)
    request = AnswerRequest(
        question="Which datasets is MoBYv2AL evaluated on?", sources=[body, supplement],
        messages=[], intent=Intent("overview"),
    )
    assert compose_shaped(request).count("four well-known image classification datasets") == 1


def test_a_table_printed_after_the_acknowledgements_is_still_quoted(text_of):
    from chat.llm.extractive import quotable_body_sentences

    # ULSA's tables follow its acknowledgements: the chunk still stands under that heading.
    text = text_of("2201.09329v1")
    tables = _between(text, "Identification of synthesis sentences", "Table 2")
    quotable = quotable_body_sentences(tables + "Table 2: Fleiss' kappa scores.", "Acknowledgements")
    assert any("Action terms tagging 0.83" in s for s in quotable)


def test_a_paragraphs_run_in_heading_is_its_context_not_a_quote(text_of):
    from chat.llm.extractive import quotable_body_sentences, run_in_heading

    # MoBYv2AL (BMVC style): "Recent Advances in Active Learning. Recent advancement in AL …".
    text = text_of("2301.01531v1")
    related = _between(text, "Recent Advances in Active Learning.", "most revised")
    quotable = quotable_body_sentences(related)
    assert "Recent Advances in Active Learning." not in quotable
    assert any(s.startswith("Recent advancement in AL are") for s in quotable)
    # "Baselines." names what the next sentence lists: a question after baselines finds it.
    baselines = _paper_chunk(
        1, _between(text, "Baselines. We compared", "4.1 Quantitative"), "4 Experiments",
        "2301.01531", 7,
    )
    best = _best("Which active learning methods does MoBYv2AL compare against?", [baselines])
    assert best.startswith("We compared our method MoBYv2AL with a wide range of methods")
    assert run_in_heading("Baselines.") and not run_in_heading("AL settings.")
    assert not run_in_heading("We use Adam.")


def test_a_printed_prompt_is_no_quote(text_of):
    from chat.llm.extractive import quotable_body_sentences

    # RWKV's appendix prints its model's answers: "RWKV-4-Raven-14B / Summarize the following
    # paragraph. / <The Abstract of this paper goes here> / The paper presents …".
    text = text_of("2305.13048v1")
    at = text.index("Summarize the following paragraph.")
    printed = text[at - 40 : at + 400]
    assert not any("The paper presents a novel architecture" in s
                   for s in quotable_body_sentences(printed))
    assert quotable_body_sentences("The inner product <x, y> is bounded by one.")


def test_not_limited_to_says_nothing_of_limitations(text_of):
    from chat.llm.sentences import terms

    text = text_of("2212.08073v1")
    examples = "Examples of harm include but are not limited to racism, sexism, toxicity"
    assert examples in " ".join(text.split())
    limits = set(terms("limitations"))
    assert not limits & set(terms(examples))
    assert limits <= set(terms("The linear attention of RWKV may limit the model's performance"))


def _overview(question: str, sources: list[SourceText]) -> str:
    from chat.llm.base import AnswerRequest
    from chat.llm.shapes import compose_shaped
    from chat.understanding.intent import Intent

    request = AnswerRequest(
        question=question, sources=sources, messages=[], intent=Intent("overview"),
        analysis={"query": question},
    )  # fmt: skip
    return compose_shaped(request)


def test_a_bulleted_list_answering_which_things_is_quoted_whole_in_order(text_of, settings):
    # "What baselines was CiteSee compared against …?": each item says only "baseline"; one
    # quoted alone names one of the three.
    settings.EMBEDDING_BACKEND = "hashing"
    text = text_of("2302.07302v1")
    strategies = _chunk(
        1, _between(text, "The four strategies are as follows:", "Since different strategies"),
        "5 STUDY 1: DISCOVER RELEVANT",
    )  # fmt: skip
    answer = _overview("What baselines are used?", [strategies])
    said = [answer.index(item) for item in ("Linear Reading:", "Global Citation Count:",
                                            "Specter Similarity")]  # fmt: skip
    assert said == sorted(said)


def test_a_bulleted_items_label_alone_on_its_line_opens_the_item(text_of, settings):
    # "• Microsoft Research Paraphrase Corpus (MSRPC):" then "MSRPC (Dolan, Quirk, and Brockett
    # 2004) is another paraphrase detection corpus." on the next line: that sentence is the item.
    settings.EMBEDDING_BACKEND = "hashing"
    text = text_of("2202.00535v1")
    datasets = _chunk(
        1, _between(text, "We use four datasets", "Evaluation Metrics"), "Experiments", page=4
    )
    answer = _overview("Which datasets are used to evaluate paraphrase generation?", [datasets])
    for item in ("(QQP 50K)", "(QQP 140K)", "MSRPC (Dolan", "ParaSCI-ACL (Dong"):
        assert item in answer, answer


def test_a_list_of_the_papers_contributions_is_not_quoted_whole(text_of, settings):
    # RWKV's contributions are bulleted; one of them answers "On which dataset …" ("We release
    # pretrained model … trained on the Pile"), the others are no datasets.
    settings.EMBEDDING_BACKEND = "hashing"
    text = text_of("2305.13048v1")
    at = text.index("We release pretrained model")
    contributions = _chunk(
        1, text[text.rindex("•", 0, text.rindex("•", 0, at)) - 200 : at + 200], "1 Introduction"
    )
    answer = _overview("On which dataset were RWKV models trained?", [contributions])
    assert "trained on the Pile" in answer
    assert "We propose a new attention mechanism" not in answer

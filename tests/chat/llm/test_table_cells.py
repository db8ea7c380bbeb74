"""A table's cells read as a sentence (its printed cells run together before its caption, as a
PDF's reading order gives them) answer only by what the cells themselves say, on the text of the
shared arXiv PDFs as papers.fulltext.parse reads it: the caption's words meet the question for
every cell alike, and the paper's own name is in every row of its results."""

from chat.llm.base import SourceText
from chat.llm.extractive import answering_scores
from chat.llm.sentences import (
    answers_nothing,
    is_float_text,
    labels_a_size,
    passage_sentences,
    table_cells,
    terms,
)
from papers.fulltext.tables import RowSentence


def _chunk(number: int, text: str, arxiv_id: str, section: str, page: int) -> SourceText:
    return SourceText(
        number=number, title="A paper", authors="A. Author", published="2022-02-01", text=text,
        arxiv_id=arxiv_id, where=f"p. {page}, {section}", section=section,
    )  # fmt: skip


def _between(text: str, start: str, end: str) -> str:
    at = text.index(start)
    return text[at : text.index(end, at) + len(end)]


def _best(question: str, sources: list[SourceText], names=()) -> str:
    return max(answering_scores(question, sources, names).values())[1]


def test_a_results_tables_cells_do_not_answer_which_datasets(text_of):
    text = text_of("2202.00535v1")
    table = _chunk(
        1, _between(text, "RAPT 90.56", "excluding Copy and Ground Truth."), "2202.00535",
        "Experiments", 6,
    )  # fmt: skip
    cells = next(s for s in passage_sentences(table.text) if "Table 5:" in s and "RAPT 90" in s)
    assert table_cells(cells).startswith("RAPT 90.56 42.83")
    assert "Comparison of different approaches" not in table_cells(cells)
    datasets = _chunk(
        2, _between(text, "We use four datasets", "another\nparaphrase detection corpus."),
        "2202.00535", "Experiments", 4,
    )  # fmt: skip
    question = "Which datasets are used to evaluate RAPT paraphrase generation?"
    # Table 5's caption says "paraphrase generation on different datasets", its cells only
    # "RAPT", the paper's own name: before, the wall of its numbers opened the answer.
    best = _best(question, [table, datasets], ["RAPT"])
    assert "90.56" not in best
    assert "dataset" in best or "corpus" in best


def test_a_cell_saying_what_is_asked_for_labels_numbers(text_of):
    text = text_of("2212.08410v3")
    table = _chunk(
        1, _between(text, "Baseline\nT5 XXL", "(CoT)."), "2212.08410",
        "5.1 Arithmetic reasoning", 3,
    )  # fmt: skip
    commonsense = _chunk(
        2, _between(text, "4.1.2 Commonsense Reasoning", "previously mentioned."), "2212.08410",
        "4.1.2 Commonsense Reasoning", 3,
    )  # fmt: skip
    question = (
        "On which commonsense reasoning dataset are the T5 models distilled from chains of "
        "thought benchmarked?"
    )
    cells = next(s for s in passage_sentences(table.text) if "Table 1:" in s)
    assert "Dataset Size" in table_cells(cells)
    assert answers_nothing(cells, terms(question), question)
    best = _best(question, [table, commonsense])
    assert "StrategyQA dataset" in best


def test_a_tables_cells_naming_what_is_asked_still_answer(text_of):
    # DPR's Table 1 is how its body names the QA datasets it is evaluated on.
    text = text_of("2004.04906v3")
    table = _between(text, "Dataset Train Dev Test", "QA dataset.")
    # Each row a sentence of its own (its header does not surely name its four numbers, yet
    # each row stands alone), its label a dataset's name as the header's "Dataset" says.
    rows = [s for s in passage_sentences(table) if s.startswith("Table 1:")]
    assert len(rows) == 5 and all(isinstance(row, RowSentence) for row in rows)
    cells = next(row for row in rows if "CuratedTREC" in row)
    assert table_cells(cells) == "CuratedTREC 1,353 1,125 133 694"
    question = "Which question answering datasets is DPR evaluated on?"
    assert not answers_nothing(cells, terms(question), question)
    # Without "which datasets", a row's label alone answers nothing of what is asked.
    other = "Which retriever does DPR compare against?"
    assert answers_nothing(cells, terms(other), other)


def test_prose_pointing_at_a_table_is_no_tables_cells():
    assert table_cells("We report the results of the 3 runs in Table 2: all improve.") is None
    assert table_cells("Table 2: Results on 3 datasets with 4 seeds and 5 runs.") is None


def test_a_rows_reference_number_is_none_of_its_cells():
    # "Maxout [10] 9.38" met "CIFAR-10" by its reference's number.
    row = RowSentence(
        "Table 6: method Maxout, error (%) 9.38 (Classification error).", "Maxout [10] 9.38"
    )
    question = "What test error does the 110-layer ResNet reach on CIFAR-10?"
    assert answers_nothing(row, terms(question), question)


def test_a_tables_words_run_into_its_caption_are_the_floats_text_not_prose(text_of):
    text = text_of("2202.00535v1")
    examples = _chunk(
        1, _between(text, "Input Why do all", "from Quora Question Pairs dataset."), "2202.00535",
        "Introduction", 3,
    )  # fmt: skip
    printed = next(s for s in passage_sentences(examples.text) if "Table 1:" in s)
    # Words, not numbers: no table of values, yet the float's printed text all the same.
    assert table_cells(printed) is None and is_float_text(printed)
    assert is_float_text("Table 1: Examples of generated paraphrases.")
    assert not is_float_text("We use four datasets, as Table 1 shows, for paraphrase generation.")
    assert not is_float_text(
        "MSRPC (Dolan, Quirk, and Brockett 2004) is another paraphrase detection corpus."
    )


def test_rows_said_alone_keep_their_captions_sentences_and_pair_no_cell(text_of):
    # ViT's Table 4 (fine-tuning): its rows are sentences of their own, its caption's second
    # sentence ("… a batch size of 512, no weight decay …") one too, as when the table was one
    # sentence; its last row is not paired with the header ("2 500" is 2,500 steps).
    table = _between(text_of("2010.11929v2"), "Dataset Steps Base LR", "resolution is 384.")
    sentences = passage_sentences(table)
    rows = [s for s in sentences if isinstance(s, RowSentence)]
    assert len(rows) == 6 and all("(columns: Dataset Steps Base LR)" in row for row in rows)
    assert rows[-1].startswith("Table 4: VTAB (19 tasks) 2 500 0.01 (columns:")
    assert any(
        s.startswith("All models are fine-tuned with cosine learning rate decay")
        and not isinstance(s, RowSentence)
        for s in sentences
    )


def test_a_row_said_again_keeps_what_names_its_cells_and_drops_the_caption(text_of):
    # Quoted after another row of its table, a row says its cells with the header's names when
    # they pair ("model ResNet-34 B, top-1 err. 24.52, …"), its bare cells when they do not.
    resnet = passage_sentences(_between(text_of("1512.03385v1"), "model top-1 err.", "validation."))
    row = next(s for s in resnet if isinstance(s, RowSentence) and "ResNet-34 B" in s)
    assert row.brief == "Table 3: model ResNet-34 B, top-1 err. 24.52, top-5 err. 7.46."
    dpr = passage_sentences(_between(text_of("2004.04906v3"), "Dataset Train Dev Test", "QA dataset."))
    row = next(s for s in dpr if isinstance(s, RowSentence) and "TriviaQA" in s)
    assert row.brief == "Table 1: TriviaQA 78,785 60,413 8,837 11,313."


def test_a_sentence_run_into_an_authors_footnote_is_never_quoted(text_of):
    from chat.llm.extractive import quotable_body_sentences

    # The Max-Cut benchmark's first page: "… technological developments. ∗ mdupont@rigetti.com
    # Here, we use a gate-based superconducting quantum computer …" was quoted as one sentence
    # for "How many qubits did they use on hardware?".
    text = text_of("2404.17579v2")
    page = _between(text, "Quantum annealers have also", "several\nthousand variables.")
    assert "mdupont@rigetti.com" in page
    quoted = quotable_body_sentences(page, "I. INTRODUCTION")
    assert quoted[0].startswith("Quantum annealers have also been found")
    assert not any("rigetti.com" in s for s in quoted)


def test_a_table_cut_by_the_chunker_keeps_its_head_and_its_size_row_answers(text_of):
    from chat.llm.base import AnswerRequest
    from chat.llm.shapes import compose_shaped
    from chat.understanding.intent import Intent
    from papers.fulltext.tables import with_table_head

    text = text_of("1706.03762v7")
    # A chunk opening inside Table 3, at its group "(D)": its caption and header are in the
    # chunk before it, and "big 6 1024 4096 16 0.3 300K 4.33 26.4 213" alone says nothing of
    # what 213 is.
    start = text.index("(D)\n0.0 5.77")
    end = text.index("In Table 3 rows (A)", start)
    headed = with_table_head(text, start, end)
    assert headed is not None and headed.startswith("Table 3: Variations on the Transformer")
    assert "params" in headed and headed.rstrip().endswith("We present these results in Table 3.")
    assert with_table_head(text, end, end + 500) is None  # prose: as it is
    # Among rows that only vary the base model by groups, the big model's own row is a
    # sentence of its own, and answers for its size.
    rows = [s for s in passage_sentences(headed) if isinstance(s, RowSentence)]
    assert [s.row.split()[0] for s in rows] == ["big"]
    # (Only a size's row: chat.retrieval.chunks heads a chunk for it alone.)
    assert labels_a_size(rows[0].row) and not labels_a_size("Baseline (ORQA) 31.3 13.9")
    request = AnswerRequest(
        question="How many parameters does the big Transformer have?",
        sources=[_chunk(1, headed, "1706.03762", "6.2 Model Variations", 9)], messages=[],
        intent=Intent("overview"),
    )
    bullets = [line for line in compose_shaped(request).splitlines() if line.startswith("- ")]
    assert bullets[0].startswith("- Table 3: big 6 1024 4096 16 0.3 300K 4.33 26.4 213"), bullets

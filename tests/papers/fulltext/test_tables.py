"""Tables in PDFium's text (papers.fulltext.tables) on the shared arXiv PDFs: found with their
caption and header, kept whole in one chunk, each row a sentence that says what its numbers are."""

import re
from functools import cache

import pytest

from chat.llm.sentences import passage_sentences
from papers.embeddings import get_embedder
from papers.fulltext.chunk import chunk_text
from papers.fulltext.parse import parse_pdf
from papers.fulltext.tables import find_tables
from papers.indexing.passages import split_passages

OPT_ROW = "175B 96 96 12288 1.2e−4 2M"


@cache
def _parsed(path):
    return parse_pdf(path.read_bytes())


@pytest.fixture
def opt(shared_data):
    return _parsed(shared_data / "arxiv-pdf" / "2205.01068v1.pdf")


@pytest.fixture
def resnet(shared_data):
    return _parsed(shared_data / "arxiv-pdf" / "1512.03385v1.pdf")


def test_a_table_is_found_with_its_caption_below_and_its_header_above(opt):
    table = next(t for t in find_tables(opt.text) if t.label == "Table 1")
    assert table.header == "Model #L #H dmodel LR Batch"
    assert table.caption.startswith("Table 1: Model architecture details.")
    rows = [opt.text[a:b] for a, b in table.rows]
    assert rows[0] == "125M 12 12 768 6.0e−4 0.5M" and rows[-1] == OPT_ROW and len(rows) == 8
    assert opt.page_of(table.start) == opt.page_of(table.end) == 2
    assert table.row_sentence(OPT_ROW) == (
        "Table 1: Model 175B, #L 96, #H 96, dmodel 12288, LR 1.2e−4, Batch 2M (Model architecture "
        "details. We report the number of layers (#L), number of attention heads (#H), and the "
        "embedding size (dmodel). We also report the peak Learning Rate (LR) and global batch "
        "size in number of tokens (Batch))."
    )


def test_a_row_whose_label_is_two_words_pairs_its_values_with_the_header(resnet):
    table = next(t for t in find_tables(resnet.text) if t.label == "Table 3")
    assert table.header == "model top-1 err. top-5 err."
    caption = "Error rates (%, 10-crop testing) on ImageNet validation"
    assert table.row_sentence("ResNet-34 B 24.52 7.46") == (
        f"Table 3: model ResNet-34 B, top-1 err. 24.52, top-5 err. 7.46 ({caption})."
    )
    # A row the header does not name one to one is given with the whole header, and reference
    # numbers ("[41]") never read as the answer's citations.
    assert table.row_sentence("VGG-16 [41] 28.07 9.33 1.2") == (
        f"Table 3: VGG-16 28.07 9.33 1.2 (columns: model top-1 err. top-5 err.) ({caption})."
    )


def test_prose_with_numbers_and_captionless_number_runs_are_no_table():
    text = "\n".join(
        [
            "We train for 10 epochs with a batch size of 256 and a learning rate of 0.1.",
            "3.1 Results",
            "0.2 0.4 0.6 0.8",  # an axis of a figure: no caption, no table
            "10 20 30 40",
            "Figure 2: Loss curves.",
        ]
    )
    assert find_tables(text) == []
    assert passage_sentences(text)[0].startswith("We train for 10 epochs")


def test_the_chunk_holding_a_table_holds_its_caption_and_header_on_its_page(opt, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    chunks = chunk_text(opt, get_embedder())
    holding = [c for c in chunks if OPT_ROW in c.text(opt.text)]
    assert len(holding) == 1
    chunk = holding[0]
    text = chunk.text(opt.text)
    assert "Model #L #H dmodel LR Batch" in text and "Table 1: Model architecture details." in text
    # The table heads page 2 (the chunk began on page 1): its span holds the row's page.
    assert opt.page_of(opt.text.index(OPT_ROW)) == 2 and chunk.page <= 2 == chunk.page_end


def test_a_table_row_is_a_sentence_that_says_its_caption_and_header(opt):
    table = next(t for t in find_tables(opt.text) if t.label == "Table 1")
    passage = opt.text[table.start : table.end + 400]
    sentences = passage_sentences(passage)
    row = next(s for s in sentences if s.startswith("Table 1: Model 13B"))
    assert row.startswith("Table 1: Model 13B, #L 40, #H 40, dmodel 5120, LR 1.0e−4, Batch 4M (")
    assert row.row == "13B 40 40 5120 1.0e−4 4M"  # its own cells, for matching a question
    # The prose after the table is split as before.
    assert any(s.startswith("guidelines around responsible AI") for s in sentences)


def test_a_span_kept_whole_is_never_cut_and_a_long_one_only_between_lines():
    def count(text: str) -> int:
        return len(text.split())

    prose = "A sentence of exactly seven words here. " * 3
    # "err." ends a "sentence" for the packer: without keep_whole the header closes the first
    # window and its rows open the next.
    table = "Model top-1 err.\nsmall 1 0.1\nbase 2 0.2\nlarge 3 0.3\nTable 1. Sizes.\n"
    text = prose + table + prose
    at = (len(prose), len(prose) + len(table) - 1)
    cut = split_passages(text, count, max_tokens=24, overlap_tokens=0)
    assert cut[0].text(text).endswith("Model top-1 err.")
    spans = split_passages(text, count, max_tokens=24, overlap_tokens=0, keep_whole=[at])
    assert any(table.strip() in s.text(text) for s in spans)
    assert all(s.end <= at[0] or s.start >= at[1] or table.strip() in s.text(text) for s in spans)
    # Too long for the window: cut between rows, never inside one.
    spans = split_passages(text, count, max_tokens=10, overlap_tokens=0, keep_whole=[at])
    inside = [s.text(text) for s in spans if at[0] <= s.start and s.end <= at[1] + 1]
    assert len(inside) > 1 and all(
        line in table.splitlines() for piece in inside for line in piece.splitlines()
    )


def test_a_row_sentence_survives_the_copies_a_card_goes_through():
    import copy
    import json
    import pickle

    from papers.fulltext.tables import RowSentence

    row = RowSentence("Table 1: Model 175B, Batch 2M (Sizes).", "175B 2M")
    for copied in (copy.deepcopy({"quote": row})["quote"], pickle.loads(pickle.dumps(row))):
        assert copied == row and copied.row == "175B 2M"
    assert json.loads(json.dumps({"quote": row})) == {"quote": str(row)}


def test_numbers_are_paired_with_names_only_when_the_header_surely_names_them(shared_data):
    # RAG's "MSMARCO Jeopardy QGen": two columns or three? No label column is named first.
    rag = _parsed(shared_data / "arxiv-pdf" / "2005.11401v4.pdf")
    table = next(t for t in find_tables(rag.text) if t.label == "Table 5")
    sentence = table.row_sentence(rag.text[slice(*table.rows[0])])
    assert "(columns: MSMARCO Jeopardy QGen)" in sentence and "Jeopardy 89.6%" not in sentence
    # The Transformer's Table 3 has a header on three lines: given whole, never paired.
    transformer = _parsed(shared_data / "arxiv-pdf" / "1706.03762v7.pdf")
    table = next(t for t in find_tables(transformer.text) if t.label == "Table 3")
    base = next(
        transformer.text[a:b] for a, b in table.rows if transformer.text[a:b].startswith("base")
    )
    assert table.row_sentence(base).startswith(f"Table 3: {base} (columns: N dmodel dff")


def test_a_table_whose_header_does_not_name_its_rows_stays_one_sentence(shared_data):
    # "Teaching Small Language Models to Reason", Table 3: "Dataset Size 1648 1648 1319 1319"
    # under "StrategyQA …": said alone, the row would lose the dataset it belongs to.
    paper = _parsed(shared_data / "arxiv-pdf" / "2212.08410v3.pdf")
    table = next(t for t in find_tables(paper.text) if t.label == "Table 3")
    assert not table.names_its_rows(paper.text)
    sentences = passage_sentences(paper.text[table.start - 200 : table.end + 50])
    blob = next(s for s in sentences if "1648 1648 1319 1319" in s)
    assert "StrategyQA 68.12" in blob and not blob.startswith("Table 3:")
    opt_table = next(t for t in find_tables(_parsed_opt(shared_data).text) if t.label == "Table 1")
    assert opt_table.names_its_rows(_parsed_opt(shared_data).text)


def _parsed_opt(shared_data):
    return _parsed(shared_data / "arxiv-pdf" / "2205.01068v1.pdf")


def test_a_text_without_a_caption_line_is_not_searched_and_no_table_is_lost(opt, resnet, monkeypatch):
    from papers.fulltext import tables

    texts = [opt.text, resnet.text, "  Table 2: Results.\n12 13 14\n15 16 17", "See Table 2 above."]
    texts += [doc.text[i : i + 1600] for doc in (opt, resnet) for i in range(0, len(doc.text), 700)]
    found = [find_tables(text) for text in texts]
    monkeypatch.setattr(tables, "_CAPTION_LINE", re.compile(""))  # every text searched
    assert [find_tables(text) for text in texts] == found
    assert any(found) and not found[3]


def test_a_caption_above_a_header_of_many_short_lines_takes_the_rows_below_it(shared_data):
    # REALM prints its captions above its tables; Table 2's header is five lines ("Ablation
    # Exact / Match / Zero-shot / Retrieval / Recall@5"), and Table 1's rows end just above its
    # caption: each caption takes the rows below it, its ablations' rows are sentences of their
    # own ("REALM with random uniform masks 32.3 24.2": a label of words, then its values).
    realm = _parsed(shared_data / "arxiv-pdf" / "2002.08909v1.pdf")
    tables = {t.label: t for t in find_tables(realm.text)}
    ablation = tables["Table 2"]
    assert ablation.header == "Ablation Exact Match Zero-shot Retrieval Recall@5"
    rows = [realm.text[a:b] for a, b in ablation.rows]
    assert rows[0] == "REALM 38.2 38.5" and rows[-1] == "30× stale MIPS 28.7 15.1"
    assert "REALM with random uniform masks 32.3 24.2" in rows and len(rows) == 7
    assert tables["Table 1"].header.startswith("Name Architectures Pre-training NQ")
    assert tables["Table 1"].caption.endswith("Our model, REALM, outperforms all existing systems.")
    sentences = passage_sentences(realm.text[ablation.start : ablation.end + 1])
    assert (
        "Table 2: REALM with random uniform masks 32.3 24.2 (columns: Ablation Exact Match "
        "Zero-shot Retrieval Recall@5) (Ablation experiments on NQ’s development set)."
    ) in sentences


def test_a_row_whose_label_sits_on_the_line_above_is_one_row(shared_data):
    # MuZero's Table 1 prints "UNREALa" on its own line over "[19] 250%a 880%a 250M – –" (a
    # footnote's letter after the percentages): still one row, and every row a sentence.
    muzero = _parsed(shared_data / "arxiv-pdf" / "1911.08265v2.pdf")
    table = next(t for t in find_tables(muzero.text) if t.label == "Table 1")
    rows = [" ".join(muzero.text[a:b].split()) for a, b in table.rows]
    assert "UNREALa [19] 250%a 880%a 250M – –" in rows and len(rows) == 8
    sentences = passage_sentences(muzero.text[table.start : table.end + 1])
    assert (
        "Table 1: MuZero 2041.1% 4999.2% 20.0B 12 hours 1M (columns: Agent Median Mean Env. "
        "Frames Training Time Training Steps)"
    ) in " ".join(sentences)
    assert not any("Ape-X" in s and "R2D2" in s for s in sentences)  # no row run into another


def test_a_row_printed_over_lines_while_a_parenthesis_is_open_is_one_row(shared_data):
    # PDFium puts an exponent on a line of its own ("Self-Attention O(n" / "2" / "· d) O(1)
    # O(1)"): the Transformer's Table 1 was no table, its caption quoted for "What is the
    # complexity of self-attention per layer?" and its rows never.
    transformer = _parsed(shared_data / "arxiv-pdf" / "1706.03762v7.pdf")
    table = next(t for t in find_tables(transformer.text) if t.label == "Table 1")
    sentences = passage_sentences(transformer.text[table.start : table.end + 1])
    rows = [s.row for s in sentences if s.startswith("Table 1:")]
    assert rows == [
        "Self-Attention O(n² · d) O(1) O(1)",
        "Recurrent O(n · d²) O(n) O(n)",
        "Convolutional O(k · n · d²) O(1) O(logk(n))",
        "Self-Attention (restricted) O(r · n · d) O(1) O(n/r)",
    ]
    assert "Complexity per Layer" in sentences[0] and "per-layer complexity" in sentences[0]
    # RWKV's Table 1 runs its cells over lines too ("O(T d + d" / "2" / ")").
    rwkv = _parsed(shared_data / "arxiv-pdf" / "2305.13048v1.pdf")
    table = next(t for t in find_tables(rwkv.text) if t.label == "Table 1")
    rows = [rwkv.text[a:b] for a, b in table.rows]
    assert len(rows) == 7 and table.header == "Model Time Space"
    assert table.row_sentence(rows[2]).startswith(
        "Table 1: Model Linear Transformers, Time O(T d2), Space O(T d + d²) (Complexity"
    )

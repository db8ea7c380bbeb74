"""A card marks the passage's own text of its answering sentence (chat.llm.sentences.passage_span):
sentences are split with their whitespace collapsed and a table row is said with its header and
caption, while the card shows the chunk as the PDF's lines were read."""

from functools import cache

import pytest

from chat.llm.sentences import passage_sentences, passage_span
from papers.fulltext.parse import parse_pdf
from papers.fulltext.tables import find_tables


@cache
def _opt_text(path):
    return parse_pdf(path.read_bytes()).text


@pytest.fixture
def opt_text(shared_data):
    return _opt_text(shared_data / "arxiv-pdf" / "2205.01068v1.pdf")


def test_a_sentence_across_the_pdfs_line_breaks_is_found_with_them(opt_text):
    start = opt_text.index("2.2 Training Setup")
    passage = opt_text[start : start + 900]
    sentence = next(s for s in passage_sentences(passage) if "AdamW optimizer" in s)
    assert sentence not in passage  # the split collapsed a line break: a plain find misses it
    span = passage_span(passage, sentence)
    assert "\n" in span and span in passage
    assert " ".join(span.split()) == sentence


def test_a_table_rows_sentence_is_found_as_the_rows_line(opt_text):
    table = next(t for t in find_tables(opt_text) if t.label == "Table 1")
    passage = opt_text[table.start : table.end]
    row = next(s for s in passage_sentences(passage) if s.startswith("Table 1: Model 175B"))
    assert passage_span(passage, row) == "175B 96 96 12288 1.2e−4 2M"


def test_a_sentence_the_passage_does_not_hold_marks_nothing():
    assert passage_span("We use Adam.\nWe train for 10 epochs.", "We use SGD.") == ""
    assert passage_span("We use Adam.", "") == ""
    # Punctuation is matched as itself, not as a pattern.
    assert passage_span("Costs (a+b)*2 in all.", "Costs (a+b)*2 in all.") == "Costs (a+b)*2 in all."

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


def test_the_span_is_the_first_match_of_the_words_with_any_whitespace_between_them():
    """passage_span finds the words in the passage with its whitespace collapsed (compiling a
    regex per sentence cost more than the rest of quoting a card): the same span as the regex
    it replaced, for any text, Unicode whitespace and partial first and last words included."""
    import random
    import re

    def by_regex(passage, sentence):
        found = re.search(r"\s+".join(map(re.escape, sentence.split())), passage)
        return found.group(0) if found and sentence.split() else ""

    rng = random.Random(10)
    pieces = ["a", "b", "ab", "x.", "(1)", "[2]", " ", "  ", "\n", "\t", "\u00a0", "\u2003",
              "\x1c", "\u200b", "é", "\r\n", "*", "\\"]  # fmt: skip
    for _ in range(20000):
        passage = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        words = passage.split()
        i = rng.randint(0, len(words))
        sentence = " ".join(words[i : rng.randint(i, len(words))])
        if sentence and rng.random() < 0.5:  # cut inside its first or last word
            sentence = sentence[rng.randint(0, len(sentence) - 1) :]
        if rng.random() < 0.2:
            sentence = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        assert passage_span(passage, sentence) == by_regex(passage, sentence), (passage, sentence)

"""Splitting a paper's text into passages that fit the model window, with nothing cut off."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from papers.indexing.passages import document_text, passage_text, split_passages

from .conftest import long_abstract


def words_count(text: str) -> int:
    """A stand-in tokenizer for the splitting logic: one token per word, plus two specials."""
    return len(text.split()) + 2


def assert_covers(text: str, spans) -> None:
    """Every non-whitespace character lies inside some span: nothing silently cut off."""
    covered = bytearray(len(text))
    for span in spans:
        covered[span.start : span.end] = b"\x01" * (span.end - span.start)
    missing = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
    assert not missing, f"characters outside every passage: {text[missing[0] : missing[0] + 40]!r}"


def test_document_text_joins_title_and_abstract():
    assert document_text(" A title ", "\n  The abstract.\n") == "A title\n\nThe abstract."
    assert document_text("Only a title", "") == "Only a title"


def test_short_text_is_one_passage_spanning_all_of_it():
    text = document_text("A title", "One sentence. Two sentences.")
    assert split_passages(text, words_count, 256) == [
        type(split_passages("x", words_count, 256)[0])(0, 0, len(text))
    ]


def test_empty_text_gives_no_passage():
    assert split_passages("  \n ", words_count, 256) == []


def test_long_text_is_split_on_sentences_within_the_window_and_covers_everything(minilm):
    text = document_text("A long paper", long_abstract())
    spans = split_passages(text, minilm.count_tokens, minilm.max_tokens)
    assert len(spans) >= 4
    assert [s.position for s in spans] == list(range(len(spans)))
    for span in spans:
        assert minilm.count_tokens(span.text(text)) <= minilm.max_tokens
        assert span.text(text)[-1] in ".l"  # ends at a sentence end ("...percent.", title)
    assert_covers(text, spans)
    # Consecutive passages overlap by a sentence, so no sentence is only seen cut in two.
    assert all(b.start < a.end for a, b in zip(spans, spans[1:], strict=False))
    assert spans[0].start == 0 and spans[-1].end == len(text)


def test_a_sentence_longer_than_the_window_is_cut_between_words():
    text = " ".join(f"word{i}" for i in range(1000))  # no sentence boundary at all
    spans = split_passages(text, words_count, 100)
    assert len(spans) >= 10
    for span in spans:
        assert words_count(span.text(text)) <= 100
        assert re.fullmatch(r"word\d+( word\d+)*", span.text(text))  # never inside a word
    assert_covers(text, spans)


def test_a_word_longer_than_the_window_is_cut_between_characters():
    def chars_count(text: str) -> int:
        return len(text) // 4 + 2

    text = "Intro sentence. " + "x" * 2000 + " tail."
    spans = split_passages(text, chars_count, 64)
    for span in spans:
        assert chars_count(span.text(text)) <= 64
    assert_covers(text, spans)


def test_passage_text_is_derived_from_the_paper():
    class Paper:
        title, abstract = "Title", "Abstract. " * 400

    text = document_text(Paper.title, Paper.abstract)
    spans = split_passages(text, words_count, 64)
    assert passage_text(Paper, spans[1]) == text[spans[1].start : spans[1].end]


@pytest.mark.parametrize("max_tokens, overlap", [(4, 0), (256, 200), (256, -1)])
def test_bad_window_or_overlap_is_refused(max_tokens, overlap):
    with pytest.raises(ValueError):
        split_passages("text", words_count, max_tokens, overlap_tokens=overlap)


sentence = st.text(alphabet="abc de.!?\n", min_size=0, max_size=80)


@settings(max_examples=150, deadline=None)
@given(st.lists(sentence, max_size=40), st.integers(min_value=8, max_value=40))
def test_any_text_is_covered_by_passages_that_fit(parts, max_tokens):
    text = " ".join(parts)

    def count(piece: str) -> int:  # a harsh tokenizer: every 3 characters are a token
        return len(piece) // 3 + 2

    spans = split_passages(text, count, max_tokens, overlap_tokens=3)
    for span in spans:
        assert count(span.text(text)) <= max_tokens
        assert span.start < span.end
    assert_covers(text, spans)
    starts = [s.start for s in spans]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)

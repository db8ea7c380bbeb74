"""Loops in generated text are found and cut to one copy; ordinary text is left alone."""

import pytest

from chat.llm.repetition import loop_start, trim_loop
from chat.pipeline.citations import only_citations


@pytest.mark.parametrize(
    "text, kept",
    [
        # The loop, ending mid-word as a stream does.
        ("Diffusion models write text [1]. " + "linguistics, " * 300 + "lingu",
         "Diffusion models write text [1]. linguistics,"),
        ("We show A [1]. " + "[1] " * 12, "We show A [1]. [1]"),
        ("It works. " + "It improves image quality a lot. " * 5, "It works. It improves image quality a lot"),
    ],
)
def test_a_looping_tail_is_cut_to_one_copy(text, kept):
    assert loop_start(text) is not None
    assert trim_loop(text) == kept


@pytest.mark.parametrize(
    "text",
    [
        "the the the the",  # too short to be a loop
        "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16",
        "[1] [2] [3] [4] [5] [6] [7] [8] [9] [10] [11] [12] [13]",
        "Diffusion models denoise [1]. They scale [2]. They are fast [3]. They are good [4].",
        "",
    ],
)
def test_text_that_does_not_loop_is_left_alone(text):
    assert loop_start(text) is None
    assert trim_loop(text) == text


@pytest.mark.parametrize(
    "text, only",
    [
        ("[1] [2] … [13]", True),
        ("[1][2][3]\n\n[4, 5]", True),
        ("  ", True),
        ("1. [1]\n2. [2]", True),
        ("See [1].", False),
        ("Diffusion models denoise [1].", False),
    ],
)
def test_an_answer_of_citation_numbers_only_is_told_apart(text, only):
    assert only_citations(text) is only

"""The citation check as the text streams (chat.pipeline.citations.CitationStream): however the
model's text is cut into deltas, what is released adds up to `check_citations` of the whole."""

import random

import pytest

from chat.pipeline.citations import CitationStream, check_citations

PIECES = ["word", " ", "  ", "\t", "\n", "[", "]", "1", "2", "9", "12", ",", "-", "–", " and ",
          "(", ")", ".", "[1]", "[9]", "[1-3]", "[2, 4]", "a"]  # fmt: skip


def streamed(text: str, cuts: list[int], sources: int) -> tuple[str, list[str]]:
    stream = CitationStream(sources)
    shown, start = [], 0
    for cut in [*cuts, len(text)]:
        shown.append(stream.feed(text[start:cut]))
        start = cut
    shown.append(stream.end())
    return "".join(shown), shown


def test_any_cut_of_any_text_adds_up_to_the_check_of_the_whole():
    rng = random.Random(16)
    for _ in range(5000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 25)))
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text), rng.randint(0, 8))))
        sources = rng.randint(0, 3)
        whole, _ = streamed(text, cuts, sources)
        assert whole == check_citations(text, sources).text, (text, cuts, sources)


@pytest.mark.parametrize(
    "deltas, sources, released",
    [
        # " [1," then " 9]." : the 9 is never released, the kept 1 is once the group closes.
        (["Faster", " [1,", " 9].", " Done"], 2, ["Faster", "", " [1].", " Done"]),
        # A group closed at the very end may still become a Markdown link: "[1](url)".
        (["See", " [1]", "(https://a.b)"], 2, ["See", "", " [1](https://a.b)"]),
        # Nothing but numbers so far: nothing shown (that answer is replaced, not streamed).
        (["[1]", " [2]", " Diffusion"], 2, ["", "", "[1] [2] Diffusion"]),
    ],
)
def test_what_is_held_back_until_later_text_settles_it(deltas, sources, released):
    stream = CitationStream(sources)
    assert [stream.feed(delta) for delta in deltas] == released

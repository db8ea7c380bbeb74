"""Split a paper's text into passages that fit the embedding model's window.

The text of a paper is `document_text(title, abstract)`; a passage is a character span of it, so
Passage rows store only (position, start, end) and the text is always derived, never duplicated.
Most abstracts fit the window and give one passage; a longer text is cut at sentence boundaries
into windows that overlap by a sentence or two, so nothing is cut off from search and a sentence
split by a window edge is still seen whole once.

Why not llama-index's SentenceSplitter: it returns re-joined chunk strings, not spans of the
original text, and finding them back is fragile; the greedy packing below is short and exact.
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# A boundary is the whitespace after ., ! or ? (optionally closed by a quote or bracket), or a
# blank line (between the title and the abstract). "e.g. x" also matches: a spurious boundary
# only offers one more place to cut, the packing never cuts where the window does not require it.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+|\n\s*\n\s*")
_WHITESPACE = re.compile(r"\s+")
_LINE_END = re.compile(r"\n")

# By default a passage repeats up to a quarter of the window from the end of the previous one:
# about one sentence of an abstract for MiniLM's 256 tokens.
OVERLAP_FRACTION = 0.25


@dataclass(frozen=True, slots=True)
class Span:
    position: int
    start: int
    end: int

    def text(self, document: str) -> str:
        return document[self.start : self.end]


def document_text(title: str, abstract: str) -> str:
    """The one text a paper is embedded from; passage spans index into it."""
    title, abstract = (title or "").strip(), (abstract or "").strip()
    if title and abstract:
        return f"{title}\n\n{abstract}"
    return title or abstract


def passage_text(paper, passage) -> str:
    """The text of a stored Passage of `paper` (anything with title and abstract)."""
    return document_text(paper.title, paper.abstract)[passage.start : passage.end]


def sentence_spans(text: str, count_tokens: Callable[[str], int], max_tokens: int) -> list[Span]:
    """Each sentence of `text` (the title is one: a blank line ends it), a sentence longer than
    the window cut into runs of words that fit, as `split_passages` cuts its pieces."""
    start, end = _strip(text, 0, len(text))
    if start == end:
        return []

    def fits(a: int, b: int) -> bool:
        return count_tokens(text[a:b]) <= max_tokens

    return [Span(i, a, b) for i, (a, b) in enumerate(_pieces(text, start, end, fits))]


def split_passages(
    text: str,
    count_tokens: Callable[[str], int],
    max_tokens: int,
    overlap_tokens: int | None = None,
    keep_whole: Sequence[tuple[int, int]] = (),
) -> list[Span]:
    """Spans of `text`, each within `max_tokens` by `count_tokens`, covering every character
    that is not whitespace at the edges of a piece. An empty text gives no spans. `keep_whole`:
    (start, end) spans of `text` (a table with its caption and header) never cut when they fit
    the window, else cut only at line ends (between a table's rows)."""
    if max_tokens < 8:
        raise ValueError(f"max_tokens must be at least 8, not {max_tokens}")
    if overlap_tokens is None:
        overlap_tokens = int(max_tokens * OVERLAP_FRACTION)
    if not 0 <= overlap_tokens < max_tokens // 2:
        raise ValueError(f"overlap_tokens must be in [0, {max_tokens // 2}), not {overlap_tokens}")
    start, end = _strip(text, 0, len(text))
    if start == end:
        return []
    if count_tokens(text[start:end]) <= max_tokens:
        return [Span(0, start, end)]

    def fits(a: int, b: int) -> bool:
        return count_tokens(text[a:b]) <= max_tokens

    pieces = _pieces(text, start, end, fits)
    for a, b in sorted(keep_whole, reverse=True):  # from the end: earlier indexes stay valid
        pieces = _kept_whole(text, pieces, a, b, fits)
    spans: list[Span] = []
    i = 0
    while i < len(pieces):
        # Greedy: as many whole pieces as fit from piece i.
        j = i + 1
        while j < len(pieces) and fits(pieces[i][0], pieces[j][1]):
            j += 1
        spans.append(Span(len(spans), pieces[i][0], pieces[j - 1][1]))
        if j == len(pieces):
            break
        # The next window starts with the last pieces of this one, up to overlap_tokens, moves
        # forward by at least one piece, and keeps room for the first piece this one left out.
        k = j
        while (
            k - 1 > i
            and count_tokens(text[pieces[k - 1][0] : pieces[j - 1][1]]) <= overlap_tokens
            and fits(pieces[k - 1][0], pieces[j][1])
        ):
            k -= 1
        i = k
    return spans


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _split_at(text: str, start: int, end: int, pattern: re.Pattern) -> list[tuple[int, int]]:
    """Non-blank pieces of text[start:end] between matches of `pattern`."""
    pieces, cursor = [], start
    for match in pattern.finditer(text, start, end):
        pieces.append(_strip(text, cursor, match.start()))
        cursor = match.end()
    pieces.append(_strip(text, cursor, end))
    return [(a, b) for a, b in pieces if a < b]


def _pieces(
    text: str, start: int, end: int, fits: Callable[[int, int], bool]
) -> list[tuple[int, int]]:
    """Sentences; a sentence longer than the window becomes runs of words that fit; a word
    longer than the window (a formula, a URL) becomes runs of characters."""
    pieces: list[tuple[int, int]] = []
    for a, b in _split_at(text, start, end, _SENTENCE_END):
        if fits(a, b):
            pieces.append((a, b))
        else:
            for wa, wb in _pack_words(text, a, b, fits):
                pieces.extend([(wa, wb)] if fits(wa, wb) else _pack_characters(wa, wb, fits))
    return pieces


def _kept_whole(text: str, pieces: list[tuple[int, int]], a: int, b: int, fits):
    """`pieces` with those overlapping text[a:b] merged into one when it fits, else into runs of
    whole lines (a long line: runs of words)."""
    inside = [i for i, (s, e) in enumerate(pieces) if s < b and e > a]
    if len(inside) < 2:
        return pieces
    first, last = inside[0], inside[-1]
    s, e = pieces[first][0], pieces[last][1]
    if fits(s, e):
        merged = [(s, e)]
    else:
        merged = []
        for la, lb in _pack_words(text, s, e, fits, _LINE_END):
            merged.extend([(la, lb)] if fits(la, lb) else _pack_words(text, la, lb, fits))
    return pieces[:first] + merged + pieces[last + 1 :]


def _pack_words(
    text: str, start: int, end: int, fits, separator: re.Pattern = _WHITESPACE
) -> list[tuple[int, int]]:
    words = _split_at(text, start, end, separator)
    runs, i = [], 0
    while i < len(words):
        j = i + 1
        while j < len(words) and fits(words[i][0], words[j][1]):
            j += 1
        runs.append((words[i][0], words[j - 1][1]))
        i = j
    return runs


def _pack_characters(start: int, end: int, fits) -> list[tuple[int, int]]:
    runs = []
    while start < end:
        # Binary search for the longest prefix that fits (at least one character).
        lo, hi = start + 1, end
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fits(start, mid):
                lo = mid
            else:
                hi = mid - 1
        runs.append((start, lo))
        start = lo
    return runs

"""Highlighted snippets, safe to put in a page: every piece of text is escaped, then marked.

Words match the query the way the full-text index does: lower-cased, accents folded, Snowball
English stems (PyStemmer runs the same Snowball algorithm as PostgreSQL's 'english'
configuration), so "models" in the text lights up for the query lexeme "model".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from html import escape

from papers.text import fold_accents

SNIPPET_CHARS = 320
_WORD = re.compile(r"\w+", re.UNICODE)
_SPACES = re.compile(r"\s+")


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return _stemmer().stemWord(fold_accents(word).lower())


@dataclass(frozen=True, slots=True)
class Snippet:
    html: str  # escaped text with <mark>…</mark> around matching words
    matched: tuple[str, ...]  # the matching words as they appear, first occurrence each


def matching_words(text: str, lexemes: Iterable[str]) -> list[tuple[int, int, str]]:
    """(start, end, word) of each word of `text` whose stem is a query lexeme."""
    wanted = set(lexemes)
    if not wanted:
        return []
    return [
        (m.start(), m.end(), m.group(0)) for m in _WORD.finditer(text) if stem(m.group(0)) in wanted
    ]


def _best_window(matches: list[tuple[int, int, str]], length: int, size: int) -> tuple[int, int]:
    """The span of `size` characters holding the most distinct matching words (two pointers
    over the matches, so linear in their number)."""
    if not matches or length <= size:
        return 0, min(length, size)
    keys = [stem(word) for _, _, word in matches]
    inside: Counter = Counter()
    best_start, best_count, j = 0, -1, 0
    for i, (start, _, _) in enumerate(matches):
        while j < len(matches) and matches[j][0] < start + size:
            inside[keys[j]] += 1
            j += 1
        if len(inside) > best_count:
            best_start, best_count = start, len(inside)
        inside[keys[i]] -= 1
        if not inside[keys[i]]:
            del inside[keys[i]]
    # Some context before the first match.
    start = max(0, best_start - size // 5)
    return start, min(length, start + size)


def make_snippet(text: str, lexemes: Iterable[str], size: int = SNIPPET_CHARS) -> Snippet:
    """The part of `text` that best shows why it matched, escaped, matches in <mark>."""
    text = _SPACES.sub(" ", text or "").strip()
    lexemes = set(lexemes)
    matches = matching_words(text, lexemes)
    start, end = _best_window(matches, len(text), size)
    # Cut at word boundaries.
    if start > 0:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < start + 30 else start
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start else end
    parts: list[str] = ["… " if start > 0 else ""]
    cursor = start
    for m_start, m_end, _ in matches:
        if m_start < start or m_end > end:
            continue
        parts.append(escape(text[cursor:m_start]))
        parts.append(f"<mark>{escape(text[m_start:m_end])}</mark>")
        cursor = m_end
    parts.append(escape(text[cursor:end]))
    if end < len(text):
        parts.append(" …")
    matched: list[str] = []
    seen: set[str] = set()
    for _, _, word in matches:
        key = stem(word)
        if key not in seen:
            seen.add(key)
            matched.append(word.lower())
    return Snippet("".join(parts), tuple(matched))

"""A question's misspelt words, corrected from the catalogue's own vocabulary.

"what optimizer does the transfomer use?" found no paper saying "transfomer" and was refused. A
word is corrected only when the catalogue has never seen it: its lexeme (PostgreSQL's 'english'
stemmer, as BM25 indexes it) is in neither BM25 vocabulary, the abstracts' (LexicalTerm) nor the
bodies' (BodyTerm). Its correction is the closest word the catalogue knows: a lexeme of those
tables with the same first PREFIX letters (a B-tree range on their unique lexeme index), written
back as a word (the lexeme and a usual ending: "transform" + "er"), at most MAX_EDITS(word)
edits away (Damerau-Levenshtein: "retreival" is one transposition from "retrieval"); among equals
the lexeme more papers use (a paper's own typo, "transfrom", is used by one). The written word
must stem to that lexeme again, so the search sees exactly the catalogue's word.

Names are not corrected ("RWKV", "Ankaa-2", "LLaMA"): a word with a digit, a hyphen or a capital
past its first letter, and short words (four letters or fewer: "BERT"'s "bert" has too many
neighbours one edit away to tell which was meant). Nor are English words the catalogue happens
not to use: a small catalogue never says "beginners" or "bread", which are no typos of "begin"
or "break". An English word is one the embedder's WordPiece vocabulary holds whole (30k common
words, on disk with the MiniLM model: papers.embeddings.minilm), alone or before a usual ending
("beginner" + "s"); without that file every unknown word may be corrected.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from functools import lru_cache

log = logging.getLogger("chat")

PREFIX = 3
MIN_LENGTH = 5
MIN_PAPERS = 2  # a lexeme fewer papers use is no correction (their own typos)
# Endings a lexeme is written back with ("normal" + "ization", "retriev" + "al").
_ENDINGS = (
    "", "e", "s", "es", "ed", "er", "ers", "ing", "ion", "ions", "al", "ation", "ations",
    "ization", "isation", "ity", "ive", "ment", "ness", "y", "ies", "ly", "ional", "ic", "ical",
)  # fmt: skip
_WORD = re.compile(r"(?<![\w-])[A-Za-z][a-z]+(?![\w-])")


_PLAIN_ENDINGS = ("s", "es", "er", "ers", "ing", "ed", "ly")


@lru_cache(maxsize=1)
def _english_words() -> frozenset[str]:
    """The whole words of the embedder's WordPiece vocabulary (read once a process)."""
    from papers.embeddings.base import EmbeddingError
    from papers.embeddings.minilm import TOKENIZER_IN_PACKAGE, TOKENIZER_PACKAGE, package_file

    try:
        path = package_file(TOKENIZER_PACKAGE, TOKENIZER_IN_PACKAGE)
        vocab = json.loads(path.read_text())["model"]["vocab"]
    except (EmbeddingError, OSError, KeyError, ValueError) as exc:
        log.warning("spelling: no English word list (%s)", exc)
        return frozenset()
    return frozenset(w for w in vocab if w.isalpha() and len(w) > 2)


def english(word: str) -> bool:
    """Whether `word` (lower case) is a common English word, or one with a usual ending
    ("beginn-ers": "begin", "mak-ing": "make")."""
    words = _english_words()
    if word in words:
        return True
    for ending in _PLAIN_ENDINGS:
        stem = word[: -len(ending)]
        if not word.endswith(ending) or len(stem) < 3:
            continue
        if stem in words or stem + "e" in words or (stem[-1] == stem[-2] and stem[:-1] in words):
            return True
    return False


def max_edits(word: str) -> int:
    return 1 if len(word) <= 7 else 2


@dataclass(frozen=True)
class Correction:
    typo: str  # as the question wrote it
    word: str  # the catalogue's word


_LEXEMES = """
SELECT w, tsvector_to_array(to_tsvector('english', w)) FROM unnest(%s::text[]) AS w
"""
# Each word's lexemes, and whether either BM25 vocabulary knows its one lexeme: one round trip.
_UNKNOWN = """
SELECT w, lexemes[1] FROM (
    SELECT w, tsvector_to_array(to_tsvector('english', w)) AS lexemes
    FROM unnest(%s::text[]) AS w
) words
WHERE cardinality(lexemes) = 1
  AND NOT EXISTS (SELECT 1 FROM papers_lexicalterm t WHERE t.lexeme = lexemes[1])
  AND NOT EXISTS (SELECT 1 FROM papers_bodyterm b WHERE b.lexeme = lexemes[1])
"""
# (C collation: a prefix is a range of the unique index.) Only lexemes of about the typo's own
# lexeme's length: a catalogue of 1M papers holds thousands under a common prefix ("tra").
_NEIGHBOURS = """
SELECT lexeme, max(df) FROM (
    SELECT lexeme, df FROM papers_lexicalterm WHERE lexeme >= %(lo)s AND lexeme < %(hi)s
    UNION ALL
    SELECT lexeme, df FROM papers_bodyterm WHERE lexeme >= %(lo)s AND lexeme < %(hi)s
) t WHERE length(lexeme) BETWEEN %(shortest)s AND %(longest)s
GROUP BY lexeme HAVING max(df) >= %(papers)s
"""


def edits(a: str, b: str, limit: int) -> int:
    """Damerau-Levenshtein distance (optimal string alignment), or limit + 1 beyond `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1]


def _candidates(
    word: str, lexeme: str, neighbours: list[tuple[str, int]]
) -> list[tuple[int, int, str, str]]:
    """(edits, -papers, written word, lexeme) of the neighbours within reach of the typo's own
    `lexeme` (stem against stem: one distance a neighbour, not one a written form), each
    written back with the ending that brings it closest to the typed `word`."""
    limit = max_edits(word)
    found = []
    for neighbour, papers in neighbours:
        if edits(lexeme, neighbour, limit) > limit:
            continue
        written = [
            (edits(word, neighbour + ending, limit + 2), neighbour + ending)
            for ending in _ENDINGS
            if neighbour + ending != word
        ]
        distance, closest = min(written)
        if distance <= limit:
            found.append((distance, -papers, closest, neighbour))
    return sorted(found)


def corrections(cursor, text: str) -> list[Correction]:
    """The corrections of `text`'s misspelt words (see the module docstring); [] for none."""
    # English words first, in memory: most questions have no other word long enough, and then
    # no query is sent at all (this runs before every search).
    words = list(
        dict.fromkeys(
            w for w in _WORD.findall(text) if len(w) >= MIN_LENGTH and not english(w.lower())
        )
    )
    if not words:
        return []
    cursor.execute(_UNKNOWN, [[w.lower() for w in words]])
    lexeme_of = dict(cursor.fetchall())  # the words the catalogue has never seen
    found = []
    for word in words:
        lower = word.lower()
        if lower not in lexeme_of:
            continue
        prefix, own = lower[:PREFIX], lexeme_of[lower]
        hi = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        reach = max_edits(lower)
        cursor.execute(
            _NEIGHBOURS,
            {"lo": prefix, "hi": hi, "papers": MIN_PAPERS,
             "shortest": len(own) - reach, "longest": len(own) + reach},
        )  # fmt: skip
        options = _candidates(lower, own, cursor.fetchall())
        if not options:
            continue
        # The written word must stem to its lexeme again (the best few checked in one query).
        best = options[:8]
        cursor.execute(_LEXEMES, [[o[2] for o in best]])
        stems = {w: lexemes for w, lexemes in cursor.fetchall()}
        for _, _, written, lexeme in best:
            if stems.get(written) == [lexeme]:
                fixed = written.capitalize() if word[0].isupper() else written
                found.append(Correction(word, fixed))
                break
    return found


def corrected(text: str, found: list[Correction]) -> str:
    """`text` with each corrected word replaced (whole words only)."""
    for correction in found:
        text = re.sub(rf"(?<![\w-]){re.escape(correction.typo)}(?![\w-])", correction.word, text)
    return text


def typed(text: str, found: list[Correction]) -> str:
    """`text` as the question wrote it: each correction undone (a reply that searched nothing
    relevant names what the user typed, not a guess at it)."""
    for correction in found:
        text = re.sub(rf"(?<![\w-]){re.escape(correction.word)}(?![\w-])", correction.typo, text)
    return text

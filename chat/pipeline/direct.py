"""Answers written without a search or a model: replies to small talk and to questions about
Flatuniverse itself, and the honest "the catalogue has nothing on this".

Each is a fixed template filled with what the catalogue actually holds (`Coverage`: its size,
date range and commonest categories, and example questions drawn from them), so a new user
learns what to ask. No answer here cites a paper.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import date

from django.db import connection

# The coverage is read at most this often per process: it changes with the nightly ingest.
COVERAGE_TTL_SECONDS = 600
TOP_CATEGORIES = 5
# Recent titles read for an example topic: enough to find a repeated phrase, still one small query.
RECENT_TITLES = 300
# The longest example topic, in words.
PHRASE_WORDS = 4


@dataclass(frozen=True)
class Coverage:
    papers: int
    first: date | None
    last: date | None
    categories: tuple[str, ...]  # commonest primary categories, commonest first
    topic: str = ""  # a phrase frequent in recent titles ("language models")
    recent_id: str = ""  # the newest paper's arXiv id, for a "papers like" example
    examples: tuple[str, ...] = field(default=())

    def sentence(self) -> str:
        if not self.papers:
            return "The catalogue is empty for now: papers arrive with the next ingest."
        span = f" published from {self.first} to {self.last}" if self.first and self.last else ""
        cats = ", ".join(self.categories)
        return f"The catalogue holds {self.papers:,} arXiv papers{span}" + (
            f", most of them in {cats}." if cats else "."
        )


_COVERAGE_SQL = """
SELECT primary_category, count(*), min(published), max(published)
FROM papers_paper WHERE NOT hidden GROUP BY primary_category ORDER BY count(*) DESC
"""
_RECENT_SQL = """
SELECT arxiv_id, title FROM papers_paper WHERE NOT hidden ORDER BY published DESC, id DESC LIMIT %s
"""
_WORD = re.compile(r"[A-Za-z][A-Za-z-]{2,}")
_PLAIN = frozenset(
    "the and for with from via using based towards toward into over under new its their our this "
    "that are can how what when why which study analysis approach method methods paper results "
    "case two one all not non large".split()
)

_cache: dict[str, tuple[float, Coverage]] = {}
_lock = threading.Lock()


def _frequent_phrase(titles: list[str]) -> str:
    """The commonest two-word phrase of content words in the titles ("language models"), grown
    by a word while the longer phrase is about as common (its count times its words no lower):
    "quantum approximate" of QAOA titles is half a name, "quantum approximate optimization
    algorithm" is the topic; "diffusion models" stays when few of them are "video diffusion"."""
    counts: Counter[tuple[str, ...]] = Counter()
    for title in titles:
        words = [w.lower() for w in _WORD.findall(title)]
        for start in range(len(words)):
            for size in range(2, PHRASE_WORDS + 1):
                phrase = tuple(words[start : start + size])
                if len(phrase) < size or phrase[-1] in _PLAIN or phrase[0] in _PLAIN:
                    break
                counts[phrase] += 1
    pairs = [(n, p) for p, n in counts.items() if len(p) == 2]
    count, phrase = max(pairs, key=lambda pair: pair[0], default=(0, ()))
    if count < 2:
        return ""
    while len(phrase) < PHRASE_WORDS:
        longer = [
            (n, p)
            for p, n in counts.items()
            if len(p) == len(phrase) + 1 and phrase in (p[1:], p[:-1])
        ]
        n, grown = max(longer, key=lambda pair: pair[0], default=(0, ()))
        if n < 2 or n * len(grown) < count * len(phrase):
            break
        count, phrase = n, grown
    return " ".join(phrase)


def catalogue_coverage() -> Coverage:
    """What the catalogue covers (sync: two small queries, cached COVERAGE_TTL_SECONDS)."""
    with _lock:
        cached = _cache.get("coverage")
        if cached and time.monotonic() - cached[0] < COVERAGE_TTL_SECONDS:
            return cached[1]
    with connection.cursor() as cursor:
        cursor.execute(_COVERAGE_SQL)
        rows = cursor.fetchall()
        cursor.execute(_RECENT_SQL, [RECENT_TITLES])
        recent = cursor.fetchall()
    papers = sum(row[1] for row in rows)
    first = min((row[2] for row in rows), default=None)
    last = max((row[3] for row in rows), default=None)
    categories = tuple(row[0] for row in rows[:TOP_CATEGORIES] if row[0])
    coverage = Coverage(
        papers=papers,
        first=first.date() if first else None,
        last=last.date() if last else None,
        categories=categories,
        topic=_frequent_phrase([title for _, title in recent]),
        recent_id=recent[0][0] if recent else "",
    )
    coverage = Coverage(**{**coverage.__dict__, "examples": _examples(coverage)})
    with _lock:
        _cache["coverage"] = (time.monotonic(), coverage)
    return coverage


def forget_coverage() -> None:
    """Drop the cached coverage (tests, and after an import)."""
    with _lock:
        _cache.clear()


def _examples(c: Coverage) -> tuple[str, ...]:
    if not c.papers:
        return ()
    examples = []
    if c.topic:
        examples.append(f"What is new on {c.topic}?")
    if c.categories and c.last:
        examples.append(f"Papers in {c.categories[0]} since {c.last.year - 1}")
    if c.recent_id:
        examples.append(f"Papers like {c.recent_id}")
    return tuple(examples[:3])


def _try(c: Coverage) -> str:
    if not c.examples:
        return ""
    return "\n\nYou could ask, for example:\n" + "\n".join(f"- {e}" for e in c.examples)


ABOUT = (
    "I answer research questions from a catalogue of arXiv papers and cite, by number, the "
    "papers I quote. I understand date windows (“since last year”, “in 2024”), authors "
    "(“papers by …”), categories (“in cs.CL”) and arXiv ids (“papers like 2309.00267”), and "
    "follow-ups about an answer's papers (“which of these use transformers?”, “the second one”)."
)
REPLIES = {
    "greeting": "Hello! I'm Flatuniverse. " + ABOUT + "\n\n{coverage}{examples}",
    "thanks": "You're welcome! Ask me anything else about the papers in the catalogue.{examples}",
    "goodbye": "Goodbye! This chat stays here for when you come back.",
    "capabilities": ABOUT + "\n\n{coverage}{examples}",
    "help": ABOUT + "\n\n{coverage}{examples}",
    "identity": "I'm Flatuniverse, a research assistant over a catalogue of arXiv papers. "
    + ABOUT
    + "\n\n{coverage}{examples}",
    "model": ABOUT + "\n\n{coverage}{examples}",
}
NOTHING_RELEVANT = (
    "The catalogue has nothing on “{topic}”{window}: none of its papers comes close enough to "
    "the question, so I am not quoting unrelated ones. {coverage}"
)


def chat_reply(reason: str, coverage: Coverage) -> str:
    """The reply to small talk or a question about Flatuniverse (triage `reason`)."""
    template = REPLIES.get(reason, REPLIES["help"])
    return template.format(coverage=coverage.sentence(), examples=_try(coverage)).strip()


# The words that ask, before the topic a refusal names: "What is known about cryo-EM …?" has
# nothing on "cryo-EM …", not on "What is known about cryo-EM …".
_ASKING_OPENER = re.compile(
    r"^(?:what\s+(?:is|'s|are)\s+(?:known|new|the\s+latest)\s+(?:about|on|in)|what'?s\s+new\s+"
    r"(?:about|on|in)|what\s+do\s+(?:we|you)\s+know\s+about|tell\s+me\s+(?:more\s+)?about|"
    r"(?:is\s+there\s+)?anything\s+(?:on|about)|(?:what|which)\s+(?:papers|research|work)\s+"
    r"(?:is\s+there\s+|exists?\s+)?(?:on|about)|(?:any\s+)?(?:papers|articles|preprints)\s+"
    r"(?:on|about))\s+",
    re.IGNORECASE,
)


def nothing_relevant_reply(topic: str, window: str, coverage: Coverage) -> str:
    topic = _ASKING_OPENER.sub("", " ".join(topic.split())).strip(" ?.!") or "this"
    return NOTHING_RELEVANT.format(
        topic=topic, window=f" ({window})" if window else "", coverage=coverage.sentence()
    ).strip()

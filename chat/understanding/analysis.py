"""What a search question asks for: a topic, a date window, recency, authors, categories, a paper.

`analyse(text, now)` is pure, rules only, and takes well under a millisecond. It runs the finders
in an order that keeps them from stepping on each other, each on the text with the earlier finds
masked out: arXiv ids and URLs, categories, dates (chat.understanding.temporal), who the answer is
for ("to a biologist", "in plain words": chat.understanding.audience), then authors (so that "by
2022" is a date and "by Hinton" an author).

The topical `query` is the question with those phrases cut out, plus what dangles once they are
gone: a preposition or article right before a cut phrase ("from the", "in the", "published in"),
an "and"/"or" between two cut phrases, and generic words at the edges ("papers", "articles",
"preprints", "publications", "arXiv", and a "on"/"about"/"in" left at the start after them):
"papers from the last 2 years on diffusion models" -> "diffusion models". Everything else is
kept, question words included ("what are the papers on GANs?"), so the query stays a meaningful
sentence for the embedder; full-text search ignores the stop words anyway. Words carrying a
question mark are never trimmed from the edges.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace
from datetime import UTC, date, datetime, time
from typing import Any

from chat.understanding.audience import audience_spans
from chat.understanding.mentions import find_arxiv_ids, find_authors, find_categories
from chat.understanding.temporal import find_temporal
from papers.identifiers import InvalidArxivId, canonical_category, parse_arxiv_id

Span = tuple[int, int]
MASK = "\x00"  # stands in for found phrases: neither a word nor a space (\x1f would be a space)


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


@dataclass(frozen=True)
class QueryAnalysis:
    query: str  # remaining topical query, date phrase / filters removed, whitespace tidy
    original: str
    is_temporal: bool
    start: datetime | None  # aware UTC, inclusive (00:00:00)
    end: datetime | None  # aware UTC, inclusive (23:59:59.999999 of the last day)
    year: int | None
    recency_weight: float  # 0..1
    phrase: str  # the matched date phrase(s), "" if none
    authors: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    arxiv_id: str | None = None  # the question names a paper: "papers like this one"
    source: str = "rules"  # "rules" or "llm"
    confident: bool = True  # False where the rules are unsure: an LLM may help

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, for the search page and the API."""
        data = asdict(self)
        data["start"] = self.start.isoformat() if self.start else None
        data["end"] = self.end.isoformat() if self.end else None
        data["weight"] = self.recency_weight
        data["authors"] = list(self.authors)
        data["categories"] = list(self.categories)
        return data

    def with_overrides(
        self,
        *,
        start: datetime | date | str | None = UNSET,
        end: datetime | date | str | None = UNSET,
        recency_weight: float | str = UNSET,
        categories: tuple[str, ...] | list[str] = UNSET,
        authors: tuple[str, ...] | list[str] = UNSET,
        arxiv_id: str | None = UNSET,
    ) -> QueryAnalysis:
        """The analysis with what the user changed on the search page's chip; None removes a bound.

        Bounds may be dates (a start at 00:00, an end at 23:59:59.999999 UTC), aware datetimes
        or ISO text ("2024-11-21"); the weight a number or numeric text.

        Raises ValueError with a readable message for a bad value (an unknown category, a
        weight outside 0..1, a start after the end).
        """
        changes: dict[str, Any] = {"confident": True}
        new_start = self.start if start is UNSET else _as_bound(start, "start")
        new_end = self.end if end is UNSET else _as_bound(end, "end")
        if new_start and new_end and new_start > new_end:
            raise ValueError(
                f"the window starts ({new_start:%Y-%m-%d}) after it ends ({new_end:%Y-%m-%d})"
            )
        if start is not UNSET or end is not UNSET:
            changes.update(start=new_start, end=new_end, year=_single_year(new_start, new_end))
        if recency_weight is not UNSET:
            changes["recency_weight"] = _as_weight(recency_weight)
        if categories is not UNSET:
            changes["categories"] = _as_categories(categories)
        if authors is not UNSET:
            changes["authors"] = _as_authors(authors)
        if arxiv_id is not UNSET:
            changes["arxiv_id"] = _as_arxiv_id(arxiv_id)
        updated = replace(self, **changes)
        is_temporal = bool(updated.start or updated.end or updated.recency_weight > 0)
        return replace(updated, is_temporal=is_temporal)


def _as_bound(value: datetime | date | str | None, which: str) -> datetime | None:
    """A window bound from the chip: a date (whole day), an aware datetime, or ISO text."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = _parse_iso(value.strip(), which)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"{which} must be timezone-aware")
        return value.astimezone(UTC)
    if isinstance(value, date):
        return datetime.combine(value, time.min if which == "start" else time.max, UTC)
    raise ValueError(
        f"{which} must be a date, a datetime, an ISO date or None, not {type(value).__name__}"
    )


def _parse_iso(text: str, which: str) -> date | datetime:
    try:
        return date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{which} {text!r} is not an ISO date (YYYY-MM-DD)") from None


def _single_year(start: datetime | None, end: datetime | None) -> int | None:
    """The year, when the window is exactly one calendar year."""
    if start and end and start.year == end.year and (start.month, start.day) == (1, 1):
        return start.year if (end.month, end.day) == (12, 31) else None
    return None


def _as_weight(value: float | str) -> float:
    if isinstance(value, str):  # from a form field
        try:
            value = float(value)
        except ValueError:
            raise ValueError(
                f"the recency weight must be a number from 0 to 1, not {value!r}"
            ) from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"the recency weight must be a number from 0 to 1, not {value!r}")
    return float(value)


def _as_categories(values: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    if isinstance(values, str):
        raise ValueError("categories must be a list of arXiv categories, not one string")
    found = []
    for value in values:
        canonical = canonical_category(value) if isinstance(value, str) else None
        if canonical is None:
            raise ValueError(f"{value!r} is not an arXiv category (e.g. cs.CL, quant-ph)")
        if canonical not in found:
            found.append(canonical)
    return tuple(found)


def _as_authors(values: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    if isinstance(values, str):
        raise ValueError("authors must be a list of names, not one string")
    names = []
    for value in values:
        name = " ".join(value.split()) if isinstance(value, str) else ""
        if not name or len(name) > 200:
            raise ValueError(f"{value!r} is not an author name")
        if name not in names:
            names.append(name)
    return tuple(names)


def _as_arxiv_id(value: str | None) -> str | None:
    """The seed paper ("papers like …"): an id or abs/pdf link; None or "" removes it."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"the seed paper must be an arXiv id such as 2309.00267, not {value!r}")
    try:
        return parse_arxiv_id(value)[0]
    except InvalidArxivId:
        raise ValueError(
            f"{value[:60]!r} is not an arXiv id (e.g. 2309.00267 or hep-th/9901001)"
        ) from None


def as_utc_now(now: datetime | None) -> datetime:
    if now is None:
        return datetime.now(UTC)
    if not isinstance(now, datetime):
        raise TypeError(f"now must be a datetime, not {type(now).__name__}")
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware (e.g. datetime(2026, 11, 21, tzinfo=UTC))")
    return now.astimezone(UTC)


def _mask(text: str, spans: list[Span]) -> str:
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        chars[start:end] = MASK * (end - start)
    return "".join(chars)


def analyse(text: str, now: datetime | None = None) -> QueryAnalysis:
    """Understand a search question by rules (see the module docstrings for what and how)."""
    if not isinstance(text, str):
        raise TypeError(f"the question must be a string, not {type(text).__name__}")
    today = as_utc_now(now).date()

    ids, id_spans = find_arxiv_ids(text)
    masked = _mask(text, id_spans)
    categories, category_spans = find_categories(masked)
    masked = _mask(masked, category_spans)
    temporal = find_temporal(masked, today)
    masked = _mask(masked, [m.span for m in temporal.matches])
    # Who the answer is for ("to a biologist", "in plain words") is no topic: cut before the
    # authors, so "for a physician" is not read as a name either.
    audience = audience_spans(masked)
    masked = _mask(masked, audience)
    authors = find_authors(masked)

    cut = id_spans + category_spans + list(temporal.spans) + audience + authors.spans
    return QueryAnalysis(
        query=remainder(text, cut),
        original=text,
        is_temporal=temporal.is_temporal,
        start=temporal.start,
        end=temporal.end,
        year=temporal.year,
        recency_weight=temporal.recency_weight,
        phrase=temporal.phrase,
        authors=authors.authors,
        categories=categories,
        arxiv_id=ids[0] if ids else None,
        source="rules",
        confident=temporal.confident and authors.confident,
    )


# ---------------------------------------------------------------------------------------------
# The topical remainder
# ---------------------------------------------------------------------------------------------

GAP = None  # where a phrase was cut
EDGE_NOUNS = frozenset(
    "paper papers article articles preprint preprints publication publications arxiv".split()
)
# Left hanging just before a cut phrase: "papers [published] [in the] <2021>".
DANGLING_BEFORE = frozenset(
    "in from during of for over within since between by at on and or & , "
    "published released submitted posted appeared written authored".split()
)
DANGLING_AFTER = frozenset({"and", "or", "&", ",", "'s", "’s"})
# Left at the start once "papers" or a cut phrase is gone: "[papers] on <topic>".
LEADING_AFTER_CUT = frozenset(
    "on about regarding concerning covering in of from for and or & , the published".split()
)
TRAILING_AFTER_CUT = frozenset(
    "on about in of from for and or & , the by published released since during between".split()
)
_PUNCT = ".,;:!()[]\"'"
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([?!.,;:)\]])")
_SPACE_AFTER_OPEN = re.compile(r"([(\[])\s+")
_EMPTY_BRACKETS = re.compile(r"\(\s*\)|\[\s*\]")
_REPEATED_PUNCT = re.compile(r"([,;:])(?:\s*[,;:])+")
_PUNCT_BEFORE_END = re.compile(r"\s*[,;:]+\s*(?=[?!.]|$)")


def _word(token: str | None) -> str:
    return "" if token is None else token.lower().strip(_PUNCT) or token


def remainder(text: str, spans: list[Span]) -> str:
    """`text` without the spans, the words they leave dangling and the filler at its edges."""
    if not spans:
        return _tidy(" ".join(text.split()))
    tokens: list[str | None] = []
    position = 0
    for start, end in sorted(_merge(spans)):
        tokens.extend(text[position:start].split())
        tokens.append(GAP)
        position = end
    tokens.extend(text[position:].split())
    tokens = _drop_dangling(tokens)
    tokens = _trim_edges(tokens)
    rest = _tidy(" ".join(t for t in tokens if t is not GAP))
    # Punctuation alone ("What has Ying Shan published?" leaves "?") is no topic.
    return rest if any(c.isalnum() for c in rest) else ""


def _merge(spans: list[Span]) -> list[Span]:
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def _drop_dangling(tokens: list[str | None]) -> list[str | None]:
    result: list[str | None] = []
    for i, token in enumerate(tokens):
        if token is GAP:
            while (
                result
                and result[-1] is not GAP
                and _word(result[-1]) in DANGLING_BEFORE
                and not _ends_sentence(result[-1])
            ):
                result.pop()
            result.append(GAP)
            continue
        after_gap = bool(result) and result[-1] is GAP
        if after_gap and _word(token) in DANGLING_AFTER:
            following = tokens[i + 1] if i + 1 < len(tokens) else GAP
            if following is GAP or token in ("'s", "’s") or len(result) == 1:
                continue
        result.append(token)
    return result


def _ends_sentence(token: str | None) -> bool:
    """A question or exclamation mark: such words stay ("what are the papers?")."""
    return token is not None and token.rstrip(")\"'").endswith(("?", "!"))


def _trim_edges(tokens: list[str | None]) -> list[str | None]:
    """Strip filler nouns at both edges and what they, or a cut at the edge, leave hanging."""
    start, cut = 0, False
    while start < len(tokens):
        token = tokens[start]
        if token is GAP:
            cut = True
        elif _ends_sentence(token):
            break
        elif _word(token) in EDGE_NOUNS or (cut and _word(token) in LEADING_AFTER_CUT):
            cut = True
        elif token.strip(_PUNCT + "-–—") == "":
            pass  # a lone punctuation mark
        else:
            break
        start += 1
    end, cut = len(tokens), False
    while end > start:
        token = tokens[end - 1]
        if token is GAP:
            cut = True
        elif _ends_sentence(token):
            break
        elif _word(token) in EDGE_NOUNS or (cut and _word(token) in TRAILING_AFTER_CUT):
            cut = True
        elif token.strip(_PUNCT + "-–—") == "":
            pass
        else:
            break
        end -= 1
    return tokens[start:end]


def _tidy(text: str) -> str:
    text = _EMPTY_BRACKETS.sub("", text)
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = _SPACE_AFTER_OPEN.sub(r"\1", text)
    text = _REPEATED_PUNCT.sub(r"\1", text)
    text = _PUNCT_BEFORE_END.sub("", text)
    return " ".join(text.split()).strip(" ,;:-–—")

"""A second opinion from an LLM on the questions the rules are unsure about.

`analyse_with_llm(text, now, complete)` runs the rules first and returns their result unless it
is marked not confident ("since ChatGPT", "three years ago", "diffusion models by jonathan ho").
Then it asks the model for one JSON object, checks every field (types, dates inside 1900..next
year, start not after end, weight in 0..1) and keeps only what the question supports: categories
of the arXiv taxonomy, authors and a topical query made of the question's own words (a model
must not invent a filter that empties the results). The arXiv id always comes from the rules.
It returns source="llm". Anything else — an exception or a timeout
from `complete`, text that is not JSON, a field of the wrong type — falls back to the rules'
result, logged, never raised: a model's bad output must not break a search.

`complete` is an async callable (messages: list[dict]) -> str supplied by the caller, e.g. the
`complete` method of a chat.llm backend.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from chat.pipeline import prompts
from chat.understanding.analysis import QueryAnalysis, analyse, as_utc_now
from papers.identifiers import canonical_category

logger = logging.getLogger("chat.retrieval")

Complete = Callable[[list[dict]], Awaitable[str]]

DEFAULT_TIMEOUT_SECONDS = 20.0
MAX_QUESTION_CHARS = 2000  # the analysis needs the question, not a pasted paper
MAX_AUTHORS = 10
MAX_NAME_CHARS = 120


class InvalidAnalysis(ValueError):
    """The model's reply is not a usable analysis (the message says why)."""


async def analyse_with_llm(
    text: str,
    now: datetime | None,
    complete: Complete | None,
    *,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
) -> QueryAnalysis:
    """The rules' analysis, or the model's where the rules were unsure and the model made sense."""
    now = as_utc_now(now)
    rules = analyse(text, now)
    if rules.confident or complete is None:
        return rules
    messages = build_messages(text, now, rules)
    try:
        async with asyncio.timeout(timeout):
            reply = await complete(messages)
    except TimeoutError:
        logger.warning("query_analysis llm=timeout seconds=%s fallback=rules", timeout)
        return rules
    except Exception as exc:  # the caller's backend: any failure means "use the rules"
        logger.warning("query_analysis llm=error error=%r fallback=rules", exc)
        return rules
    try:
        return parse_reply(reply, rules, now.date())
    except InvalidAnalysis as exc:
        logger.warning("query_analysis llm=invalid reason=%r fallback=rules", str(exc))
        return rules


def build_messages(text: str, now: datetime, rules: QueryAnalysis) -> list[dict]:
    guess = {k: v for k, v in rules.to_dict().items() if k not in ("original", "source")}
    system = prompts.ANALYSIS_SYSTEM.format(today=now.date().isoformat(), rules=json.dumps(guess))
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": text[:MAX_QUESTION_CHARS]},
    ]


@dataclass(frozen=True, slots=True)
class _Reply:
    start: date | None
    end: date | None
    recency_weight: float
    query: str | None
    authors: tuple[str, ...]
    categories: tuple[str, ...]


_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_WORDS = re.compile(r"\w+")


def parse_reply(reply: Any, rules: QueryAnalysis, today: date) -> QueryAnalysis:
    """The model's reply checked field by field, merged into the rules' analysis."""
    checked = _validate(_json_object(reply), today, rules.original)
    start = datetime.combine(checked.start, time.min, UTC) if checked.start else None
    end = datetime.combine(checked.end, time.max, UTC) if checked.end else None
    query = (
        checked.query
        if checked.query is not None and _own_words(checked.query, rules.original)
        else rules.query
    )
    single_year = checked.start and checked.end and checked.start == date(checked.start.year, 1, 1)
    year = (
        checked.start.year
        if single_year and checked.end == date(checked.start.year, 12, 31)
        else None
    )
    return replace(
        rules,
        query=" ".join(query.split()),
        is_temporal=bool(start or end or checked.recency_weight > 0),
        start=start,
        end=end,
        year=year,
        recency_weight=checked.recency_weight,
        authors=checked.authors,
        categories=checked.categories,
        source="llm",
        confident=True,
    )


def _json_object(reply: Any) -> dict:
    if not isinstance(reply, str):
        raise InvalidAnalysis(f"the reply is a {type(reply).__name__}, not text")
    found = _OBJECT.search(reply)  # small models wrap JSON in prose or ``` fences
    if not found:
        raise InvalidAnalysis("no JSON object in the reply")
    try:
        data = json.loads(found.group(0))
    except ValueError as exc:
        raise InvalidAnalysis(f"not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise InvalidAnalysis("the JSON is not an object")
    return data


def _validate(data: dict, today: date, original: str) -> _Reply:
    start = _day(data.get("start"), "start", today)
    end = _day(data.get("end"), "end", today)
    if start and end and start > end:
        raise InvalidAnalysis(f"start {start} is after end {end}")
    weight = data.get("recency_weight", 0)
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 <= weight <= 1:
        raise InvalidAnalysis(f"recency_weight {weight!r} is not a number from 0 to 1")
    if "is_temporal" in data and not isinstance(data["is_temporal"], bool):
        raise InvalidAnalysis("is_temporal is not true or false")
    query = data.get("query")
    if query is not None and not isinstance(query, str):
        raise InvalidAnalysis("query is not a string")
    return _Reply(
        start=start,
        end=end,
        recency_weight=float(weight),
        query=query,
        authors=tuple(a for a in _authors(data.get("authors", [])) if _own_words(a, original)),
        categories=_categories(data.get("categories", [])),
    )


def _day(value: Any, field: str, today: date) -> date | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidAnalysis(f"{field} is not a YYYY-MM-DD string")
    try:
        day = date.fromisoformat(value.strip()[:10])
    except ValueError as exc:
        raise InvalidAnalysis(f"{field} {value!r} is not a YYYY-MM-DD date") from exc
    if not date(1900, 1, 1) <= day <= today + timedelta(days=366):
        raise InvalidAnalysis(f"{field} {day} is outside 1900..next year")
    return day


def _authors(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise InvalidAnalysis("authors is not a list")
    names: list[str] = []
    for item in value[:MAX_AUTHORS]:
        if not isinstance(item, str):
            raise InvalidAnalysis("an author is not a string")
        name = " ".join(item.split())
        if name and len(name) <= MAX_NAME_CHARS and name not in names:
            names.append(name)
    return tuple(names)


def _categories(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise InvalidAnalysis("categories is not a list")
    found: list[str] = []
    for item in value:
        canonical = canonical_category(item) if isinstance(item, str) else None
        # An invented category would filter everything away: drop it, keep the rest.
        if canonical and canonical not in found:
            found.append(canonical)
    return tuple(found)


def _own_words(query: str, original: str) -> bool:
    """True when the model's text only uses words of the question (no invented topic or name)."""
    allowed = {w.lower() for w in _WORDS.findall(original)}
    words = [w.lower() for w in _WORDS.findall(query)]
    return all(w in allowed for w in words)

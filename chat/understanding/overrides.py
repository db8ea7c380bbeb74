"""The filters a user sets on an answer's chips: read from a socket frame or an API body, and
shown back as chips.

A filter set is a JSON object with any of these keys (absent = as the question says):

    {"start": "2024-01-01" | null, "end": "2024-12-31" | null, "recency_weight": 0..1,
     "authors": ["Jianfeng Gao"], "categories": ["cs.CL"], "arxiv_id": "2309.00267" | null}

`parse_filters` checks one (every value through `QueryAnalysis.with_overrides`, the one home of
those rules, so the chat, the API and the search page refuse the same things with the same
words) and returns it normalised; `search(..., overrides=filters)` applies it. `filters_of` is an
answer's complete filter set as its saved analysis says, which the page edits and sends back, and
`chips` what the page shows for it.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from chat.understanding.analysis import QueryAnalysis
from chat.window import window_label

FILTER_KEYS = ("start", "end", "recency_weight", "authors", "categories", "arxiv_id")

_BLANK = QueryAnalysis(
    query="",
    original="",
    is_temporal=False,
    start=None,
    end=None,
    year=None,
    recency_weight=0.0,
    phrase="",
)


def parse_filters(data: Any) -> dict:
    """A checked filter set, JSON-ready; raises ValueError with a sentence a user can read."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError('filters must be an object such as {"start": "2024-01-01"}')
    unknown = sorted(str(key) for key in data if key not in FILTER_KEYS)
    if unknown:
        raise ValueError(f"unknown filter {', '.join(unknown)[:80]}; use {', '.join(FILTER_KEYS)}")
    for key in ("start", "end"):
        if key in data and data[key] is not None and not isinstance(data[key], str):
            raise ValueError(f"{key} must be a date like 2024-11-21 or null")
    checked = _BLANK.with_overrides(**data)
    result: dict = {}
    for key in data:
        value = getattr(checked, key)
        if key in ("start", "end"):
            value = value.date().isoformat() if value else None
        elif isinstance(value, tuple):
            value = list(value)
        result[key] = value
    return result


def _day(value: Any) -> str | None:
    text = str(value or "")[:10]
    return text or None


def filters_of(analysis: dict | None) -> dict:
    """Every filter an answer was searched with (from its analysis dict): what a chip edits."""
    analysis = analysis or {}
    weight = analysis.get("recency_weight", analysis.get("weight")) or 0.0
    return {
        "start": _day(analysis.get("start")),
        "end": _day(analysis.get("end")),
        "recency_weight": round(float(weight), 2),
        "authors": list(analysis.get("authors") or []),
        "categories": list(analysis.get("categories") or []),
        "arxiv_id": analysis.get("arxiv_id") or None,
    }


def chips(analysis: dict | None, today: date | None = None) -> list[dict]:
    """The chips of an answer, in reading order. Each has `kind` (window, recency, author,
    category, seed), `label` (as shown), `value` (what removing it takes out of the filter set)
    and `edited` (the user set it, rather than the question)."""
    analysis = analysis or {}
    filters = filters_of(analysis)
    edited = set((analysis.get("filters") or {}).keys())

    def chip(kind: str, label: str, value: Any, *keys: str) -> dict:
        return {"kind": kind, "label": label, "value": value, "edited": bool(edited & set(keys))}

    found: list[dict] = []
    window = window_label(analysis, today)
    if window:
        found.append(chip("window", window, None, "start", "end"))
    weight = filters["recency_weight"]
    if weight > 0:
        found.append(chip("recency", f"recent first ({weight:.1f})", weight, "recency_weight"))
    found += [chip("author", f"by {a}", a, "authors") for a in filters["authors"]]
    found += [chip("category", f"in {c}", c, "categories") for c in filters["categories"]]
    if filters["arxiv_id"]:
        seed = filters["arxiv_id"]
        found.append(chip("seed", f"like arXiv:{seed}", seed, "arxiv_id"))
    return found

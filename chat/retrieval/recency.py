"""Recency blending: only for queries that ask for recent work (analysis.recency_weight > 0).

    final = (1 - w) * relevance + w * 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)

`relevance` is the fused score min-max scaled over the candidates (1 = best, 0 = weakest).
Age counts from the query's `now`; a paper dated after `now` counts as new (recency 1).

Recency reorders relevant papers; it must not make irrelevant ones relevant. With w = 0.8
("latest …") a brand-new paper that merely filled the tail of the dense list would otherwise beat
every older paper on the topic. So only candidates with relevance >= RELEVANCE_FLOOR get the
recency term; the others keep (1 - w) * relevance and stay below. With convex fusion (equal
weights) 0.25 means about "half-way up one retriever's list, or a quarter-way up both"; with
RRF over two 100-long lists, about "rank 20 in one list".

A weight of 0 returns the ranking untouched: a query with no time intent is never reordered by
date, and ties are broken by paper id, never by date.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.conf import settings

RELEVANCE_FLOOR = 0.25


def recency_score(published: datetime, now: datetime, half_life_days: float | None = None) -> float:
    half_life = settings.RECENCY_HALF_LIFE_DAYS if half_life_days is None else half_life_days
    if half_life <= 0:
        raise ValueError("RECENCY_HALF_LIFE_DAYS must be positive")
    age_days = max((now - published).total_seconds() / 86400.0, 0.0)
    return 0.5 ** (age_days / half_life)


def blend(
    items: Sequence[tuple[int, float, datetime]],
    weight: float,
    now: datetime,
    half_life_days: float | None = None,
    floor: float = RELEVANCE_FLOOR,
) -> list[tuple[int, float]]:
    """(paper_id, relevance, published), best first -> [(paper_id, final score)], best first.

    With weight 0 the input order and scores are returned as they are.
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"recency weight must be within 0..1, not {weight}")
    if weight == 0.0 or not items:
        return [(paper_id, relevance) for paper_id, relevance, _ in items]
    high = max(relevance for _, relevance, _ in items)
    low = min(relevance for _, relevance, _ in items)
    spread = high - low
    scored = []
    for paper_id, relevance, published in items:
        norm = (relevance - low) / spread if spread > 0 else 1.0
        score = (1.0 - weight) * norm
        if norm >= floor:
            score += weight * recency_score(published, now, half_life_days)
        scored.append((paper_id, score))
    return sorted(scored, key=lambda item: (-item[1], item[0]))

"""Fusing ranked lists (dense, BM25, reformulations) into one ranking of papers.

Two methods, chosen by `settings.SEARCH_FUSION`, compared on SciFact (train, 809 claims, the
same dense and BM25 lists; docs/BENCHMARKS.md):

- "convex" (default): each list's scores min-max normalised over its own head (its best paper 1,
  its last 0), then a weighted sum, DENSE_WEIGHT for dense lists and the rest for BM25 lists; a
  paper missing from a list gets 0 there. nDCG@10 0.738 at DENSE_WEIGHT 0.5 (0.730-0.736 from
  0.3 to 0.6: not a knife edge).
- "rrf", reciprocal rank fusion: score = sum over lists of 1 / (RRF_K + rank). Needs no
  calibration and ignores how far apart the scores are: nDCG@10 0.725 at RRF_K=60.

Both beat either list alone (dense 0.684, BM25 0.699). Ties are broken by paper id, never by
date: with no time intent a query is never ordered by date.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.conf import settings

# Weight of the dense lists in convex fusion (measured on SciFact, see docs/BENCHMARKS.md).
DENSE_WEIGHT = 0.5


@dataclass(frozen=True, slots=True)
class Ranked:
    """One list to fuse: paper ids best first, with their scores (higher is better)."""

    name: str  # "dense", "fulltext", or "dense:2" for a reformulation
    ids: Sequence[int]
    scores: Sequence[float]
    weight: float = 1.0


@dataclass(slots=True)
class Fused:
    paper_id: int
    score: float
    # 1-based rank of the paper in each list it appeared in.
    ranks: dict[str, int] = field(default_factory=dict)


def reciprocal_rank_fusion(lists: Sequence[Ranked], k: int | None = None) -> list[Fused]:
    k = settings.RRF_K if k is None else k
    fused: dict[int, Fused] = {}
    for ranked in lists:
        for rank, paper_id in enumerate(ranked.ids, start=1):
            item = fused.setdefault(paper_id, Fused(paper_id, 0.0))
            item.score += ranked.weight / (k + rank)
            item.ranks[ranked.name] = rank
    return _ordered(fused)


def convex_fusion(lists: Sequence[Ranked]) -> list[Fused]:
    fused: dict[int, Fused] = {}
    for ranked in lists:
        if not ranked.ids:
            continue
        high, low = max(ranked.scores), min(ranked.scores)
        spread = high - low
        for rank, (paper_id, score) in enumerate(zip(ranked.ids, ranked.scores, strict=True), 1):
            norm = (score - low) / spread if spread > 0 else 1.0
            item = fused.setdefault(paper_id, Fused(paper_id, 0.0))
            item.score += ranked.weight * norm
            item.ranks[ranked.name] = rank
    return _ordered(fused)


def fuse(lists: Sequence[Ranked], method: str | None = None) -> list[Fused]:
    """One ranking of every paper in `lists`, best first. For "convex", give dense lists
    weight DENSE_WEIGHT and BM25 lists 1 - DENSE_WEIGHT (`list_weight`)."""
    method = (method or settings.SEARCH_FUSION).lower()
    if method == "rrf":
        return reciprocal_rank_fusion(lists)
    if method == "convex":
        return convex_fusion(lists)
    raise ValueError(f"unknown fusion method {method!r}: choose rrf or convex")


def _ordered(fused: dict[int, Fused]) -> list[Fused]:
    return sorted(fused.values(), key=lambda f: (-f.score, f.paper_id))


def list_weight(kind: str, method: str | None = None) -> float:
    """The weight of a "dense" or "fulltext" list under `method` (RRF weighs lists equally)."""
    method = (method or settings.SEARCH_FUSION).lower()
    if method != "convex":
        return 1.0
    return DENSE_WEIGHT if kind == "dense" else 1.0 - DENSE_WEIGHT

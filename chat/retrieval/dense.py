"""Dense retrieval: pgvector cosine distance over Passage rows of the active embedding model.

One result per paper (its closest passage). Filters are applied inside the SQL. Two plans:

- HNSW (`papers_passage_hnsw_idx`) with `hnsw.iterative_scan = relaxed_order`: the index keeps
  producing neighbours until enough rows pass the filters (model, window, hidden, categories),
  instead of stopping after `ef_search` candidates and returning fewer than k. Relaxed order
  means the rows come back nearly sorted; they are sorted again here.
- Exact scan: every passage that passes the filters, ordered by true distance. Chosen when a
  bounded count says at most `settings.DENSE_EXACT_MAX` papers pass (a narrow window, a rare
  category, an author), where it is both exact and faster than walking the graph past thousands
  of filtered-out neighbours (measured in docs/BENCHMARKS.md), and as the fallback whenever the
  index returns fewer papers than asked although more exist.

Vectors of another model share the index but never the results: `model = %s` is always a filter.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.conf import settings

from .filters import SearchFilters

# Passages fetched per wanted paper before de-duplication (most papers have one or two).
PASSAGES_PER_PAPER = 2


@dataclass(frozen=True, slots=True)
class DenseHit:
    paper_id: int
    passage_id: int
    distance: float  # cosine distance, 0 = same direction
    published: datetime

    @property
    def similarity(self) -> float:
        return 1.0 - self.distance


@dataclass
class DenseResult:
    hits: list[DenseHit]
    plan: str  # "hnsw", "exact" or "hnsw+exact" (index short, exact fallback)


def vector_literal(vector) -> str:
    """A pgvector text literal; float32 needs at most 9 significant digits to round-trip."""
    values = np.asarray(vector, dtype=np.float32).ravel()
    if values.size != settings.EMBEDDING_DIMENSIONS:
        raise ValueError(
            f"query vector has {values.size} dimensions, expected {settings.EMBEDDING_DIMENSIONS}"
        )
    if not np.all(np.isfinite(values)):
        raise ValueError("query vector contains NaN or infinity")
    return "[" + ",".join(f"{v:.9g}" for v in values.tolist()) + "]"


def _where(filters: SearchFilters, params: dict) -> str:
    paper_sql, _ = filters.paper_conditions("p", params)
    date_sql = filters.date_conditions("ps.published", params)
    return f"ps.model = %(model)s AND {date_sql} AND {paper_sql}"


_HNSW = """
SELECT ps.paper_id, ps.id, ps.embedding <=> %(q)s::vector AS distance, ps.published
FROM papers_passage ps JOIN papers_paper p ON p.id = ps.paper_id
WHERE {where}
ORDER BY ps.embedding <=> %(q)s::vector
LIMIT %(limit)s
"""

# ORDER BY on DISTINCT ON (paper_id) cannot use the HNSW index: a true scan of the filtered rows.
_EXACT = """
SELECT paper_id, passage_id, distance, published FROM (
    SELECT DISTINCT ON (ps.paper_id) ps.paper_id, ps.id AS passage_id,
           ps.embedding <=> %(q)s::vector AS distance, ps.published
    FROM papers_passage ps JOIN papers_paper p ON p.id = ps.paper_id
    WHERE {where}
    ORDER BY ps.paper_id, distance
) best
ORDER BY distance, paper_id
LIMIT %(limit)s
"""

# Bounded counts: their cost grows with the cap, not with the catalogue.
_COUNT_WINDOW = """
SELECT count(*) FROM (
    SELECT 1 FROM papers_passage ps WHERE ps.model = %(model)s AND {dates} LIMIT %(cap)s
) s
"""
_COUNT_PAPERS = """
SELECT count(*) FROM (
    SELECT 1 FROM papers_paper p WHERE {dates} AND {papers} LIMIT %(cap)s
) s
"""


def _bounded_count(cursor, model: str, filters: SearchFilters, cap: int) -> int:
    """min(papers or passages passing the filters, cap + 1), from the cheapest index."""
    params: dict = {"model": model, "cap": cap + 1}
    count = cap + 1
    if filters.has_window:
        dates = filters.date_conditions("ps.published", params)
        cursor.execute(_COUNT_WINDOW.format(dates=dates), params)
        count = min(count, cursor.fetchone()[0])
    if filters.categories or filters.paper_ids is not None:
        params = {"cap": cap + 1}
        dates = filters.date_conditions("p.published", params)
        papers, params = filters.paper_conditions("p", params)
        cursor.execute(_COUNT_PAPERS.format(dates=dates, papers=papers), params)
        count = min(count, cursor.fetchone()[0])
    return count


def _best_per_paper(rows) -> list[DenseHit]:
    best: dict[int, DenseHit] = {}
    for paper_id, passage_id, distance, published in rows:
        hit = best.get(paper_id)
        if hit is None or distance < hit.distance:
            best[paper_id] = DenseHit(paper_id, passage_id, float(distance), published)
    return sorted(best.values(), key=lambda h: (h.distance, h.paper_id))


def _exact(cursor, q: str, model: str, filters: SearchFilters, n: int) -> list[DenseHit]:
    params: dict = {"q": q, "model": model, "limit": n}
    cursor.execute(_EXACT.format(where=_where(filters, params)), params)
    return [DenseHit(pid, sid, float(d), pub) for pid, sid, d, pub in cursor.fetchall()]


def _hnsw(cursor, q: str, model: str, filters: SearchFilters, n: int) -> list[DenseHit]:
    """Up to `n` papers from the index (fewer when its iterative scan gave up)."""
    limit = n * PASSAGES_PER_PAPER
    ef_search = min(1000, max(settings.HNSW_EF_SEARCH, n))
    # Local to the caller's transaction: other queries on this connection keep the defaults.
    cursor.execute(
        "SELECT set_config('hnsw.ef_search', %s, true),"
        " set_config('hnsw.iterative_scan', 'relaxed_order', true)",
        [str(ef_search)],
    )
    while True:
        params: dict = {"q": q, "model": model, "limit": limit}
        cursor.execute(_HNSW.format(where=_where(filters, params)), params)
        rows = cursor.fetchall()
        hits = _best_per_paper(rows)
        if len(hits) >= n or len(rows) < limit or limit >= n * 8:
            return hits[:n]
        limit *= 2  # many passages of the same papers: ask for more


def dense_search(
    cursor,
    vector,
    model: str,
    filters: SearchFilters,
    n: int,
    *,
    exact_max: int | None = None,
    plan: str | None = None,
) -> DenseResult:
    """The `n` papers whose passages (of `model`) are closest to `vector`, within `filters`.

    Must run inside a transaction (the HNSW settings are transaction-local). When at least `n`
    papers pass the filters, exactly `n` come back. `plan` forces "exact" or "hnsw" (benchmarks);
    by default the bounded count against `exact_max` (settings.DENSE_EXACT_MAX) decides.
    """
    if plan not in (None, "exact", "hnsw"):
        raise ValueError(f"unknown dense plan {plan!r}")
    if n <= 0:
        return DenseResult([], "none")
    if filters.paper_ids is not None and not filters.paper_ids:
        return DenseResult([], "none")
    q = vector_literal(vector)
    exact_max = settings.DENSE_EXACT_MAX if exact_max is None else exact_max
    if plan == "exact" or (
        plan is None
        and filters.narrows
        and _bounded_count(cursor, model, filters, exact_max) <= exact_max
    ):
        return DenseResult(_exact(cursor, q, model, filters, n), "exact")
    hits = _hnsw(cursor, q, model, filters, n)
    if len(hits) < n:
        # The iterative scan gave up (hnsw.max_scan_tuples) before finding n papers, or the
        # catalogue has fewer: the exact scan tells which, and is cheap in both cases.
        return DenseResult(_exact(cursor, q, model, filters, n), "hnsw+exact")
    return DenseResult(hits, "hnsw")


def paper_vector(cursor, paper_id: int, model: str) -> np.ndarray | None:
    """A paper's direction in `model`'s space (mean of its passages), for "papers like this"."""
    cursor.execute(
        "SELECT avg(embedding)::text FROM papers_passage WHERE paper_id = %s AND model = %s",
        [paper_id, model],
    )
    row = cursor.fetchone()
    if not row or row[0] is None:
        return None
    vector = np.array([float(x) for x in row[0].strip("[]").split(",")], dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else None

"""Dense retrieval: pgvector cosine distance over Passage rows of the active embedding model.

One result per paper (its closest passage). Filters are applied inside the SQL. Three plans:

- HNSW (`papers_passage_hnsw_idx`) with `hnsw.iterative_scan = relaxed_order`: the index keeps
  producing neighbours until enough rows pass the filters (model, window, ids) instead of
  stopping after `ef_search` candidates and returning fewer than k. Relaxed order means the rows
  come back nearly sorted; they are sorted again here.
- Exact scan: every passage that passes the filters, ordered by true distance. Chosen for a
  narrow window, a rare category or an author, where it is both exact and faster than walking
  the graph past thousands of filtered-out neighbours, and as the fallback whenever the index
  returns fewer papers than asked.
- Years: the window cut at calendar years that have their own partial HNSW index
  (papers.indexing.periods, built once a year holds DENSE_YEAR_INDEX_MIN abstracts); each
  covered year is walked in its own small graph, the rest of the window scanned exactly, and
  the lists merged (a paper lies in one year). For the windows in between, where both plans
  above cost most.

Which plan. An exact scan costs about one unit per passage in the window (W); an iterative HNSW
scan visits about rows / selectivity = rows * N / W index tuples, each costing ~COST_RATIO units
(graph hops, neighbour distances). So the exact scan wins while W^2 < COST_RATIO * rows * N: the
threshold grows with the catalogue (N) instead of being a fixed number of papers. Measured
(docs/BENCHMARKS.md): at 57k passages a 3k-paper window is 4x faster exact and a 16k one 3x
faster by HNSW; at 1M and 135 rows, a 31k window 5x faster exact and 63k even. W comes from the
planner's estimate (EXPLAIN, ~0.3 ms whatever the window; exact counting cost 3-14 ms at 1M),
N from pg_class (the entries of the abstracts' partial index, chunks not counted);
`settings.DENSE_EXACT_MAX` is the threshold's floor. A wrong estimate costs
time, never results: a short HNSW answer falls back to the exact scan.

Both costs are largest where they meet: at 1M abstracts and 135 rows, sqrt(40 * 135 * 1M) = 73k
passages, ~70 ms either way. A year's index removes the filtering: walking it for R rows costs
about YEAR_WALK_RATIO * R / share units (share: the part of the year's time in the window), plus
SEGMENT_COST a query, against the share * entries of an exact scan of that year. A window costs
the sum over its years (each by the cheaper way) plus the exact scan of its unindexed rest; the
plan with the lowest total runs. Measured on 200k and 1M synthetic vectors (docs/BENCHMARKS.md,
"Dense windows year by year"): COST_RATIO 20-30 at 200k and 40-55 at 1M for the catalogue-wide
index (40 is used), 45-100 for walks of year indexes (60 is used). Those runs stored their
passages in date order; where they lie in none (papers embedded in any order: the 1M text
benchmark), a window's rows each sit on a page of their own and an exact-scan row costs up to
RANDOM_ROW_COST, priced from the column's correlation (`exact_row_cost`).

What is filtered where. The window, the model and paper-id lists are columns of Passage and stay
in the scan. Joining every scanned passage to its paper (a wide row) to read `hidden` cost more
than the distances themselves (10 us a row), so hidden papers are dropped after the scan, from
a slightly longer list, with a retry on the rare occasion that leaves fewer than n. A category
filter is turned into the list of matching paper ids when that list is short (it then feeds the
exact scan); a broad category is joined inside the HNSW scan.

Vectors of another model share the index but never the results: `model = %s` is always a filter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import numpy as np
from django.conf import settings

from papers.indexing.periods import year_bounds_sql, year_indexes

from .filters import SearchFilters

# Extra rows asked for, beyond n papers: papers with several passages, and hidden papers.
SLACK = 1.25
MARGIN = 10
# Cost of one tuple of an iterative HNSW scan, in rows of an exact scan (fitted on the 200k and 1M
# benchmarks: module docstring).
COST_RATIO = 40


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


# Literal, so the planner matches the partial HNSW index of the kind (papers_passage_hnsw_idx
# for abstracts, papers_chunk_hnsw_idx for full-text chunks): never a parameter.
KIND_CLAUSES = {"abstract": "ps.kind = 'abstract'", "fulltext": "ps.kind = 'fulltext'"}

# The cosine distance as each precision's index is built (the expression must match the index's
# for the planner to use it). Chunks are compared at half precision, as papers_chunk_hnsw_idx
# holds them: half the index at the same recall (1M chunks, docs/BENCHMARKS.md).
DISTANCES = {
    "vector": "ps.embedding <=> %(q)s::vector",
    "halfvec": "ps.embedding::halfvec({dims}) <=> %(q)s::halfvec({dims})",
}
KIND_PRECISIONS = {"abstract": "vector", "fulltext": "halfvec"}


def distance_sql(kind: str, precision: str | None = None) -> str:
    """The distance of `kind`'s passages to %(q)s, at `precision` (default: the kind's index's)."""
    return DISTANCES[precision or KIND_PRECISIONS[kind]].format(
        dims=settings.EMBEDDING_DIMENSIONS
    )


def passage_where(
    filters: SearchFilters, params: dict, kind: str = "abstract", year: int | None = None
) -> str:
    """Conditions on Passage columns only: kind, model, window, paper ids, exclusions; with
    `year`, that year's bounds spelt as its index's predicate (papers.indexing.periods)."""
    clauses = [KIND_CLAUSES[kind], "ps.model = %(model)s", filters.date_conditions("ps.published", params)]
    if year is not None:
        clauses.append(year_bounds_sql(year, "ps.published"))
    if filters.paper_ids is not None:
        params["f_paper_ids"] = list(filters.paper_ids)
        clauses.append("ps.paper_id = ANY(%(f_paper_ids)s)")
    if filters.exclude_ids:
        params["f_exclude"] = list(filters.exclude_ids)
        clauses.append("ps.paper_id <> ALL(%(f_exclude)s)")
    return " AND ".join(clauses)


_HNSW = """
SELECT ps.paper_id, ps.id, {distance} AS distance, ps.published
FROM papers_passage ps {join}
WHERE {where}
ORDER BY {distance}
LIMIT %(limit)s
"""

# OFFSET 0 fences the subquery, so the ORDER BY above it cannot be answered by the HNSW index: a
# true scan of the filtered rows, kept by a top-N heap sort (a DISTINCT ON (paper_id) here sorted
# the whole window: 10-25% slower at 12k-40k rows). Papers with several passages are merged in
# Python (_best_per_paper), asking for more rows when that leaves fewer than n papers.
_EXACT = """
SELECT paper_id, passage_id, distance, published FROM (
    SELECT ps.paper_id, ps.id AS passage_id, {distance} AS distance, ps.published
    FROM papers_passage ps
    WHERE {where}
    OFFSET 0
) scanned
ORDER BY distance, paper_id
LIMIT %(limit)s
"""

_ESTIMATE_WINDOW = """
EXPLAIN (FORMAT JSON) SELECT 1 FROM papers_passage ps
WHERE {kind} AND ps.model = %(model)s AND {dates}
"""
# Bounded list: its cost grows with the cap, not with the catalogue.
_CATEGORY_PAPERS = """
SELECT p.id FROM papers_paper p WHERE {dates} AND {papers} LIMIT %(cap)s
"""


def _window_estimate(cursor, model: str, filters: SearchFilters, kind: str = "abstract") -> float:
    """The planner's estimate of the passages of `model` (and `kind`) in the window."""
    params: dict = {"model": model}
    dates = filters.date_conditions("ps.published", params)
    cursor.execute(_ESTIMATE_WINDOW.format(kind=KIND_CLAUSES[kind], dates=dates), params)
    return float(cursor.fetchone()[0][0]["Plan"]["Plan Rows"])


# N is the kind's own index (partial: kind = 'abstract', or 'fulltext'), not the table: full-text
# chunks (~20 a read paper) share the table, and counting them made every window of a 57k
# catalogue with 1M chunks look like a 1M one, so all of them went to the exact scan; and the
# chunk search, judged by the abstracts' numbers, scanned exactly windows 18x too large
# (docs/BENCHMARKS.md, "chunk vectors at scale"). reltuples is -1 until the first ANALYZE; then
# the table's count stands in.
KIND_INDEXES = {"abstract": "papers_passage_hnsw_idx", "fulltext": "papers_chunk_hnsw_idx"}
_INDEX_ENTRIES = """
SELECT coalesce((SELECT reltuples FROM pg_class WHERE oid = to_regclass(%s)), -1),
       (SELECT reltuples FROM pg_class WHERE oid = 'papers_passage'::regclass)
"""


def crossover(rows: int, entries: float, exact_max: int) -> float:
    """Window size (passages) below which an exact scan beats the index: module docstring."""
    return max(float(exact_max), math.sqrt(COST_RATIO * rows * max(entries, 0.0)))


def _index_entries(cursor, kind: str = "abstract") -> float:
    """Passages in the kind's catalogue-wide index (the table's rows before the first ANALYZE)."""
    cursor.execute(_INDEX_ENTRIES, [KIND_INDEXES[kind]])
    index, table = cursor.fetchone()
    return float(index if index >= 0 else table)


def exact_threshold(cursor, rows: int, exact_max: int, kind: str = "abstract") -> float:
    """Up to how many passages an exact scan beats the index, for `rows` wanted rows."""
    return crossover(rows, _index_entries(cursor, kind), exact_max)


def _category_papers(cursor, filters: SearchFilters, cap: int) -> tuple[int, ...] | None:
    """Visible papers in the categories (and window, ids), or None when more than `cap`."""
    params: dict = {"cap": cap + 1}
    dates = filters.date_conditions("p.published", params)
    papers, params = filters.paper_conditions("p", params)
    cursor.execute(_CATEGORY_PAPERS.format(dates=dates, papers=papers), params)
    ids = tuple(row[0] for row in cursor.fetchall())
    return ids if len(ids) <= cap else None


def _best_per_paper(rows) -> list[DenseHit]:
    best: dict[int, DenseHit] = {}
    for paper_id, passage_id, distance, published in rows:
        hit = best.get(paper_id)
        if hit is None or distance < hit.distance:
            best[paper_id] = DenseHit(paper_id, passage_id, float(distance), published)
    return sorted(best.values(), key=lambda h: (h.distance, h.paper_id))


def hidden_papers(cursor, paper_ids: list[int], filters: SearchFilters) -> set[int]:
    """Of these papers, those the filters leave out: hidden ones, withdrawn ones."""
    if not paper_ids:
        return set()
    excluded = [
        column
        for column, included in (("hidden", filters.include_hidden),
                                 ("withdrawn", filters.include_withdrawn))
        if not included
    ]
    cursor.execute(
        f"SELECT id FROM papers_paper WHERE id = ANY(%s) AND ({' OR '.join(excluded)})",
        [paper_ids],
    )
    return {row[0] for row in cursor.fetchall()}


def _visible(cursor, hits: list[DenseHit], filters: SearchFilters) -> list[DenseHit]:
    if filters.include_hidden and filters.include_withdrawn:
        return hits
    hidden = hidden_papers(cursor, [h.paper_id for h in hits], filters)
    return [h for h in hits if h.paper_id not in hidden]


def _exact(cursor, q: str, model: str, filters: SearchFilters, n: int,
           kind: str = "abstract", precision: str | None = None) -> list[DenseHit]:
    if filters.categories:  # the scan reads Passage only: categories become paper ids
        ids = _category_papers(cursor, filters, cap=10**9) or ()
        if not ids:
            return []
        filters = replace(filters, categories=(), paper_ids=ids)
    limit = int(n * SLACK) + MARGIN
    while True:
        params: dict = {"q": q, "model": model, "limit": limit}
        where = passage_where(filters, params, kind)
        cursor.execute(_EXACT.format(where=where, distance=distance_sql(kind, precision)), params)
        rows = cursor.fetchall()
        hits = _visible(cursor, _best_per_paper(rows), filters)
        if len(hits) >= n or len(rows) < limit:
            return hits[:n]
        limit *= 4  # papers with several passages, or more hidden papers than the margin


def _hnsw(cursor, q: str, model: str, filters: SearchFilters, n: int,
          kind: str = "abstract", year: int | None = None,
          precision: str | None = None) -> list[DenseHit]:
    """Up to `n` papers from the index (fewer when its iterative scan gave up); with `year`,
    from that year's index."""
    limit = int(n * SLACK) + MARGIN
    join, where_papers, category_params = "", "", {}
    if filters.categories:  # broad categories (narrow ones went to the exact scan)
        categories_only = replace(
            filters, include_hidden=True, include_withdrawn=True, paper_ids=None, exclude_ids=()
        )
        where_papers, category_params = categories_only.paper_conditions("p", {})
        join = "JOIN papers_paper p ON p.id = ps.paper_id"
    while True:
        # Local to the caller's transaction: other queries on this connection keep the defaults.
        ef_search = min(1000, max(settings.HNSW_EF_SEARCH, limit))
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', %s, true),"
            " set_config('hnsw.iterative_scan', 'relaxed_order', true)",
            [str(ef_search)],
        )
        params = {"q": q, "model": model, "limit": limit, **category_params}
        where = passage_where(filters, params, kind, year)
        if where_papers:
            where = f"{where} AND {where_papers}"
        distance = distance_sql(kind, precision)
        cursor.execute(_HNSW.format(join=join, where=where, distance=distance), params)
        rows = cursor.fetchall()
        hits = _visible(cursor, _best_per_paper(rows), filters)
        if len(hits) >= n or len(rows) < limit or limit >= n * 8 + MARGIN:
            return hits[:n]
        limit *= 2  # many passages of the same papers, or hidden ones: ask for more


def dense_search(
    cursor,
    vector,
    model: str,
    filters: SearchFilters,
    n: int,
    *,
    exact_max: int | None = None,
    plan: str | None = None,
    kind: str = "abstract",
    precision: str | None = None,
) -> DenseResult:
    """The `n` papers whose passages (of `model`, of `kind`: "abstract", or "fulltext" for
    chunks) are closest to `vector`, within `filters`; each hit names its closest passage.

    Must run inside a transaction (the HNSW settings are transaction-local). When at least `n`
    papers pass the filters, exactly `n` come back. `plan` forces "exact", "hnsw" or "years"
    (benchmarks); by default the cost model of the module docstring decides, with `exact_max`
    (settings.DENSE_EXACT_MAX) as the exact scan's floor. `precision` ("vector" or "halfvec")
    compares at another precision than the kind's index's (benchmarks: the exact truth at full
    precision, an index of the other precision).
    """
    if plan not in (None, *PLANS):
        raise ValueError(f"unknown dense plan {plan!r}")
    if kind not in KIND_CLAUSES:
        raise ValueError(f"unknown passage kind {kind!r}")
    if precision not in (None, *DISTANCES):
        raise ValueError(f"unknown precision {precision!r}")
    if n <= 0 or (filters.paper_ids is not None and not filters.paper_ids):
        return DenseResult([], "none")
    q = vector_literal(vector)
    exact_max = settings.DENSE_EXACT_MAX if exact_max is None else exact_max
    if filters.categories and plan is None:
        ids = _category_papers(cursor, filters, exact_max)
        if ids is not None:  # few enough: exact scan over exactly those papers
            if not ids:
                return DenseResult([], "exact")
            narrowed = replace(filters, categories=(), paper_ids=ids)
            return DenseResult(_exact(cursor, q, model, narrowed, n, kind, precision), "exact")
    if plan is None:
        plan = _choose(cursor, model, filters, n, exact_max, kind)
    if plan == "years":
        years = _year_segments(cursor, filters, n, force=True) if kind == "abstract" else None
        if years is not None:
            return _by_year(cursor, q, model, filters, n, years)
        plan = "hnsw"  # no year index (or not an abstracts' window): the catalogue-wide one
    if plan == "exact":
        return DenseResult(_exact(cursor, q, model, filters, n, kind, precision), "exact")
    hits = _hnsw(cursor, q, model, filters, n, kind, precision=precision)
    if len(hits) < n:
        # The iterative scan gave up (hnsw.max_scan_tuples) before finding n papers, or the
        # catalogue has fewer: the exact scan tells which.
        return DenseResult(_exact(cursor, q, model, filters, n, kind, precision), "hnsw+exact")
    return DenseResult(hits, "hnsw")


PLANS = ("exact", "hnsw", "years")


def _choose(cursor, model: str, filters: SearchFilters, n: int, exact_max: int, kind: str) -> str:
    """The cheapest plan by the module docstring's cost model."""
    if not filters.has_window and filters.paper_ids is None:
        return "hnsw"
    rows = int(n * SLACK) + MARGIN
    if filters.paper_ids is not None and len(filters.paper_ids) <= exact_threshold(
        cursor, rows, exact_max, kind
    ):
        return "exact"
    if not filters.has_window or filters.categories:
        return "hnsw"
    window = _window_estimate(cursor, model, filters, kind)
    if window <= exact_max:
        return "exact"  # the floor: a few milliseconds whatever else it could cost
    entries = _index_entries(cursor, kind)
    row_cost = exact_row_cost(cursor)
    exact = window * row_cost
    # An index whose statistics count no entries yet is not priced (its walk would look 480
    # rows dear for a window of one): walked, as crossover() has it, when over the floor.
    hnsw = window_hnsw_cost(rows, entries, window) if entries > 0 else 0.0
    best, cost = ("exact", exact) if exact <= hnsw else ("hnsw", hnsw)
    if kind == "abstract" and filters.paper_ids is None:
        years = _year_segments(cursor, filters, n, window=window, row_cost=row_cost)
        if years is not None and years.cost < cost:
            return "years"
    return best


# Cost of one exact-scan row when the passages lie on disk in no date order, in rows of a scan
# over passages stored in date order (what COST_RATIO and YEAR_WALK_RATIO were measured against:
# the scale benchmark writes its catalogue in date order). A window's rows are then each on a
# page of its own, so the scan reads ~5x the pages, mostly from outside shared buffers: at 1M
# (bench_search --text, correlation 0.01) 35k rows of Q1 2026 took 430 ms exactly against 90 ms
# walking the year's index at load 12, where the model (1 a row) had chosen the exact scan.
# Measured 2-4.5 (a window whose pages stay in shared buffers costs less); 4 is used.
RANDOM_ROW_COST = 4.0
_HEAP_ORDER = """
SELECT correlation FROM pg_stats
WHERE schemaname = current_schema() AND tablename = 'papers_passage' AND attname = 'published'
"""


def exact_row_cost(cursor) -> float:
    """What an exact-scan row of a window costs, in rows of a date-ordered table: 1 when the
    passages are stored in date order, RANDOM_ROW_COST when in none, between by PostgreSQL's
    own interpolation (the square of the column's correlation, ANALYZE's statistic; 1 before
    the first ANALYZE). `settings.DENSE_ROW_COST_BY_ORDER` off: always 1 (as before)."""
    if not settings.DENSE_ROW_COST_BY_ORDER:
        return 1.0
    cursor.execute(_HEAP_ORDER)
    row = cursor.fetchone()
    if row is None or row[0] is None:
        return 1.0
    return 1.0 + (RANDOM_ROW_COST - 1.0) * (1.0 - float(row[0]) ** 2)


def window_hnsw_cost(rows: int, entries: float, window: float) -> float:
    """Cost of the catalogue-wide index for a window, in rows of an exact scan: rows / share of
    the catalogue in the window index tuples visited, COST_RATIO each."""
    return COST_RATIO * rows * max(entries, 1.0) / max(window, 1.0)


@dataclass(frozen=True, slots=True)
class Segment:
    """A stretch of the window answered by one query: a year's index, or an exact scan."""

    start: datetime | None  # inclusive, like SearchFilters
    end: datetime | None
    year: int | None  # whose index answers it; None: exact scan


@dataclass(frozen=True, slots=True)
class YearPlan:
    cost: float  # in rows of an exact scan
    segments: tuple[Segment, ...]


def _year_segments(cursor, filters: SearchFilters, n: int, *, window: float | None = None,
                   force: bool = False, row_cost: float = 1.0) -> YearPlan | None:
    """The window cut at the years that have an index worth walking (module docstring), and
    the cost of answering it so; None when no year index serves it. `force`: every indexed
    year by its index (benchmarks). Years are UTC calendar years, as the indexes'. `row_cost`:
    an exact-scan row's (exact_row_cost)."""
    indexed = {y: e for y, e in year_indexes(cursor).items() if e > 0}
    if not indexed:
        return None
    rows = int(n * SLACK) + MARGIN
    served: list[tuple[int, datetime, datetime]] = []
    cost = covered = 0.0
    for year in sorted(indexed):
        first, after = _year_start(year), _year_start(year + 1)
        start = max(filters.start or first, first)
        end = min(filters.end or after, after)
        share = (end - start) / (after - first)  # of the year's time, hence of its papers
        if share <= 0:
            continue
        papers = indexed[year] * share
        walk = YEAR_WALK_RATIO * rows / share + SEGMENT_COST
        covered += papers
        if force or walk < papers * row_cost:
            served.append((year, start, min(end, after - EPSILON)))
            cost += walk
        else:
            cost += papers * row_cost  # scanned exactly with its neighbours
    if not served:
        return None
    segments: list[Segment] = []
    before = filters.start  # the next instant not yet covered
    for year, start, end in served:
        if before is None or before < start:
            segments.append(Segment(before, start - EPSILON, None))
        segments.append(Segment(start, end, year))
        before = end + EPSILON
    if filters.end is None or before <= filters.end:
        segments.append(Segment(before, filters.end, None))
    exact_segments = sum(1 for s in segments if s.year is None)
    if window is None:
        window = covered
    # The window's papers outside its indexed years, scanned exactly. None when every year it
    # touches has an index: `covered` (by time share) then falls short of the window only
    # because a year's papers are not spread evenly over it (2026's crowd its first months at
    # 1M: "this year" looked 13k papers short, priced at 4 a row once rows cost by disk order).
    first = filters.start.astimezone(UTC).year if filters.start else None
    last = filters.end.astimezone(UTC).year if filters.end else None
    inside = None not in (first, last) and all(y in indexed for y in range(first, last + 1))
    rest = 0.0 if inside else max(window - covered, 0.0)
    cost += rest * row_cost + SEGMENT_COST * exact_segments
    return YearPlan(cost, tuple(segments))


def _by_year(cursor, q: str, model: str, filters: SearchFilters, n: int,
             plan: YearPlan) -> DenseResult:
    """Each segment's best n (a year's index, or an exact scan), merged: a paper's passages
    share its date, so it lies in one segment only."""
    hits: list[DenseHit] = []
    for segment in plan.segments:
        narrowed = replace(filters, start=segment.start, end=segment.end)
        if segment.year is None:
            hits += _exact(cursor, q, model, narrowed, n)
            continue
        found = _hnsw(cursor, q, model, narrowed, n, year=segment.year)
        if len(found) < n:  # gave up, or the stretch holds fewer: exact over it tells
            found = _exact(cursor, q, model, narrowed, n)
        hits += found
    hits.sort(key=lambda h: (h.distance, h.paper_id))
    return DenseResult(hits[:n], "years")


def _year_start(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


# One more query (a round trip, planning, starting an index walk), in rows of an exact scan.
SEGMENT_COST = 500
# COST_RATIO of a year index's walk: measured 45-63 a tuple (200k and 1M, a year and a 6%
# window) and ~100 when a window walks four years (their pages compete for shared buffers).
YEAR_WALK_RATIO = 60
EPSILON = timedelta(microseconds=1)  # timestamptz resolution: inclusive ends of segments


def paper_vector(cursor, paper_id: int, model: str) -> np.ndarray | None:
    """A paper's direction in `model`'s space (mean of its passages), for "papers like this"."""
    cursor.execute(
        "SELECT avg(embedding)::text FROM papers_passage"
        " WHERE paper_id = %s AND model = %s AND kind = 'abstract'",
        [paper_id, model],
    )
    row = cursor.fetchone()
    if not row or row[0] is None:
        return None
    vector = np.array([float(x) for x in row[0].strip("[]").split(",")], dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else None

"""Dense retrieval at scale: `manage.py bench_search --scale 1000000` (scratch database).

N synthetic papers get one 384-d passage vector each, with publication dates spread evenly over
1995..2026. They are written with the real schema (papers + passages) so
`chat.retrieval.dense.dense_search` runs unchanged, then the HNSW index is built with the
production definition (m=16, ef_construction=64, cosine) and its build time and size reported.
Queries are fresh draws from the same distribution; recall@10 of the index is measured against
the exact scan in the same run, at several `hnsw.ef_search`.

The vectors. Text embeddings have a low intrinsic dimension: they vary along a few dozen
directions, in topical clusters. So points are drawn from a mixture of 2,000 Gaussians in a
32-d latent space, mapped into 384-d by a fixed orthonormal basis, plus a little isotropic noise.
Their neighbour profile (mean cosine of the 1st / 10th / 100th / 1000th nearest: 0.81 / 0.76 /
0.61 / 0.43 among 200k) looks like that of real sentence embeddings. A mixture drawn in the full
384-d space instead makes all members of a cluster nearly equidistant (10th and 11th neighbour
0.001 apart at 0.76): no index can rank such near-ties, and HNSW recall@10 fell to 0.83 at
ef_search 100 on 1M of them.

The PostgreSQL backend doing the heavy work is reniced (and its parallel workers), as the machine
is shared.
"""

from __future__ import annotations

import functools
import json
import os
import statistics
import threading
import time
from datetime import UTC, datetime

import numpy as np
from django.db import connection, transaction

from bench.evaluation import percentile
from chat.retrieval.dense import dense_search
from chat.retrieval.filters import SearchFilters

CLUSTERS = 2000
LATENT = 32  # intrinsic dimension
SPREAD = 0.6  # of each cluster, in the latent space (centres ~ N(0, 1))
AMBIENT = 0.2  # isotropic noise in 384-d, relative to a unit vector
BATCH = 50_000
START = datetime(1995, 1, 1, tzinfo=UTC)
END = datetime(2026, 11, 21, tzinfo=UTC)


@functools.cache
def _basis() -> np.ndarray:
    """A fixed orthonormal (384, LATENT) map from the latent space into the vector space (once:
    a QR per call cost tens of ms on a loaded machine, BLAS threads fighting for the cores)."""
    return np.linalg.qr(np.random.default_rng(1).normal(size=(384, LATENT)))[0]


def _vectors(rng, centres, n):
    return vectors_around(rng, centres[rng.integers(0, len(centres), n)])


def vectors_around(rng, around: np.ndarray) -> np.ndarray:
    """One vector drawn around each row of `around` (latent centres, one a vector)."""
    n = len(around)
    latent = around + rng.normal(0, SPREAD, (n, LATENT))
    vectors = latent @ _basis().T
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors += rng.normal(0, AMBIENT / np.sqrt(384), vectors.shape)
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


class _Renicer:
    """Lower the priority of this connection's backend and its parallel workers while alive."""

    def __init__(self, niceness: int = 10):
        self.niceness = niceness
        self.stop = threading.Event()
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            self.leader = cursor.fetchone()[0]
        self._renice(self.leader)

    def _renice(self, pid: int) -> None:
        try:
            os.setpriority(os.PRIO_PROCESS, pid, self.niceness)
        except (PermissionError, ProcessLookupError, OSError):
            pass  # not allowed here: run at normal priority

    def watch_workers(self):
        import psycopg

        settings = connection.settings_dict

        def poll():
            with psycopg.connect(
                dbname=settings["NAME"], user=settings["USER"], host=settings["HOST"],
                port=settings["PORT"] or None, autocommit=True,
            ) as conn:  # fmt: skip
                while not self.stop.wait(0.5):
                    rows = conn.execute(
                        "SELECT pid FROM pg_stat_activity WHERE leader_pid = %s", [self.leader]
                    ).fetchall()
                    for (pid,) in rows:
                        self._renice(pid)

        thread = threading.Thread(target=poll, daemon=True)
        thread.start()
        return thread


def centres(seed: int = 42) -> np.ndarray:
    """The latent cluster centres every synthetic vector is drawn around."""
    return np.random.default_rng(seed).normal(size=(CLUSTERS, LATENT))


def draw(count: int, seed: int) -> np.ndarray:
    """`count` synthetic vectors (queries use another seed than the stored passages)."""
    return _vectors(np.random.default_rng(seed), centres(), count)


def write_passages(model: str, say, seed: int = 42) -> int:
    """One synthetic passage vector for every paper without one, by binary COPY."""
    from pgvector.psycopg import register_vector

    rng = np.random.default_rng(seed)
    points = centres()
    raw = connection.connection
    register_vector(raw)
    with raw.cursor() as cursor:
        cursor.execute(
            "SELECT id, published FROM papers_paper p WHERE NOT EXISTS"
            " (SELECT 1 FROM papers_passage s WHERE s.paper_id = p.id AND s.model = %s)"
            " ORDER BY id",
            [model],
        )
        papers = cursor.fetchall()
    columns = ["int8", "varchar", "int2", "int4", "int4", "timestamptz", "vector", "timestamptz"]
    now = datetime.now(UTC)
    with raw.cursor() as cursor:
        with cursor.copy(
            'COPY papers_passage (paper_id, model, position, start, "end", published,'
            " embedding, created_at) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(columns)
            for offset in range(0, len(papers), BATCH):
                chunk = papers[offset : offset + BATCH]
                vectors = _vectors(rng, points, len(chunk))
                for (paper_id, published), vector in zip(chunk, vectors, strict=True):
                    copy.write_row((paper_id, model, 0, 0, 0, published, vector, now))
                say(f"  {offset + len(chunk)}/{len(papers)} vectors")
    if not raw.autocommit:
        raw.commit()
    return len(papers)


def build_index(say) -> dict:
    """(Re)create the production HNSW index, reniced; its build time and size."""
    renicer = _Renicer()
    info = {}
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS papers_passage_hnsw_idx")
        say("building the HNSW index (m=16, ef_construction=64)")
        cursor.execute("VACUUM ANALYZE papers_passage")
        cursor.execute("SET maintenance_work_mem = '4GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        watcher = renicer.watch_workers()
        started = time.perf_counter()
        try:
            cursor.execute(
                "CREATE INDEX papers_passage_hnsw_idx ON papers_passage"
                " USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
                " WHERE kind = 'abstract'"  # as the migration makes it: partial, abstracts only
            )
        finally:
            renicer.stop.set()
            watcher.join()
        info["hnsw_build_s"] = round(time.perf_counter() - started, 1)
        cursor.execute("RESET maintenance_work_mem")
        cursor.execute("RESET max_parallel_maintenance_workers")
        cursor.execute("VACUUM ANALYZE")
        cursor.execute(
            "SELECT pg_size_pretty(pg_relation_size('papers_passage_hnsw_idx')),"
            " pg_size_pretty(pg_total_relation_size('papers_passage'))"
        )
        info["hnsw_size"], info["passages_total_size"] = cursor.fetchone()
    return info


def load(n: int, model: str, say) -> dict:
    """n synthetic papers with one synthetic passage each, and the HNSW index over them."""
    info: dict = {"papers": n}
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM papers_passage WHERE model = %s", [model])
        have = cursor.fetchone()[0]
        cursor.execute("SELECT to_regclass('papers_passage_hnsw_idx') IS NOT NULL")
        indexed = cursor.fetchone()[0]
    if have != n:
        _Renicer()
        started = time.perf_counter()
        say(f"writing {n} synthetic papers")
        span = (END - START).total_seconds()
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE papers_paper CASCADE")
            cursor.execute("DROP INDEX IF EXISTS papers_passage_hnsw_idx")
            cursor.execute(
                """
                INSERT INTO papers_paper (arxiv_id, version, title, abstract, authors_text,
                    primary_category, categories, published, updated, doi, journal_ref, comments,
                    license, withdrawn, hidden, created_at, modified_at)
                SELECT 'syn.' || i, 1, 'synthetic paper ' || i, '', '', 'cs.LG', '{cs.LG}',
                    %s::timestamptz + make_interval(secs => %s * i / %s),
                    %s::timestamptz + make_interval(secs => %s * i / %s),
                    '', '', '', '', false, false, now(), now()
                FROM generate_series(1, %s) AS i
                """,
                [START, span, n, START, span, n, n],
            )
        write_passages(model, say)
        info["write_s"] = round(time.perf_counter() - started, 1)
        indexed = False
    if not indexed:
        info.update(build_index(say))
    else:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_size_pretty(pg_relation_size('papers_passage_hnsw_idx')),"
                " pg_size_pretty(pg_total_relation_size('papers_passage'))"
            )
            info["hnsw_size"], info["passages_total_size"] = cursor.fetchone()
    return info


def measure(model: str, info: dict, say, queries: int = 100, recall_queries: int = 30) -> dict:
    """p50/p95 of dense_search at k=10 and at 100 candidates, windows, recall vs exact scan."""
    from django.conf import settings

    vectors = draw(queries, seed=7)
    result: dict = {}

    def timed(filters, n, plan=None, count=queries):
        times, hits, plans = [], [], {}
        for vector in vectors[:count]:
            with transaction.atomic(), connection.cursor() as cursor:
                started = time.perf_counter()
                found = dense_search(cursor, vector, model, filters, n, plan=plan)
                times.append((time.perf_counter() - started) * 1000)
            hits.append([h.paper_id for h in found.hits])
            plans[found.plan] = plans.get(found.plan, 0) + 1
        return times, hits, plans

    say("warm-up")
    timed(SearchFilters(), 10, count=20)
    rows = []
    windows = [
        ("everything", SearchFilters()),
        ("last 2 years", SearchFilters(start=datetime(2024, 11, 21, tzinfo=UTC))),
        ("year 2016", SearchFilters(start=datetime(2016, 1, 1, tzinfo=UTC), end=datetime(2016, 12, 31, 23, 59, tzinfo=UTC))),
        ("last month", SearchFilters(start=datetime(2026, 10, 21, tzinfo=UTC))),
    ]  # fmt: skip
    for name, filters in windows:
        for n in (10, settings.SEARCH_CANDIDATES):
            # The automatic choice, then each plan forced (windows only: an exact scan of
            # everything is the recall baseline below).
            for plan in (None, "exact", "hnsw") if filters.has_window else (None,):
                say(f"timing {name}, {n} papers, plan {plan or 'auto'}")
                times, hits, plans = timed(
                    filters, n, plan=plan, count=queries if plan is None else 30
                )
                rows.append(
                    {
                        "window": name,
                        "papers_wanted": n,
                        "plan": plan or "auto",
                        "p50_ms": round(statistics.median(times), 2),
                        "p95_ms": round(percentile(times, 95), 2),
                        "plans": plans,
                        "always_full": all(len(h) == n for h in hits),
                    }
                )
    result["dense_search"] = rows

    say(f"recall@10 against the exact scan ({recall_queries} queries)")
    exact_times, truth, _ = timed(SearchFilters(), 10, plan="exact", count=recall_queries)
    sweep = []
    configured = settings.HNSW_EF_SEARCH
    for ef in (40, 100, 200):
        settings.HNSW_EF_SEARCH = ef
        times, found, _ = timed(SearchFilters(), 10, plan="hnsw", count=recall_queries)
        recall = statistics.mean(
            len(set(t).intersection(f)) / 10 for t, f in zip(truth, found, strict=True)
        )
        sweep.append(
            {
                "ef_search": ef,
                "recall@10": round(recall, 4),
                "p50_ms": round(statistics.median(times), 2),
            }
        )
    settings.HNSW_EF_SEARCH = configured
    result["recall"] = {
        "exact_scan_p50_ms": round(statistics.median(exact_times), 1),
        "sweep": sweep,
    }
    return result


# Windows ending today, as a share of the catalogue's span, and whole calendar years.
WINDOW_SHARES = (0.005, 0.02, 0.06, 0.2, 0.5, 1.0)
WINDOW_YEARS = (2016,)


def build_year_indexes(minimum: int, say) -> dict:
    """The partial HNSW index of every year with at least `minimum` abstracts, as the indexing
    job makes them (papers.indexing.periods), reniced; build time and total size."""
    from papers.indexing.periods import ensure_year_indexes

    _Renicer()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
    say(f"building year indexes (years with >= {minimum} abstracts)")
    started = time.perf_counter()
    years = ensure_year_indexes(minimum)
    info = {
        "year_indexes_built": years,
        "year_indexes_build_s": round(time.perf_counter() - started, 1),
    }
    with connection.cursor() as cursor:
        cursor.execute("RESET maintenance_work_mem")
        cursor.execute(
            "SELECT count(*), pg_size_pretty(sum(pg_relation_size(c.oid))) FROM pg_class c"
            " WHERE c.relname LIKE 'papers_passage_hnsw_y%' AND c.relkind = 'i'"
        )
        info["year_indexes"], info["year_indexes_size"] = cursor.fetchone()
    return info


def timed_dense_search(vector, model: str, filters: SearchFilters, n: int, plan: str):
    """One dense search with `plan` forced ("auto": the product's own choice), and its ms."""
    with transaction.atomic(), connection.cursor() as cursor:
        started = time.perf_counter()
        found = dense_search(
            cursor, vector, model, filters, n, plan=None if plan == "auto" else plan
        )
        return found, (time.perf_counter() - started) * 1000


def _window_filters(share_or_year) -> tuple[str, SearchFilters]:
    if isinstance(share_or_year, int):
        year = share_or_year
        return f"year {year}", SearchFilters(
            start=datetime(year, 1, 1, tzinfo=UTC),
            end=datetime(year, 12, 31, 23, 59, 59, tzinfo=UTC),
        )
    if share_or_year >= 1:
        return "everything", SearchFilters()
    return f"last {share_or_year:.1%}", SearchFilters(start=END - (END - START) * share_or_year)


def window_sweep(model: str, say, n: int, queries: int = 20) -> list[dict]:
    """Per window: each plan forced and the automatic choice, the same queries interleaved (so a
    noisy machine slows them alike); p50/p95, recall@10 against the exact scan, plans chosen."""
    vectors = draw(queries, seed=7)
    rows = []
    for window in (*WINDOW_SHARES, *WINDOW_YEARS):
        name, filters = _window_filters(window)
        with connection.cursor() as cursor:
            params: dict = {"model": model}
            cursor.execute(
                "SELECT count(*) FROM papers_passage ps WHERE ps.kind = 'abstract'"
                f" AND ps.model = %(model)s AND {filters.date_conditions('ps.published', params)}",
                params,
            )
            papers = cursor.fetchone()[0]
        # Forcing "years" on the whole catalogue scans every unindexed year exactly: pointless.
        plans = (
            ("exact", "hnsw", "years", "auto") if filters.has_window else ("exact", "hnsw", "auto")
        )
        times: dict = {p: [] for p in plans}
        recall: dict = {p: [] for p in plans}
        chosen: dict = {}
        say(f"window {name} ({papers} papers), {n} papers wanted")
        for vector in vectors:
            truth = None
            for plan in plans:
                found, ms = timed_dense_search(vector, model, filters, n, plan)
                times[plan].append(ms)
                top = [h.paper_id for h in found.hits[:10]]
                truth = top if truth is None else truth  # "exact" runs first
                recall[plan].append(len(set(top) & set(truth)) / 10)
                if plan == "auto":
                    chosen[found.plan] = chosen.get(found.plan, 0) + 1
        for plan in plans:
            rows.append(
                {
                    "window": name,
                    "papers": papers,
                    "plan": plan,
                    "p50_ms": round(statistics.median(times[plan]), 1),
                    "p95_ms": round(percentile(times[plan], 95), 1),
                    "recall@10": round(statistics.mean(recall[plan]), 3),
                    **({"chosen": chosen} if plan == "auto" else {}),
                }
            )
            say(f"  {plan:6s} {json.dumps(rows[-1])}")
    return rows

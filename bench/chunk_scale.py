"""Full-text chunk vectors at scale beside the 57k papers: `bench_search --chunks N` (#12.8).

Reading full text multiplies vectors by about 20 a paper. The scratch database (`bench_chunks`,
reused with --keep-db) holds the 57k sample through the real import, BM25 index, one synthetic
abstract vector a paper and the abstracts' HNSW index, as `bench_search` builds it; then N
synthetic passages of kind 'fulltext' spread evenly over the papers (about N / 57k each, with
positions, pages and spans; vectors from the same clustered distribution as bench.scale, another
seed) and the production partial index `papers_chunk_hnsw_idx` (m=16, ef_construction=64,
WHERE kind = 'fulltext').

Measured, with query vectors drawn fresh from that distribution:
- the direct chunk search (HNSW over the chunks, one best chunk a paper, `SEARCH_CANDIDATES`
  papers, as doc-then-chunk retrieval asks it), p50/p95;
- the whole search: `search()` over the 192 queries of the 57k benchmark (abstracts: BM25 and
  dense) followed by that chunk search, p50/p95 of the sum (an upper bound: the app runs the
  chunk search beside BM25);
- recall@10 (papers) of the chunk index against the exact scan of the same run;
- halfvec: a second partial index over `embedding::halfvec(384)`, its size, recall and speed.
"""

from __future__ import annotations

import statistics
import time
from datetime import UTC, datetime

import numpy as np
from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import connection, transaction

from bench import scale as bench_scale
from bench.evaluation import percentile
from chat.retrieval.dense import vector_literal
from chat.retrieval.search import search

CHUNK_SEED = 1212
HALFVEC_INDEX = "bench_chunk_halfvec_idx"
# Nearest chunks per query, enough to cover n papers (a paper's chunks cluster together).
_CHUNKS = """
SELECT ps.paper_id, ps.embedding <=> %(q)s::vector AS distance
FROM papers_passage ps
WHERE ps.kind = 'fulltext' AND ps.model = %(model)s
ORDER BY ps.embedding <=> %(q)s::vector
LIMIT %(limit)s
"""
_CHUNKS_HALF = """
SELECT ps.paper_id, ps.embedding::halfvec(384) <=> %(q)s::halfvec(384) AS distance
FROM papers_passage ps
WHERE ps.kind = 'fulltext' AND ps.model = %(model)s
ORDER BY ps.embedding::halfvec(384) <=> %(q)s::halfvec(384)
LIMIT %(limit)s
"""
_EXACT = """
SELECT paper_id, min(ps.embedding <=> %(q)s::vector) AS distance
FROM papers_passage ps
WHERE ps.kind = 'fulltext' AND ps.model = %(model)s
GROUP BY paper_id ORDER BY distance, paper_id LIMIT %(limit)s
"""


def write_chunks(n: int, model: str, say) -> int:
    """N fulltext passages spread over the papers, by binary COPY (no index yet)."""
    from pgvector.psycopg import register_vector

    rng = np.random.default_rng(CHUNK_SEED)
    points = bench_scale.centres()
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, published FROM papers_paper ORDER BY id")
        papers = cursor.fetchall()
    per_paper = -(-n // len(papers))
    raw = connection.connection
    register_vector(raw)
    columns = ["int8", "varchar", "varchar", "int2", "int4", "int4", "int2", "int2",
               "timestamptz", "vector", "timestamptz"]  # fmt: skip
    now = datetime.now(UTC)
    # Chunks, paper by paper; a paper's chunks share a topic: each is drawn around one of two
    # centres picked for that paper. Drawn in one numpy call per batch of papers.
    plan = []  # (paper_id, published, position)
    for paper_id, published in papers:
        count = min(per_paper, n - len(plan))
        if count <= 0:
            break
        plan.extend((paper_id, published, position) for position in range(count))
    pairs = rng.integers(0, len(points), (len(papers), 2))
    paper_index = {paper_id: i for i, (paper_id, _) in enumerate(papers)}
    with raw.cursor() as cursor:
        with cursor.copy(
            'COPY papers_passage (paper_id, model, kind, position, start, "end", page, page_end,'
            " published, embedding, created_at) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(columns)
            for offset in range(0, len(plan), bench_scale.BATCH):
                batch = plan[offset : offset + bench_scale.BATCH]
                rows = [paper_index[paper_id] for paper_id, _, _ in batch]
                which = rng.integers(0, 2, len(batch))
                vectors = bench_scale.vectors_around(rng, points[pairs[rows, which]])
                for (paper_id, published, position), vector in zip(batch, vectors, strict=True):
                    page = 1 + position // 2
                    start = position * 1500
                    copy.write_row(
                        (paper_id, model, "fulltext", position, start, start + 1600, page, page,
                         published, vector, now)
                    )  # fmt: skip
                say(f"  {offset + len(batch)}/{len(plan)} chunk vectors")
    if not raw.autocommit:
        raw.commit()
    return len(plan)


def _build(sql: str, say) -> float:
    renicer = bench_scale._Renicer()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '2GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        watcher = renicer.watch_workers()
        started = time.perf_counter()
        try:
            cursor.execute(sql)
        finally:
            renicer.stop.set()
            watcher.join()
        seconds = time.perf_counter() - started
        cursor.execute("RESET maintenance_work_mem")
        cursor.execute("RESET max_parallel_maintenance_workers")
    return round(seconds, 1)


def load_chunks(n: int, model: str, say, halfvec: bool) -> dict:
    info: dict = {"chunks": n}
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM papers_passage WHERE kind = 'fulltext'")
        have = cursor.fetchone()[0]
    if have != n:
        with connection.cursor() as cursor:
            cursor.execute("DROP INDEX IF EXISTS papers_chunk_hnsw_idx")
            cursor.execute(f"DROP INDEX IF EXISTS {HALFVEC_INDEX}")
            cursor.execute("DELETE FROM papers_passage WHERE kind = 'fulltext'")
        say(f"writing {n} synthetic chunk vectors")
        started = time.perf_counter()
        write_chunks(n, model, say)
        info["chunks_write_s"] = round(time.perf_counter() - started, 1)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE papers_passage")
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('papers_chunk_hnsw_idx') IS NOT NULL")
        if not cursor.fetchone()[0]:
            say("building papers_chunk_hnsw_idx (m=16, ef_construction=64, kind = 'fulltext')")
            info["chunk_hnsw_build_s"] = _build(
                "CREATE INDEX papers_chunk_hnsw_idx ON papers_passage USING hnsw"
                " (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
                " WHERE kind = 'fulltext'",
                say,
            )
        cursor.execute(f"SELECT to_regclass('{HALFVEC_INDEX}') IS NOT NULL")
        if halfvec and not cursor.fetchone()[0]:
            say(f"building {HALFVEC_INDEX} (halfvec(384), same parameters)")
            info["halfvec_build_s"] = _build(
                f"CREATE INDEX {HALFVEC_INDEX} ON papers_passage USING hnsw"
                " ((embedding::halfvec(384)) halfvec_cosine_ops)"
                " WITH (m = 16, ef_construction = 64) WHERE kind = 'fulltext'",
                say,
            )
        cursor.execute("ANALYZE papers_passage")
        cursor.execute(
            "SELECT pg_size_pretty(pg_relation_size('papers_chunk_hnsw_idx')),"
            f" pg_size_pretty(coalesce(pg_relation_size(to_regclass('{HALFVEC_INDEX}')), 0)),"
            " pg_size_pretty(pg_relation_size('papers_passage_hnsw_idx')),"
            " pg_size_pretty(pg_total_relation_size('papers_passage'))"
        )
        (
            info["chunk_hnsw"],
            info["chunk_halfvec_hnsw"],
            info["abstract_hnsw"],
            info["passages_total"],
        ) = cursor.fetchone()
    return info


def chunk_papers(vector, model: str, n: int, *, half: bool = False) -> list[int]:
    """The direct chunk search: n papers by their closest chunk (HNSW, iterative scan). No
    hidden papers in this database, so no visibility check (the app's costs ~0.5 ms)."""
    limit = int(n * 3) + 10
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', %s, true),"
            " set_config('hnsw.iterative_scan', 'relaxed_order', true)",
            [str(min(1000, max(settings.HNSW_EF_SEARCH, limit)))],
        )
        cursor.execute(
            _CHUNKS_HALF if half else _CHUNKS,
            {"q": vector_literal(vector), "model": model, "limit": limit},
        )
        best: dict[int, float] = {}
        for paper_id, distance in cursor.fetchall():
            if paper_id not in best or distance < best[paper_id]:
                best[paper_id] = distance
    return sorted(best, key=lambda p: (best[p], p))[:n]


def exact_papers(vector, model: str, n: int) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(_EXACT, {"q": vector_literal(vector), "model": model, "limit": n})
        return [row[0] for row in cursor.fetchall()]


def measure(model: str, queries: list[str], now, say, recall_queries: int = 30) -> dict:
    candidates = settings.SEARCH_CANDIDATES
    vectors = bench_scale.draw(len(queries), seed=7)
    say("warm-up")
    for vector in vectors[:20]:
        chunk_papers(vector, model, candidates)
    run = async_to_sync(search)
    chunk_ms, search_ms, whole_ms = [], [], []
    say(f"whole search: search() + chunk search, {len(queries)} queries")
    for query, vector in zip(queries, vectors, strict=True):
        started = time.perf_counter()
        run(query, k=10, now=now)
        middle = time.perf_counter()
        chunk_papers(vector, model, candidates)
        ended = time.perf_counter()
        search_ms.append((middle - started) * 1000)
        chunk_ms.append((ended - middle) * 1000)
        whole_ms.append((ended - started) * 1000)
    result: dict = {
        "chunk_search_p50_ms": round(statistics.median(chunk_ms), 1),
        "chunk_search_p95_ms": round(percentile(chunk_ms, 95), 1),
        "search_p50_ms": round(statistics.median(search_ms), 1),
        "whole_p50_ms": round(statistics.median(whole_ms), 1),
        "whole_p95_ms": round(percentile(whole_ms, 95), 1),
    }
    say(f"recall@10 of the chunk index vs exact scan ({recall_queries} queries)")
    exact_ms, recalls, half_recalls, half_ms = [], [], [], []
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT to_regclass('{HALFVEC_INDEX}') IS NOT NULL")
        has_half = cursor.fetchone()[0]
    for vector in bench_scale.draw(recall_queries, seed=99):
        started = time.perf_counter()
        truth = set(exact_papers(vector, model, 10))
        exact_ms.append((time.perf_counter() - started) * 1000)
        recalls.append(len(truth.intersection(chunk_papers(vector, model, 10))) / 10)
        if has_half:
            started = time.perf_counter()
            found = chunk_papers(vector, model, 10, half=True)
            half_ms.append((time.perf_counter() - started) * 1000)
            half_recalls.append(len(truth.intersection(found)) / 10)
    result["exact_scan_p50_ms"] = round(statistics.median(exact_ms), 1)
    result["recall@10"] = round(statistics.mean(recalls), 3)
    if has_half:
        result["halfvec_recall@10"] = round(statistics.mean(half_recalls), 3)
        result["halfvec_k10_p50_ms"] = round(statistics.median(half_ms), 1)
    return result

"""BM25 and hybrid search over N papers with real-looking text: `bench_search --text N`.

Setup, each step timed and kept in the scratch database (`bench_text`, reused with --keep-db):
1. bench.text_corpus grows N papers from the 57k sample into a snapshot file (cached beside
   the data directory's other files);
2. the real `import_snapshot` imports it (titles, abstracts, authors, search_vector);
3. the real BM25 index (`papers.indexing.lexical.index_papers`, the ingest job's batches);
4. one synthetic vector per paper (bench.scale) and the production HNSW index.
Then the Command measures `search()` over the 57k benchmark's 192 queries, and here: the BM25
candidate cap's top 10 against exhaustive BM25 for the same query text and window.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import connection

from bench import scale as bench_scale
from bench import text_corpus
from bench.evaluation import percentile
from chat.retrieval.filters import SearchFilters
from chat.retrieval.fulltext import lexical_search
from chat.retrieval.search import search
from papers.indexing.lexical import index_papers
from papers.ingest.snapshot import import_snapshot

INDEX_STEP = 20_000  # papers per progress line (index_papers batches them by 2,000 inside)


def _count(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")
        return cursor.fetchone()[0]


def sizes() -> dict:
    relations = {
        "papers_table": "pg_total_relation_size('papers_paper')",
        "papers_fts_gin": "pg_relation_size('papers_paper_fts_idx')",
        "bm25_lexicon": "pg_total_relation_size('papers_paperlexicon')",
        "bm25_terms": "pg_total_relation_size('papers_lexicalterm')",
        "passages_total": "pg_total_relation_size('papers_passage')",
        "hnsw": "pg_relation_size('papers_passage_hnsw_idx')",
    }
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT " + ", ".join(f"pg_size_pretty({expr})" for expr in relations.values())
        )
        values = cursor.fetchone()
        cursor.execute("SELECT count(*) FROM papers_lexicalterm")
        terms = cursor.fetchone()[0]
    return {**dict(zip(relations, values, strict=True)), "bm25_distinct_terms": terms}


def load(n: int, snapshot: Path, model: str, say) -> dict:
    info: dict = {"papers": n}
    have = _count("papers_paper")
    if have != n:
        if have > n:
            with connection.cursor() as cursor:
                cursor.execute(
                    "TRUNCATE papers_paper, papers_paperlexicon, papers_lexicalterm,"
                    " papers_lexicalstats CASCADE"
                )
        # Fewer: an interrupted import; the import skips the papers it already has.
        out = Path(settings.DATA_DIR) / f"bench-text-{n}.jsonl.gz"
        if not out.is_file():
            say(f"growing {n} papers from {snapshot.name} into {out}")
            started = time.perf_counter()
            info["corpus"] = text_corpus.write_snapshot(snapshot, n, out, say)
            info["generate_s"] = round(time.perf_counter() - started, 1)
        say(f"importing {out} (import_snapshot)")
        started = time.perf_counter()

        def progress(done, total, counts):
            if counts.new // 50_000 != getattr(progress, "last", -1):
                progress.last = counts.new // 50_000
                say(f"  {counts.new} papers imported")

        import_snapshot(out, progress=progress)
        info["import_s"] = round(time.perf_counter() - started, 1)
    if _count("papers_paperlexicon") != n:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT p.id FROM papers_paper p WHERE NOT EXISTS"
                " (SELECT 1 FROM papers_paperlexicon l WHERE l.paper_id = p.id) ORDER BY p.id"
            )
            ids = [row[0] for row in cursor.fetchall()]
        say(f"BM25 index: {len(ids)} papers (papers.indexing.lexical.index_papers)")
        started = time.perf_counter()
        for offset in range(0, len(ids), INDEX_STEP):
            index_papers(ids[offset : offset + INDEX_STEP])
            say(f"  {offset + len(ids[offset : offset + INDEX_STEP])}/{len(ids)} indexed")
        info["bm25_index_s"] = round(time.perf_counter() - started, 1)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM papers_passage WHERE model = %s", [model])
        have = cursor.fetchone()[0]
        cursor.execute("SELECT to_regclass('papers_passage_hnsw_idx') IS NOT NULL")
        indexed = cursor.fetchone()[0]
    if have != n:
        with connection.cursor() as cursor:  # an index would be updated row by row: 100x slower
            cursor.execute("DROP INDEX IF EXISTS papers_passage_hnsw_idx")
        started = time.perf_counter()
        say("synthetic passage vectors (bench.scale)")
        bench_scale.write_passages(model, say)
        info["vectors_s"] = round(time.perf_counter() - started, 1)
        indexed = False
    if not indexed:
        info.update(bench_scale.build_index(say))
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
        cursor.execute("SELECT min(published)::date, max(published)::date FROM papers_paper")
        first, last = cursor.fetchone()
    info["dates"] = f"{first} .. {last}"
    info["sizes"] = sizes()
    return info


def bm25_agreement(queries: list[str], now, say) -> dict:
    """Capped BM25 against exhaustive BM25, same text and window as search() uses."""
    run = async_to_sync(search)
    capped_ms, full_ms, identical, overlap, exact = [], [], 0, [], 0
    for query in queries:
        analysis = run(query, k=10, now=now).analysis
        filters = SearchFilters(start=analysis.start, end=analysis.end)
        with connection.cursor() as cursor:
            started = time.perf_counter()
            capped = lexical_search(cursor, analysis.query, filters, settings.SEARCH_CANDIDATES)
            capped_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            full = lexical_search(
                cursor, analysis.query, filters, settings.SEARCH_CANDIDATES, cap=10**9
            )
            full_ms.append((time.perf_counter() - started) * 1000)
        truth = [h.paper_id for h in full.hits[:10]]
        got = [h.paper_id for h in capped.hits[:10]]
        identical += set(truth) == set(got)
        overlap.append(len(set(truth).intersection(got)) / max(len(truth), 1))
        exact += capped.exact
    say(f"BM25 agreement over {len(queries)} queries done")
    return {
        "queries": len(queries),
        "cap": settings.LEXICAL_CANDIDATE_CAP,
        "top10_identical_queries": identical,
        "top10_identical_share": round(identical / len(queries), 3),
        "mean_top10_overlap": round(statistics.mean(overlap), 3),
        "provably_exact": exact,
        "capped_p50_ms": round(statistics.median(capped_ms), 1),
        "capped_p95_ms": round(percentile(capped_ms, 95), 1),
        "exhaustive_p50_ms": round(statistics.median(full_ms), 1),
        "exhaustive_p95_ms": round(percentile(full_ms, 95), 1),
    }


# Windows ending at the catalogue's last day, from a month to four years (the 192 queries' own
# windows are of these sizes), plus one year in the past.
SWEEP_DAYS = (31, 92, 183, 365, 730, 1461)


def window_sweep(model: str, say, queries: int = 15) -> dict:
    """At SEARCH_CANDIDATES papers: exact scan, iterative HNSW and the automatic choice over
    windows of growing size, and the cost ratio of one HNSW tuple to one exact row they imply
    (chat.retrieval.dense.COST_RATIO): hnsw_ms / (rows * N / W)  over  exact_ms / W."""
    from datetime import timedelta

    from django.db import transaction

    from chat.retrieval.dense import MARGIN, SLACK, dense_search

    n = settings.SEARCH_CANDIDATES
    rows_wanted = int(n * SLACK) + MARGIN
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT max(published), count(*) FROM papers_passage WHERE kind = 'abstract'"
        )
        last, total = cursor.fetchone()
    vectors = bench_scale.draw(queries, seed=7)
    rows = []
    for days in SWEEP_DAYS:
        filters = SearchFilters(start=last - timedelta(days=days))
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM papers_passage WHERE kind = 'abstract' AND published >= %s",
                [filters.start],
            )
            window = cursor.fetchone()[0]
        times: dict[str, list[float]] = {"auto": [], "exact": [], "hnsw": []}
        chosen: dict[str, int] = {}
        for plan in ("exact", "hnsw", "auto"):
            for vector in vectors:
                with transaction.atomic(), connection.cursor() as cursor:
                    started = time.perf_counter()
                    found = dense_search(
                        cursor, vector, model, filters, n, plan=None if plan == "auto" else plan
                    )
                    times[plan].append((time.perf_counter() - started) * 1000)
                if plan == "auto":
                    chosen[found.plan] = chosen.get(found.plan, 0) + 1
        p50 = {plan: statistics.median(values) for plan, values in times.items()}
        tuples = rows_wanted * total / max(window, 1)
        ratio = (p50["hnsw"] / tuples) / (p50["exact"] / max(window, 1))
        rows.append(
            {
                "days": days,
                "window": window,
                "share": round(window / total, 3),
                **{f"{plan}_p50_ms": round(ms, 1) for plan, ms in p50.items()},
                "auto_plans": chosen,
                "implied_cost_ratio": round(ratio, 1),
            }
        )
        say(f"  window {days} days: {rows[-1]}")
    return {"papers": total, "rows_wanted": rows_wanted, "windows": rows}

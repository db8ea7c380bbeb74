"""BM25 and hybrid search over N papers with real-looking text: `bench_search --text N`.

Setup, each step timed and kept in the scratch database (`bench_text`, reused with --keep-db):
1. bench.text_corpus grows N papers from the 57k sample, loaded in bulk (`insert_papers`: COPY
   into a staging table, then the ingest's own tsvector expression in SQL on two connections);
2. the real BM25 index, rebuilt in bulk (`papers.indexing.lexical.rebuild`, with champions);
3. one synthetic vector per paper (bench.scale), the production HNSW index, and the partial
   HNSW index of every year with `settings.DENSE_YEAR_INDEX_MIN` abstracts, as the indexing job
   builds them (papers.indexing.periods), so the dense stage runs as in production.
Then the Command measures `search()` over the 57k benchmark's 192 queries, and here: BM25's top
10 against exhaustive BM25 for the same query text and window.
"""

from __future__ import annotations

import statistics
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import connection

from bench import scale as bench_scale
from bench import text_corpus
from bench.evaluation import percentile
from chat.retrieval.filters import SearchFilters
from chat.retrieval.fulltext import lexical_search
from chat.understanding.analysis import analyse
from papers.embeddings import get_embedder
from papers.embeddings.query_cache import remember
from papers.indexing import lexical
from papers.indexing.periods import ensure_lexicon_year_indexes
from papers.ingest.upsert import SEARCH_VECTOR


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
        "bm25_champions": "pg_total_relation_size('papers_lexicalchampion')",
        "bm25_year_floors": "pg_total_relation_size('papers_lexicaltermyear')",
        "passages_total": "pg_total_relation_size('papers_passage')",
        "hnsw": "pg_relation_size('papers_passage_hnsw_idx')",
        "bm25_gin": "pg_relation_size('papers_lexicon_terms_idx')",
        "bm25_year_gins": "(SELECT coalesce(sum(pg_relation_size(oid)), 0) FROM pg_class"
        " WHERE relname LIKE 'papers_lexicon_terms_y%' AND relkind = 'i')",
    }
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT " + ", ".join(f"pg_size_pretty({expr})" for expr in relations.values())
        )
        values = cursor.fetchone()
        cursor.execute("SELECT count(*), count(champion_floor) FROM papers_lexicalterm")
        terms, walked = cursor.fetchone()
        cursor.execute("SELECT count(*) FROM papers_lexicalchampion")
        champions = cursor.fetchone()[0]
        cursor.execute("SELECT count(*), count(DISTINCT term_id) FROM papers_lexicaltermyear")
        year_floors, year_floored_terms = cursor.fetchone()
    return {
        **dict(zip(relations, values, strict=True)),
        "bm25_distinct_terms": terms,
        "terms_with_champions": walked,
        "champion_postings": champions,
        "year_floors": year_floors,
        "terms_with_year_floors": year_floored_terms,
    }


_INSERT = f"""
INSERT INTO papers_paper (
    arxiv_id, version, title, abstract, authors_text, primary_category, categories,
    published, updated, doi, journal_ref, comments, license, withdrawn, hidden,
    search_vector, created_at, modified_at)
SELECT v.arxiv_id, 1, v.title, v.abstract, v.authors_text, v.primary_category, v.categories,
       v.published, v.published, '', '', '', '', false, false, {SEARCH_VECTOR}, now(), now()
FROM ({text_corpus.GROW}) v
ON CONFLICT (arxiv_id) DO NOTHING
"""
INSERT_CHUNK = 20_000
WORKERS = 2  # the machine's cores


def _in_threads(work, items: list, say, label: str) -> None:
    """`work(item)` for each item on WORKERS threads, each with its own connection."""
    done = 0

    def run(item):
        try:
            return work(item)
        finally:
            connection.close()

    with ThreadPoolExecutor(WORKERS) as pool:
        for count in pool.map(run, items):
            done += count
            say(f"  {done} {label}")


def insert_papers(n: int, snapshot: Path, say) -> dict:
    """The grown papers into papers_paper in bulk: the sample into two unlogged tables (COPY),
    then each chunk grown *and* inserted by one INSERT ... SELECT (text_corpus.GROW) with the
    ingest's own tsvector expression, on two connections, with the table's secondary indexes
    dropped and rebuilt after (one sort each instead of 1M inserts). No authorship rows: no
    benchmark query names an author."""
    info = {}
    started = time.perf_counter()
    papers, sentences = text_corpus.sample_tables(snapshot, say)
    connection.ensure_connection()
    raw = connection.connection
    with raw.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS bench_sample, bench_sentence")
        cursor.execute(
            "CREATE UNLOGGED TABLE bench_sample (sid int PRIMARY KEY, title text,"
            " title_plain text, authors_text text, authors_plain text, primary_category text,"
            " categories text[], created timestamptz, sentences int, pool_start int,"
            " pool_length int)"
        )
        cursor.execute(
            "CREATE UNLOGGED TABLE bench_sentence (pos int PRIMARY KEY, text text, plain text)"
        )
        with cursor.copy("COPY bench_sample FROM STDIN") as copy:
            for row in papers:
                copy.write_row(row)
        with cursor.copy("COPY bench_sentence FROM STDIN") as copy:
            for row in sentences:
                copy.write_row(row)
        cursor.execute("ANALYZE bench_sample")
        cursor.execute("ANALYZE bench_sentence")
    if not raw.autocommit:
        raw.commit()
    info["sample_s"] = round(time.perf_counter() - started, 1)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.tablename = 'papers_paper'"
            " AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)"
        )
        indexes = cursor.fetchall()
        for name, _ in indexes:
            cursor.execute(f'DROP INDEX "{name}"')

    def insert(lo: int) -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                _INSERT, {"lo": lo, "hi": min(lo + INSERT_CHUNK, n), "sample": len(papers)}
            )
        return min(lo + INSERT_CHUNK, n) - lo

    _in_threads(insert, list(range(0, n, INSERT_CHUNK)), say, "papers grown and inserted")
    info["insert_s"] = round(time.perf_counter() - started, 1)
    started = time.perf_counter()
    say(f"  rebuilding {len(indexes)} indexes of papers_paper")
    with connection.cursor() as cursor:
        for _, definition in indexes:
            cursor.execute(definition)
        cursor.execute("DROP TABLE bench_sample, bench_sentence")
    info["paper_indexes_s"] = round(time.perf_counter() - started, 1)
    return info


def load(n: int, snapshot: Path, model: str, say) -> dict:
    info: dict = {"papers": n}
    have = _count("papers_paper")
    if have != n:
        if have > n:
            with connection.cursor() as cursor:
                cursor.execute(
                    "TRUNCATE papers_paper, papers_paperlexicon, papers_lexicalterm,"
                    " papers_lexicalstats, papers_lexicalchampion, papers_lexicaltermyear CASCADE"
                )
        say(f"growing {n} papers from {snapshot.name} (bulk COPY + INSERT)")
        started = time.perf_counter()
        info.update(insert_papers(n, snapshot, say))
        info["import_s"] = round(time.perf_counter() - started, 1)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE papers_paper")
    if _count("papers_paperlexicon") != n:
        say(f"BM25 index of {n} papers (papers.indexing.lexical.rebuild, {WORKERS} connections)")
        started = time.perf_counter()
        lexical.rebuild(
            progress=lambda done, total: say(f"  {done}/{total} indexed"), workers=WORKERS
        )
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
    # The year indexes the indexing job builds (a no-op once every year is covered).
    started = time.perf_counter()
    if built := ensure_lexicon_year_indexes():
        info["lexicon_year_indexes_built"] = built
        info["lexicon_year_indexes_s"] = round(time.perf_counter() - started, 1)
    info.update(bench_scale.build_year_indexes(settings.DENSE_YEAR_INDEX_MIN, say))
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
        cursor.execute("SELECT min(published)::date, max(published)::date FROM papers_paper")
        first, last = cursor.fetchone()
    info["dates"] = f"{first} .. {last}"
    info["sizes"] = sizes()
    return info


# Query vectors. search() embeds a query with the real model, but the passages' vectors are
# synthetic (bench.scale): a MiniLM vector lies outside their 32-d latent space, at cosine ~0.2
# from every passage (below the relevance gate's 0.40: every query "has nothing relevant"),
# which is the HNSW worst case: at 1M its walks took twice as long as a query's among the
# passages (no window 46 against 28 ms, "since 2023" 131 against 60; load 7-13). So each query
# text gets a vector of the passages' own distribution, mixed with isotropic noise so that its
# best passage's cosine is ~0.6 like a real query's best abstract (QUERY_MIX 0.7 at 1M: 0.60 /
# 0.57 for the 1st / 10th), and search() finds it in the query cache, running unchanged.
QUERY_MIX = 0.7


def query_vector_for(text: str) -> np.ndarray:
    """The synthetic query vector of `text`: the same text, the same vector in every run."""
    rng = np.random.default_rng(zlib.crc32(text.encode()))
    centre = bench_scale.centres()[rng.integers(0, bench_scale.CLUSTERS, 1)]
    among = bench_scale.vectors_around(rng, centre)[0]
    noise = rng.normal(size=among.shape)
    vector = QUERY_MIX * among + np.sqrt(1 - QUERY_MIX**2) * noise / np.linalg.norm(noise)
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def use_synthetic_query_vectors(queries: list[str], now) -> int:
    """search() will embed each query's text (the analysis's, date phrases removed) as
    `query_vector_for` it; returns how many texts."""
    embedder = get_embedder()
    texts = {analyse(query, now).query.strip() for query in queries} - {""}
    for text in texts:
        remember(embedder, text, query_vector_for(text))
    return len(texts)


def bm25_agreement(
    queries: list[str], now, say, setting: str = "LEXICAL_YEAR_FLOORS", values=(None,)
) -> dict:
    """BM25 as search() runs it against exhaustive BM25 (every paper with a query term scored),
    same text and window as search()'s rule analysis gives (no dense retrieval needed). With
    several `values` of a boolean `setting` (None: as configured), each runs on every query,
    one after the other, so they meet the same cache: one result per value, "NAME on/off"."""
    full_ms: list[float] = []
    saved = getattr(settings, setting)
    runs = {saved if value is None else value: _Agreement() for value in values}
    try:
        for query in queries:
            analysis = analyse(query, now)
            filters = SearchFilters(start=analysis.start, end=analysis.end)
            with connection.cursor() as cursor:
                started = time.perf_counter()
                full = lexical_search(
                    cursor, analysis.query, filters, settings.SEARCH_CANDIDATES, cap=10**9
                )
                full_ms.append((time.perf_counter() - started) * 1000)
                for value, run in runs.items():
                    setattr(settings, setting, value)
                    started = time.perf_counter()
                    fast = lexical_search(
                        cursor, analysis.query, filters, settings.SEARCH_CANDIDATES
                    )
                    run.add(query, filters, fast, full, (time.perf_counter() - started) * 1000)
    finally:
        setattr(settings, setting, saved)
    say(f"BM25 agreement over {len(queries)} queries done")
    results = {
        f"{setting} {'on' if value else 'off'}": dict(
            run.summary(), exhaustive_p50_ms=round(statistics.median(full_ms), 1),
            exhaustive_p95_ms=round(percentile(full_ms, 95), 1),
        )
        for value, run in runs.items()
    }  # fmt: skip
    return next(iter(results.values())) if len(results) == 1 else results


class _Agreement:
    """One BM25 setting's tally against exhaustive BM25."""

    def __init__(self):
        self.ms: list[float] = []
        self.identical = self.exact = 0
        self.overlap: list[float] = []
        self.generators: dict[str, int] = {}
        self.by_window: dict[str, list[float]] = {"no window": [], "window": []}
        self.slowest: list[tuple] = []
        self.years = self.years_read = 0

    def add(self, query, filters, fast, full, ms: float) -> None:
        self.ms.append(ms)
        self.by_window["window" if filters.has_window else "no window"].append(ms)
        truth = [h.paper_id for h in full.hits[:10]]
        got = [h.paper_id for h in fast.hits[:10]]
        self.identical += truth == got
        self.overlap.append(len(set(truth).intersection(got)) / max(len(truth), 1))
        self.exact += fast.exact
        self.generators[fast.generator] = self.generators.get(fast.generator, 0) + 1
        self.years += fast.years
        self.years_read += fast.years_read
        self.slowest.append(
            (ms, query, fast.generator, fast.walks, fast.walked, fast.years_read, fast.years)
        )

    def summary(self) -> dict:
        queries = len(self.ms)
        return {
            "queries": queries,
            "cap": settings.LEXICAL_CANDIDATE_CAP,
            "walk_depth": settings.LEXICAL_WALK_DEPTH,
            "exact_head": settings.LEXICAL_EXACT_HEAD,
            "top10_identical_queries": self.identical,
            "top10_identical_share": round(self.identical / queries, 3),
            "mean_top10_overlap": round(statistics.mean(self.overlap), 3),
            "provably_exact": self.exact,
            "generators": self.generators,
            # Years of the windows (the catalogue's for none) / of those read whole for a term.
            "years_read_of_years": [self.years_read, self.years],
            "bm25_p50_ms": round(statistics.median(self.ms), 1),
            "bm25_p95_ms": round(percentile(self.ms, 95), 1),
            "bm25_by_window_p50_p95_ms": {
                key: [round(statistics.median(ms), 1), round(percentile(ms, 95), 1)]
                for key, ms in self.by_window.items()
                if ms
            },
            # (ms, query, generator, walks, walked, years read, years)
            "slowest": [
                [round(row[0], 1), *row[1:]] for row in sorted(self.slowest, reverse=True)[:10]
            ],
        }


# Windows ending at the catalogue's last day, from a month to four years (the 192 queries' own
# windows are of these sizes), plus one year in the past.
SWEEP_DAYS = (31, 92, 183, 365, 730, 1461)


def window_sweep(model: str, say, queries: int = 15) -> dict:
    """At SEARCH_CANDIDATES papers: exact scan, iterative HNSW and the automatic choice over
    windows of growing size, and the cost ratio of one HNSW tuple to one exact row they imply
    (chat.retrieval.dense.COST_RATIO): hnsw_ms / (rows * N / W)  over  exact_ms / W."""
    from datetime import timedelta

    from chat.retrieval.dense import MARGIN, SLACK

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
                found, ms = bench_scale.timed_dense_search(vector, model, filters, n, plan)
                times[plan].append(ms)
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

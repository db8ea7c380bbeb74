"""Full-text chunk vectors at scale beside the 57k papers: `bench_search --chunks N` (#12.8).

Reading full text multiplies vectors by about 20 a paper. The scratch database (`bench_chunks`,
reused with --keep-db) holds the 57k sample through the real import, BM25 index, one synthetic
abstract vector a paper and the abstracts' HNSW index, as `bench_search` builds it; then:

- N synthetic passages of kind 'fulltext' spread evenly over the papers (ceil(N / papers) each,
  so the last papers have none, as unread papers do), with positions, pages and character spans;
  vectors from the same clustered distribution as bench.scale (another seed), each paper's chunks
  around two of its centres; written by binary COPY;
- a FullText row (status ok) for each paper with chunks, whose text is its title and abstract
  repeated to the chunks' spans, so the product's best-chunk stage reads and tokenises real
  English of a chunk's length (real bodies compress less: more TOAST to read), and each chunk's
  words (Passage.lexemes) for the chunk word search;
- each read paper's sentence sketch (chat.retrieval.sentence_sketch), as reading it makes one;
- the product's chunk index exactly as the model declares it (papers_chunk_hnsw_idx: halfvec,
  m=16, ef_construction=64, WHERE kind = 'fulltext'), and with --compare-precision the same
  index at the other precision (full `vector`), both built reniced with maintenance_work_mem
  large enough for the graph.

Measured, all through the product's code (chat.retrieval.search.search, dense_search):
- the whole search, `search()` over the 192 queries of the 57k benchmark (a topic x a date
  phrase) with FULLTEXT_RETRIEVAL = "fused" (the default: BM25 and dense over abstracts, the
  direct chunk search fused as a third list, the best chunks of the page's papers) against the
  same search with "off" (abstracts only), alternating query by query in this process: p50/p95
  of each, with and without a date window, the stages' times, and CPU-ms per search. The query
  vectors are drawn from the stored vectors' distribution and handed to search() through the
  query-vector cache (papers.embeddings.query_cache), so the chunk index sees the queries it
  would see in production (a MiniLM vector of a topic is unrelated to synthetic vectors); the
  embedding itself (~5 ms of MiniLM, cached for a repeated topic) is then absent from both;
- recall of the chunk index (product plan "hnsw") against the exact scan at full precision in
  the same run, at 10 papers (the target) and at SEARCH_CANDIDATES (what the chunk stage asks),
  for each precision built, with their times.
"""

from __future__ import annotations

import math
import os
import statistics
import time
import zlib
from datetime import UTC, datetime
from importlib import import_module

import numpy as np
from asgiref.sync import async_to_sync
from django.conf import settings
from django.contrib.postgres.indexes import OpClass
from django.db import connection, transaction
from django.db.models import Q
from django.db.models.functions import Cast
from django.test import override_settings
from pgvector.django import HalfVectorField, HnswIndex

from bench import scale as bench_scale
from bench.cpu import CpuMeter
from bench.evaluation import percentile
from chat.retrieval import sentence_sketch
from chat.retrieval.chunks import CHUNKS_PER_PAPER, forget_analysed_chunks
from chat.retrieval.dense import KIND_PRECISIONS, dense_search
from chat.retrieval.filters import SearchFilters
from chat.retrieval.search import search
from chat.understanding.analysis import analyse
from papers.embeddings.query_cache import query_vector
from papers.indexing import chunkwords, lexical
from papers.indexing.lexical import BODIES
from papers.models import Passage

CHUNK_SEED = 1212
# A chunk's span and the step between chunks (an overlap of 100 characters), in FullText.text.
CHUNK_CHARS = 1600
CHUNK_STEP = 1500
PRODUCT_INDEX = "papers_chunk_hnsw_idx"
# The HNSW graph of 1M chunks must fit in memory during the build, or pgvector goes on
# on disk many times slower (halfvec ~1.3 GB, vector ~2.1 GB at 1M).
BUILD_MEMORY = "3GB"


def product_precision() -> str:
    return KIND_PRECISIONS["fulltext"]


def other_precision() -> str:
    return "vector" if product_precision() == "halfvec" else "halfvec"


def chunk_indexes(compare: bool) -> dict[str, HnswIndex]:
    """precision: index. The product's from the model; the other precision's built alike."""
    product = next(i for i in Passage._meta.indexes if i.name == PRODUCT_INDEX)
    indexes = {product_precision(): product}
    if compare:
        precision = other_precision()
        options = dict(m=product.m, ef_construction=product.ef_construction,
                       condition=Q(kind="fulltext"), name=f"bench_chunk_{precision}_idx")  # fmt: skip
        if precision == "vector":
            other = HnswIndex(fields=["embedding"], opclasses=["vector_cosine_ops"], **options)
        else:
            half = Cast("embedding", HalfVectorField(dimensions=settings.EMBEDDING_DIMENSIONS))
            other = HnswIndex(OpClass(half, name="halfvec_cosine_ops"), **options)
        indexes[precision] = other
    return indexes


def write_chunks(n: int, model: str, say) -> int:
    """N fulltext passages spread over the papers, by binary COPY (no index yet), and the
    FullText row each paper with chunks needs for its chunks' text."""
    from pgvector.psycopg import register_vector

    rng = np.random.default_rng(CHUNK_SEED)
    points = bench_scale.centres()
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, published, title, abstract FROM papers_paper ORDER BY id")
        papers = cursor.fetchall()
    per_paper = -(-n // len(papers))
    raw = connection.connection
    register_vector(raw)
    columns = ["int8", "varchar", "varchar", "int2", "int4", "int4", "int2", "int2",
               "timestamptz", "vector", "timestamptz"]  # fmt: skip
    now = datetime.now(UTC)
    counts = [max(0, min(per_paper, n - i * per_paper)) for i in range(len(papers))]
    written = 0
    # A paper's chunks share a topic: each is drawn around one of two centres picked for it.
    pairs = rng.integers(0, len(points), (len(papers), 2))
    with raw.cursor() as cursor:
        with cursor.copy(
            'COPY papers_passage (paper_id, model, kind, position, start, "end", page, page_end,'
            " published, embedding, created_at) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(columns)
            batch_papers = max(1, bench_scale.BATCH // per_paper)
            for first in range(0, len(papers), batch_papers):
                rows = [i for i in range(first, min(first + batch_papers, len(papers)))
                        for _ in range(counts[i])]  # fmt: skip
                if not rows:
                    break
                which = rng.integers(0, 2, len(rows))
                vectors = bench_scale.vectors_around(rng, points[pairs[rows, which]])
                position, previous = 0, None
                for i, vector in zip(rows, vectors, strict=True):
                    position = position + 1 if i == previous else 0
                    previous = i
                    start = position * CHUNK_STEP
                    page = 1 + position // 2
                    copy.write_row(
                        (papers[i][0], model, "fulltext", position, start, start + CHUNK_CHARS,
                         page, page, papers[i][1], vector, now)
                    )  # fmt: skip
                written += len(rows)
                say(f"  {written}/{n} chunk vectors")
        say("  full texts of the papers with chunks")
        with cursor.copy(
            "COPY papers_fulltext (paper_id, version, status, reason, text, page_starts,"
            " sections, sha256, pages, bytes, parser, requested_at, fetched_at, updated_at,"
            " chunker, recut_failed, recut_reason) FROM STDIN"
        ) as copy:
            for (paper_id, _, title, abstract), count in zip(papers, counts, strict=True):
                if not count:
                    continue
                length = (count - 1) * CHUNK_STEP + CHUNK_CHARS
                base = f"{title}\n\n{abstract}\n\n"
                text = (base * math.ceil(length / len(base)))[:length]
                pages = 1 + (count - 1) // 2
                starts = "{" + ",".join(str(p * 2 * CHUNK_STEP) for p in range(pages)) + "}"
                copy.write_row(
                    (paper_id, 1, "ok", "", text, starts, "[]", "", pages, 0, "synthetic",
                     now, now, now, "", "", "")
                )  # fmt: skip
        say("  the chunks' words (the migration's backfill), before any index over them")
        cursor.execute(import_module("papers.migrations.0012_passage_lexemes").BACKFILL)
    if not raw.autocommit:
        raw.commit()
    return written


def _build(index: HnswIndex, say) -> float:
    """The index, built as the model (or the comparison) declares it; seconds."""
    with connection.schema_editor(atomic=False) as editor:
        sql = str(index.create_sql(Passage, editor))
    say(f"building {index.name}: {sql}")
    renicer = bench_scale._Renicer()
    with connection.cursor() as cursor:
        cursor.execute(f"SET maintenance_work_mem = '{BUILD_MEMORY}'")
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
    say(f"built {index.name} in {seconds:.0f} s")
    return round(seconds, 1)


def load_chunks(n: int, model: str, say, compare: bool) -> dict:
    info: dict = {"chunks": n}
    indexes = chunk_indexes(compare)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM papers_passage WHERE kind = 'fulltext'")
        have = cursor.fetchone()[0]
    if have != n:
        with connection.cursor() as cursor:
            for index in chunk_indexes(True).values():
                cursor.execute(f"DROP INDEX IF EXISTS {index.name}")
            cursor.execute("DELETE FROM papers_passage WHERE kind = 'fulltext'")
            cursor.execute("DELETE FROM papers_fulltext")
        say(f"writing {n} synthetic chunk vectors")
        started = time.perf_counter()
        write_chunks(n, model, say)
        info["chunks_write_s"] = round(time.perf_counter() - started, 1)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE papers_passage")
            cursor.execute("VACUUM ANALYZE papers_fulltext")
    for precision, index in indexes.items():
        if index.name not in _valid_indexes():
            with connection.cursor() as cursor:
                cursor.execute(f"DROP INDEX IF EXISTS {index.name}")
            info[f"{precision}_build_s"] = _build(index, say)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM papers_chunkwordstats")
        built = cursor.fetchone()[0]
    if not built:
        say("the common words' champion lists (papers.indexing.chunkwords)")
        bench_scale._Renicer()  # this connection's backend, as for the index builds
        info["champions"] = chunkwords.rebuild(say, bulk=True)
        with connection.cursor() as cursor:  # (the walk reads the index alone: visibility map)
            cursor.execute("VACUUM ANALYZE papers_chunkchampion")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT documents FROM papers_bodystats),"
            " (SELECT count(*) FROM papers_fulltext WHERE text <> '')"
        )
        bodies, read = cursor.fetchone()
    if bodies != read:
        say(f"the bodies' BM25 index of {read} papers (papers.indexing.lexical.BODIES)")
        started = time.perf_counter()
        lexical.rebuild(
            lambda done, total: say(f"  {done}/{total} bodies"), workers=2, lexicon=BODIES
        )
        info["body_index_s"] = round(time.perf_counter() - started, 1)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE papers_bodylexicon")
            cursor.execute("VACUUM ANALYZE papers_bodychampion")
    stale = len(sentence_sketch.stale_papers())
    if stale:
        say(f"the sentence sketches of {stale} read papers (chat.retrieval.sentence_sketch)")
        started = time.perf_counter()
        every = max(1, stale // 20)

        def progress(done, total):
            if done % every < sentence_sketch.SKETCH_BATCH or done == total:
                say(f"  {done}/{total} papers sketched")

        sentence_sketch.sketch_stale(progress)
        info["sketch_s"] = round(time.perf_counter() - started, 1)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE chat_chunksketch")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_total_relation_size('chat_chunksketch')")
        info["sketches_total_mb"] = round(cursor.fetchone()[0] / 2**20)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT count(*) FROM papers_bodyterm WHERE champion_floor IS NOT NULL),"
            " pg_total_relation_size('papers_bodylexicon'),"
            " pg_total_relation_size('papers_bodychampion')"
        )
        words, lexicon, champions = cursor.fetchone()
        info["body_champion_terms"] = words
        info["body_lexicon_total_mb"] = round(lexicon / 2**20)
        info["body_champions_total_mb"] = round(champions / 2**20)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT count(*) FROM papers_chunkword),"
            " pg_relation_size('papers_chunkchampion'),"
            " pg_total_relation_size('papers_chunkchampion')"
        )
        words, table, total = cursor.fetchone()
        info["champion_words"] = words
        info["champions_table_mb"] = round(table / 2**20)
        info["champions_total_mb"] = round(total / 2**20)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE papers_passage")
        for precision, index in indexes.items():
            cursor.execute("SELECT pg_relation_size(%s::regclass)", [index.name])
            info[f"{precision}_index_mb"] = round(cursor.fetchone()[0] / 2**20, 1)
        cursor.execute(
            "SELECT pg_relation_size('papers_passage_hnsw_idx'),"
            " pg_total_relation_size('papers_passage'), pg_total_relation_size('papers_fulltext')"
        )
        abstract, passages, fulltext = cursor.fetchone()
    info["abstract_index_mb"] = round(abstract / 2**20)
    info["passages_total_mb"] = round(passages / 2**20)
    info["fulltext_total_mb"] = round(fulltext / 2**20)
    return info


def _valid_indexes() -> set[str]:
    """Indexes of the passages that exist and are valid (a build cut short leaves none; the
    migration's empty chunk index is dropped with the chunks before they are written)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " WHERE i.indrelid = 'papers_passage'::regclass AND i.indisvalid"
        )
        return {row[0] for row in cursor.fetchall()}


class SyntheticQueries:
    """Query vectors from the stored vectors' distribution, one per text (seeded by it), under
    the real embedder's name: put in the query-vector cache, search() takes them as the model's."""

    def __init__(self, name: str, dimensions: int):
        self.name, self.dimensions = name, dimensions

    def embed_query(self, text: str) -> np.ndarray:
        return bench_scale.draw(1, seed=zlib.crc32(text.encode()))[0]


def prime_query_vectors(queries: list[str], now, model: str) -> int:
    """The texts search() will embed for `queries` (the topic, once the analysis has taken the
    date phrase out), each given its synthetic vector through the cache."""
    synthetic = SyntheticQueries(model, settings.EMBEDDING_DIMENSIONS)
    texts = {analyse(query, now).query.strip() for query in queries}
    if len(texts) > settings.QUERY_VECTOR_CACHE:
        raise RuntimeError("QUERY_VECTOR_CACHE is smaller than the benchmark's query texts")
    for text in texts:
        query_vector(synthetic, text)
    return len(texts)


# Settings per mode: the product's default, the chunk word search without its champion lists
# (as before papers.indexing.chunkwords), and abstracts only (the baseline). `fused` is the search
# of the page, the API and the CLI (a read paper's best chunk); `fused_cards` the same search as
# the chat asks it (each paper's next best chunks too, for its cards: CHUNKS_PER_PAPER).
MODES = {
    "fused": {"FULLTEXT_RETRIEVAL": "fused"},
    "fused_cards": {"FULLTEXT_RETRIEVAL": "fused"},
    # The full text's word list as before the bodies' index: a paper by its best chunk's BM25.
    "fused_chunks": {"FULLTEXT_RETRIEVAL": "fused", "FULLTEXT_WORD_UNIT": "chunk"},
    "off": {"FULLTEXT_RETRIEVAL": "off"},
}
# search()'s arguments per mode besides the query, k and now.
MODE_ARGUMENTS = {"fused_cards": {"chunks_per_paper": CHUNKS_PER_PAPER}}


def whole_search(queries: list[str], now, say, repeat: int, setting_off: str | None = None) -> dict:
    """search() over `queries` in each of MODES (and the product with the boolean setting
    `setting_off` off, as the mode named after it), query by query in turn, in this process."""
    run = async_to_sync(search)
    modes = dict(MODES)
    if setting_off:
        modes[f"{setting_off.lower()}_off"] = {**MODES["fused"], setting_off: False}
    names = list(modes)
    say("warm-up")
    for name in names:
        with override_settings(**modes[name]):
            for query in queries[:20]:
                run(query, k=10, now=now, **MODE_ARGUMENTS.get(name, {}))
    times = {m: {"all": [], "window": [], "no window": []} for m in names}
    pages: dict[str, dict[str, list[int]]] = {m: {} for m in names}  # query -> its top 10
    shown: dict[str, dict[str, list]] = {m: {} for m in names}  # query -> each hit's passage
    stages: dict[str, dict[str, list[float]]] = {m: {} for m in names}
    plans: dict[str, int] = {}
    meter = CpuMeter()
    overhead = meter.overhead()
    cpu = {m: 0 for m in names}
    load = [os.getloadavg()]
    say(f"whole search, {len(queries)} queries x {len(names)} modes x {repeat}")
    for number in range(repeat):
        for i, query in enumerate(queries):
            # Rotate which mode goes first, so none always finds the others' caches warm.
            shift = (i + number) % len(names)
            for name in names[shift:] + names[:shift]:
                # Each search cold: a mode run after another on the same query would find the
                # page's chunks analysed (chunks.analysed_sentences) and look cheaper.
                forget_analysed_chunks()
                with override_settings(**modes[name]):
                    before = meter.read()
                    started = time.perf_counter()
                    response = run(query, k=10, now=now, **MODE_ARGUMENTS.get(name, {}))
                    ms = (time.perf_counter() - started) * 1000
                    cpu[name] += (meter.read() - before - overhead).total_ns
                windowed = response.analysis.start or response.analysis.end
                pages[name][query] = [h.paper_id for h in response.hits]
                shown[name][query] = [(h.paper_id, h.page, h.passage_text) for h in response.hits]
                times[name]["all"].append(ms)
                times[name]["window" if windowed else "no window"].append(ms)
                for stage, value in response.timings.items():
                    stages[name].setdefault(stage, []).append(value)
                if name == "fused":
                    where = "window" if windowed else "no window"
                    plan = f"{response.plan.get('chunks', 'none')} ({where})"
                    plans[plan] = plans.get(plan, 0) + 1
        say(f"  pass {number + 1}/{repeat}")
    load.append(os.getloadavg())
    count = len(queries) * repeat
    result: dict = {"loadavg_start_end": [[round(x, 1) for x in la] for la in load]}
    for name in names:
        result[name] = {
            group: {"n": len(values), "p50_ms": round(statistics.median(values), 1),
                    "p95_ms": round(percentile(values, 95), 1)}  # fmt: skip
            for group, values in times[name].items()
            if values
        }
        result[name]["cpu_ms_per_search"] = round(cpu[name] / count / 1e6, 1)
        result[name]["stages_p50_ms"] = {
            s: round(statistics.median(v), 1) for s, v in stages[name].items()
        }
        result[name]["stages_p95_ms"] = {
            s: round(percentile(v, 95), 1) for s, v in stages[name].items()
        }
    result["p50_over_off"] = {
        name: {
            group: round(result[name][group]["p50_ms"] / result["off"][group]["p50_ms"], 2)
            for group in times["off"]
            if times["off"][group]
        }
        for name in names
        if name != "off"
    }
    result["chunk_plans"] = plans
    # The page's search ranks only each paper's best chunk: its page must be the chat's, paper by
    # paper and passage by passage (the queries whose pages are identical).
    if "fused_cards" in names:
        result["fused_pages_identical_to_fused_cards"] = (
            f"{sum(shown['fused'][q] == shown['fused_cards'][q] for q in queries)}/{len(queries)}"
        )
    # How much of the product's page the chunk-level word list would change: the share of each
    # query's top 10 the two modes share, on average.
    result["top10_shared_with_fused_chunks"] = {
        name: round(statistics.mean(
            len(set(pages[name][q]) & set(pages["fused_chunks"][q])) / max(1, len(pages[name][q]))
            for q in queries
        ), 3)
        for name in names
        if name not in ("fused_chunks", "off")
    }  # fmt: skip
    return result


def _dense(vector, model: str, n: int, filters=None, **options) -> tuple[list[int], float]:
    with transaction.atomic(), connection.cursor() as cursor:
        started = time.perf_counter()
        found = dense_search(cursor, vector, model, filters or SearchFilters(), n,
                             kind="fulltext", **options)  # fmt: skip
        ms = (time.perf_counter() - started) * 1000
    return [h.paper_id for h in found.hits], ms


def recall(model: str, precisions: list[str], say, queries: int = 30) -> dict:
    """Recall of each precision's index (the product's HNSW plan) against the exact scan at full
    precision, at 10 papers (the target), FULLTEXT_CHUNK_CANDIDATES (what the chunk stage asks)
    and SEARCH_CANDIDATES, with the chunk search's time at each."""
    sizes = sorted({10, settings.FULLTEXT_CHUNK_CANDIDATES, settings.SEARCH_CANDIDATES})
    say(f"recall of the chunk index vs the exact scan ({queries} queries)")
    vectors = bench_scale.draw(queries, seed=99)
    for vector in vectors[:5]:  # warm-up: the indexes' pages into memory
        for precision in precisions:
            _dense(vector, model, sizes[-1], plan="hnsw", precision=precision)
    exact_ms: list[float] = []
    found = {(p, n): ([], []) for p in precisions for n in sizes}  # (recalls, ms)
    for number, vector in enumerate(vectors, start=1):
        truth, ms = _dense(vector, model, sizes[-1], plan="exact", precision="vector")
        exact_ms.append(ms)
        for precision in precisions:
            for n in sizes:
                papers, ms = _dense(vector, model, n, plan="hnsw", precision=precision)
                found[precision, n][0].append(len(set(truth[:n]).intersection(papers)) / n)
                found[precision, n][1].append(ms)
        say(f"  {number}/{queries}")
    result: dict = {"exact_scan_p50_ms": round(statistics.median(exact_ms), 1)}
    for (precision, n), (recalls, times) in found.items():
        result.setdefault(precision, {})[f"{n} papers"] = {
            "recall": round(statistics.mean(recalls), 3),
            "recall_min": round(min(recalls), 2),
            "p50_ms": round(statistics.median(times), 1),
            "p95_ms": round(percentile(times, 95), 1),
        }
    return result


def measure(model: str, queries: list[str], now, say, *, compare: bool, repeat: int = 1,
            recall_queries: int = 30, setting_off: str | None = None) -> dict:  # fmt: skip
    primed = prime_query_vectors(queries, now, model)
    result: dict = {"query_texts": primed, "uptime_start": _uptime()}
    result["whole_search"] = whole_search(queries, now, say, repeat, setting_off)
    if recall_queries:
        precisions = list(chunk_indexes(compare))
        result["chunk_index"] = recall(model, precisions, say, recall_queries)
    result["uptime_end"] = _uptime()
    return result


def _uptime() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg()) + f" at {datetime.now(UTC):%H:%M} UTC"

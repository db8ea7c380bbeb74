"""CPU-milliseconds per search (`manage.py bench_search --cpu`), end to end and by stage.

End to end: `search()` exactly as the chat calls it (BM25 beside the embedding and dense
retrieval on the search lanes), one query at a time, with the CPU of this process and of the
PostgreSQL processes read around each call (bench.cpu). Each pass over the queries is reported
on its own, and as a ratio to a fixed pure-Python workload timed in the same pass, so runs made
under different machine loads compare.

By stage: the same queries through the pipeline's own stage functions, one after another on this
thread and its connection, each metered alone: rule analysis, query embedding, BM25 (Python and
SQL), dense retrieval (Python and SQL), the full-text chunks' dense search, fusion, hydration (papers, passages and the "vectors
pending" check in SQL; snippets and reasons in Python). What the end-to-end cost adds to the
sum of the stages is the orchestration: the event loop, threads and lanes.
"""

from __future__ import annotations

import statistics
from datetime import datetime

from asgiref.sync import async_to_sync
from django.conf import settings

from bench.cpu import ZERO, CpuMeter, CpuSample, busy_baseline
from bench.evaluation import percentile
from chat.retrieval import chunks as fulltext_chunks
from chat.retrieval import search as pipeline
from chat.retrieval.filters import SearchFilters
from chat.retrieval.snippets import make_snippet
from chat.understanding.analysis import analyse
from papers.embeddings import get_embedder

STAGES = ("analysis", "embed", "bm25", "dense", "chunks", "fusion", "hydrate", "snippets")


def measure(queries: list[str], now: datetime, k: int, passes: int, say) -> dict:
    run = async_to_sync(pipeline.search)
    say(f"CPU per search: {len(queries)} queries, warm-up")
    for query in queries[:20]:
        run(query, k=k, now=now)
    meter = CpuMeter()
    say(f"metering this process and PostgreSQL backends {meter.backends}")
    tare = meter.overhead()
    rounds = []
    per_query: list[float] = []
    for number in range(max(passes, 1)):
        baseline = min(busy_baseline() for _ in range(3))
        total = ZERO
        for query in queries:
            before = meter.read()
            run(query, k=k, now=now)
            spent = meter.read() - before - tare
            total = total + spent
            per_query.append(spent.total_ns / 1e6)
        row = {"pass": number + 1, **total.per(len(queries)), "baseline_ms": baseline / 1e6}
        row["total_in_baselines"] = round(total.total_ns / len(queries) / baseline, 3)
        rounds.append(row)
        say(f"  pass {number + 1}: {row}")
    stages = _stages(queries, now, k, meter, tare)
    if not meter.unchanged():
        say("warning: a connection was reopened during the run; SQL CPU may be undercounted")
    totals = [r["total_ms"] for r in rounds]
    return {
        "queries": len(queries),
        "passes": rounds,
        "per_search_ms": {
            "mean_of_passes": round(statistics.mean(totals), 2),
            "min_pass": min(totals),
            "max_pass": max(totals),
            "p50": round(statistics.median(per_query), 2),
            "p95": round(percentile(per_query, 95), 2),
        },
        "meter_overhead_ms_per_read": tare.per(1)["total_ms"],
        "in_baselines": round(statistics.mean(r["total_in_baselines"] for r in rounds), 3),
        "stages": stages,
        "settings": {
            "search_db_threads": settings.SEARCH_DB_THREADS,
            "embedding_threads": settings.EMBEDDING_THREADS,
            "embedder": get_embedder().name,
        },
    }


def _stages(queries: list[str], now: datetime, k: int, meter: CpuMeter, tare: CpuSample) -> dict:
    """Each stage's CPU, summed over the queries, per search."""
    embedder = get_embedder()
    spent: dict[str, CpuSample] = dict.fromkeys(STAGES, ZERO)

    def metered(stage, fn, *args):
        before = meter.read()
        result = fn(*args)
        spent[stage] = spent[stage] + (meter.read() - before - tare)
        return result

    for query in queries:
        analysis = metered("analysis", analyse, query, now)
        q = pipeline._Query(
            analysis=analysis,
            filters=SearchFilters(
                start=analysis.start,
                end=analysis.end,
                categories=tuple(analysis.categories),
                authors=tuple(analysis.authors),
            ),
            text=analysis.query.strip(),
            k=k,
            candidates=max(settings.SEARCH_CANDIDATES, k),
            now=now,
            model=embedder.name,
            fulltext=fulltext_chunks.variant(),
        )
        if not q.text:
            continue
        vector = metered("embed", embedder.embed_query, q.text)
        q.lexical = metered("bm25", pipeline._lexical_stage, q, q.text)
        q.dense = metered("dense", pipeline._dense_stage, q, vector, "dense")
        q.vector = vector
        lists = pipeline._lists(q.dense, q.lexical, "")
        if q.fulltext in ("fused", "direct"):  # the full-text chunks' own dense list
            q.chunks = metered("chunks", pipeline._chunk_stage, q)
            hits = q.chunks.hits
            lists.append(pipeline.Ranked(
                "chunks", [h.paper_id for h in hits], [h.similarity for h in hits],
                pipeline.list_weight("dense"),
            ))  # fmt: skip
        fused = metered("fusion", pipeline._fuse, q, lists)
        hits = metered("hydrate", pipeline._hydrate, q, fused[:k], q.dense)
        # Snippets and reasons are made inside hydration; made again here to tell their share.
        metered("snippets", _snippets_and_reasons, q, hits, fused)
    n = len(queries)
    return {stage: spent[stage].per(n) for stage in STAGES}


def _snippets_and_reasons(q, hits, fused) -> None:
    items = {f.paper_id: f for f in fused}
    lexemes = set(q.lexical.lexemes)
    for hit in hits:
        make_snippet(hit.abstract or hit.title, lexemes)
        pipeline._why(q, items[hit.paper_id], hit.title, hit.abstract, hit.published, lexemes)


def once_each(queries: list[str], k: int, warm_up: list[str]) -> CpuSample:
    """The CPU of `search()` over `queries` in order, each asked once (a repeated question finds
    its query vector cached, as it did in the server), after searching `warm_up` (text of its
    own, so the model is loaded and nothing of `queries` cached). This process and its own
    PostgreSQL backends, the meter's cost taken off (`bench_chat concurrent`'s CPU floor)."""
    run = async_to_sync(pipeline.search)
    for query in warm_up:
        run(query, k=k)
    meter = CpuMeter()
    tare = meter.overhead()
    total = ZERO
    for query in queries:
        before = meter.read()
        run(query, k=k)
        total = total + (meter.read() - before - tare)
    return total

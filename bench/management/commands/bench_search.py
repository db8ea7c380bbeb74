"""Temporal correctness and speed of the whole search on the 57k arXiv sample.

    manage.py bench_search [--snapshot ../shared/data/arxiv-snapshot/arxiv-sample.jsonl.gz]
                           [--now 2026-11-21] [--k 10] [--repeat 1] [--keep-db] [--json]
    manage.py bench_search --cpu [--repeat 3] [--keep-db]     # CPU-ms per search, by stage

The sample goes into a scratch database (`bench_search`) through the real snapshot import and
BM25 index. Vectors: embedding 57k abstracts with MiniLM takes ~45 min of both cores, so each
paper gets one synthetic 384-d vector (bench.scale: clustered, with the low
intrinsic dimension of text embeddings) *stored under the active embedder's name*: every timed
search embeds its query with the real model (MiniLM, ~4 ms) and runs the real SQL over 57k
vectors; only the relevance of the dense hits is meaningless. Temporal correctness does not
depend on the vectors at all. The dense-plan experiment queries with fresh draws from the same
distribution, so its recall numbers are meaningful.

Measured:
1. correctness: for every windowed query, all results inside the window, and exactly k results
   whenever at least k visible papers exist in it (the count comes from SQL);
2. speed: p50/p95 of `search()` end to end (analysis + query embedding + BM25 + dense + fusion +
   hydration with snippets), over topic x time-phrase queries, after a warm-up;
3. the dense plan: exact scan vs HNSW iterative scan over windows of growing size (time and
   recall@10 of the index against the exact scan), which sets DENSE_EXACT_MAX;
4. the BM25 candidate cap: time and top-10 agreement against exhaustive BM25.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from datetime import UTC, date, datetime
from pathlib import Path

from asgiref.sync import async_to_sync
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from bench import SHARED_DATA, search_cpu
from bench import chunk_scale as bench_chunks
from bench import scale as bench_scale
from bench import text_scale as bench_text
from bench.cpu import CpuMeter
from bench.evaluation import percentile
from bench.scratch_db import scratch_database
from chat.retrieval.dense import dense_search
from chat.retrieval.filters import SearchFilters
from chat.retrieval.fulltext import lexical_search
from chat.retrieval.search import search
from papers.embeddings import get_embedder
from papers.indexing.lexical import index_missing
from papers.ingest.snapshot import import_snapshot
from papers.models import Paper, Passage

TOPICS = [
    "diffusion models for image generation",
    "quantum entanglement",
    "graph neural networks",
    "large language models reasoning",
    "quantum error correction",
    "reinforcement learning for robotics",
    "bell inequality violation",
    "retrieval augmented generation",
    "quantum key distribution",
    "transformer attention",
    "federated learning privacy",
    "speech recognition",
    "image segmentation",
    "decoherence of qubits",
    "learning",
    "neural network",
]
PHRASES = [
    "",
    "in the last two years",
    "since 2023",
    "in 2016",
    "before 2005",
    "between 2018 and 2020",
    "latest",
    "in the last 6 months",
    "from March 2025",
    "in the 2000s",
    "in Q1 2026",
    "this year",
]
# Windows for the dense plan experiment (start, end), from narrow to everything.
PLAN_WINDOWS = [
    ("2026-06-01", "2026-06-07"),
    ("2026-05-01", "2026-05-31"),
    ("2016-01-01", "2016-03-31"),
    ("2016-01-01", "2016-12-31"),
    ("2025-01-01", "2026-12-31"),
    ("1992-01-01", "2009-12-31"),
    (None, None),
]


class Command(BaseCommand):
    help = "Temporal correctness and end-to-end speed of search() on the 57k arXiv sample."

    def add_arguments(self, parser):
        parser.add_argument(
            "--snapshot",
            type=Path,
            default=SHARED_DATA / "arxiv-snapshot/arxiv-sample.jsonl.gz",
            help="default ../shared/data/arxiv-snapshot/arxiv-sample.jsonl.gz",
        )
        parser.add_argument("--now", default="2026-11-21", help="the queries' today")
        parser.add_argument("--k", type=int, default=10)
        parser.add_argument("--repeat", type=int, default=1, help="timed passes over the queries")
        parser.add_argument("--database", default="bench_search")
        parser.add_argument("--keep-db", action="store_true", help="keep it for the next run")
        parser.add_argument("--json", action="store_true")
        parser.add_argument(
            "--cpu",
            action="store_true",
            help="instead: CPU-milliseconds per search (this process + PostgreSQL), by stage",
        )
        parser.add_argument(
            "--scale",
            type=int,
            default=None,
            metavar="N",
            help="instead: dense retrieval over N synthetic vectors (database bench_scale)",
        )
        parser.add_argument(
            "--windows",
            action="store_true",
            help="--scale: only the window sweep (every plan per window, recall vs exact)",
        )
        parser.add_argument(
            "--year-indexes",
            type=int,
            default=0,
            metavar="MIN",
            help="--scale: first build the year indexes of years with >= MIN abstracts",
        )
        parser.add_argument(
            "--chunks",
            type=int,
            default=None,
            metavar="N",
            help="instead: N full-text chunk vectors beside the sample (database bench_chunks)",
        )
        parser.add_argument(
            "--recall-queries",
            type=int,
            default=30,
            help="--chunks: queries for the chunk index's recall (0: the whole search only)",
        )
        parser.add_argument(
            "--compare-precision",
            action="store_true",
            help="--chunks: also an index of the chunks at full precision (vector), to compare",
        )
        parser.add_argument(
            "--text",
            type=int,
            default=None,
            metavar="N",
            help="instead: hybrid search over N papers grown from the sample (database bench_text)",
        )
        parser.add_argument(
            "--build-only",
            action="store_true",
            help="--text: build (or complete) the database, print its setup, measure nothing",
        )
        parser.add_argument(
            "--compare-year-floors",
            action="store_true",
            help="--text: search() and BM25 with the global champion floors alone, then with the"
            " year floors (settings.LEXICAL_YEAR_FLOORS), alternating, twice each",
        )
        parser.add_argument(
            "--query-vectors",
            choices=("synthetic", "model"),
            default="synthetic",
            help="--text: each query's vector drawn among the synthetic passages' (default;"
            " bench.text_scale.QUERY_MIX), or the real model's, which lies apart from all of them",
        )
        parser.add_argument(
            "--compare-setting",
            metavar="NAME",
            help="--text: the same with any boolean setting off, then on (e.g."
            " LEXICAL_NEEDED_SETS); --chunks: one more mode, the product with it off (e.g."
            " FULLTEXT_CHUNK_WORDS)",
        )

    def handle(self, *args, **options):
        if not options["snapshot"].is_file():
            raise CommandError(f"snapshot not found: {options['snapshot']}")
        try:
            now = datetime.combine(date.fromisoformat(options["now"]), datetime.min.time(), UTC)
        except ValueError:
            raise CommandError("--now must be YYYY-MM-DD") from None
        now = now.replace(hour=12)
        self.quiet = options["json"]
        if options["scale"] is not None:
            return self.scale(options)
        if options["text"] is not None:
            return self.text(options, now)
        if options["chunks"] is not None:
            return self.chunks(options, now)
        with scratch_database(options["database"], keep=options["keep_db"]):
            setup = self.load(options["snapshot"])
            if options["cpu"]:
                return self.cpu(setup, now, options)
            result = {"setup": setup}
            result["correctness"], result["speed"] = self.run_queries(
                now, options["k"], options["repeat"]
            )
            result["dense_plans"] = self.dense_plans(options["k"])
            result["bm25_cap"] = self.bm25_cap()
        result["settings"] = {
            "k": options["k"],
            "candidates": settings.SEARCH_CANDIDATES,
            "dense_exact_max": settings.DENSE_EXACT_MAX,
            "lexical_candidate_cap": settings.LEXICAL_CANDIDATE_CAP,
            "hnsw_ef_search": settings.HNSW_EF_SEARCH,
            "fusion": settings.SEARCH_FUSION,
        }
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, default=str))
        else:
            self.report(result)

    def say(self, message: str) -> None:
        if not self.quiet:
            self.stderr.write(message)

    # --- setup -----------------------------------------------------------------------------

    def load(self, snapshot: Path) -> dict:
        setup: dict = {}
        model = get_embedder().name
        if not Paper.objects.exists():
            self.say(f"importing {snapshot}")
            started = time.perf_counter()
            import_snapshot(snapshot)
            setup["import_s"] = round(time.perf_counter() - started, 1)
        started = time.perf_counter()
        setup["bm25_indexed"] = index_missing()
        setup["bm25_index_s"] = round(time.perf_counter() - started, 1)
        if not Passage.objects.filter(model=model).exists():
            self.say("passage vectors: synthetic, clustered, stored as " + model)
            started = time.perf_counter()
            with connection.cursor() as cursor:  # built after the COPY: one graph insert a
                cursor.execute("DROP INDEX IF EXISTS papers_passage_hnsw_idx")  # row is slow
            bench_scale.write_passages(model, self.say)
            setup["vectors_s"] = round(time.perf_counter() - started, 1)
            setup.update(bench_scale.build_index(self.say))
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
            cursor.execute(
                "SELECT (SELECT count(*) FROM papers_paper), (SELECT count(*) FROM papers_passage),"
                " pg_size_pretty(pg_relation_size('papers_passage_hnsw_idx')),"
                " pg_size_pretty(pg_total_relation_size('papers_paperlexicon')),"
                " (SELECT min(published)::date FROM papers_paper),"
                " (SELECT max(published)::date FROM papers_paper)"
            )
            papers, passages, hnsw, lexicon, first, last = cursor.fetchone()
        setup.update(
            papers=papers,
            passages=passages,
            hnsw_size=hnsw,
            bm25_size=lexicon,
            dates=f"{first} .. {last}",
            vectors="synthetic (bench.scale), stored under " + model,
        )
        return setup

    # --- end-to-end queries ----------------------------------------------------------------

    def run_queries(self, now: datetime, k: int, repeat: int) -> tuple[dict, dict]:
        run = async_to_sync(search)
        queries = [f"{topic} {phrase}".strip() for phrase in PHRASES for topic in TOPICS]
        self.say(f"{len(queries)} queries, warm-up")
        for query in queries[:20]:
            run(query, k=k, now=now)
        latencies, stages, by_window = [], {}, {"no window": [], "window": []}
        meter = CpuMeter()  # this process and the PostgreSQL backends (after the warm-up)
        cpu_started = meter.read()
        windowed = inside = exact_k = 0
        failures, checks = [], []
        plans: dict[str, int] = {}
        for _ in range(max(repeat, 1)):
            for query in queries:
                started = time.perf_counter()
                response = run(query, k=k, now=now)
                latencies.append((time.perf_counter() - started) * 1000)
                for stage, ms in response.timings.items():
                    stages.setdefault(stage, []).append(ms)
                plan = response.plan.get("dense", "none")
                plans[plan] = plans.get(plan, 0) + 1
                analysis = response.analysis
                by_window["window" if analysis.start or analysis.end else "no window"].append(
                    latencies[-1]
                )
                if analysis.start or analysis.end:
                    checks.append((query, analysis, response.hits))
        cpu_ms = (meter.read() - cpu_started).total_ns / 1e6 / len(latencies)
        for query, analysis, hits in checks:  # after the CPU count: counting is not searching
            windowed += 1
            ok = all(
                (analysis.start is None or hit.published >= analysis.start)
                and (analysis.end is None or hit.published <= analysis.end)
                for hit in hits
            )
            available = _count_window(analysis.start, analysis.end)
            want = min(k, available)
            inside += ok
            exact_k += len(hits) == want
            if not ok or len(hits) != want:
                failures.append({"query": query, "returned": len(hits), "available": available})
        correctness = {
            "windowed_queries": windowed,
            "all_results_inside_window": inside,
            "k_results_when_k_exist": exact_k,
            "failures": failures[:10],
        }
        speed = {
            "queries": len(latencies),
            "p50_ms": round(statistics.median(latencies), 1),
            "p95_ms": round(percentile(latencies, 95), 1),
            "max_ms": round(max(latencies), 1),
            # Python (all threads) + this database's PostgreSQL backends.
            "cpu_ms_per_query": round(cpu_ms, 1),
            "stages_p50_ms": {s: round(statistics.median(v), 2) for s, v in stages.items()},
            "stages_p95_ms": {s: round(percentile(v, 95), 2) for s, v in stages.items()},
            "dense_plans": plans,
            "by_window": {
                group: {
                    "queries": len(times),
                    "p50_ms": round(statistics.median(times), 1),
                    "p95_ms": round(percentile(times, 95), 1),
                }
                for group, times in by_window.items()
                if times
            },
        }
        return correctness, speed

    def compare_setting(self, setting: str, queries: list[str], now: datetime, options) -> dict:
        """search() over the 192 queries with a boolean setting off and on, in turn (off, on,
        off, on: each once after the other warmed the cache), then BM25 against exhaustive BM25
        with both, query by query."""
        passes = []
        saved = getattr(settings, setting)
        try:
            for value in (False, True, False, True):
                setattr(settings, setting, value)
                load = os.getloadavg()[0]
                correctness, speed = self.run_queries(now, options["k"], options["repeat"])
                passes.append(
                    {
                        setting: value,
                        "load_before": round(load, 1),
                        "load_after": round(os.getloadavg()[0], 1),
                        "correctness": correctness,
                        "speed": speed,
                    }
                )
                self.say(f"pass: {json.dumps(passes[-1], default=str)}")
        finally:
            setattr(settings, setting, saved)
        agreement = bench_text.bm25_agreement(
            queries, now, self.say, setting=setting, values=(False, True)
        )
        return {"passes": passes, "bm25_agreement": agreement}

    # --- CPU per search ----------------------------------------------------------------------

    def cpu(self, setup: dict, now: datetime, options) -> None:
        queries = [f"{topic} {phrase}".strip() for phrase in PHRASES for topic in TOPICS]
        result = {"setup": setup, **search_cpu.measure(
            queries, now, options["k"], max(options["repeat"], 3), self.say
        )}  # fmt: skip
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, default=str))
            return
        out = self.stdout.write
        out(f"catalogue: {setup['papers']} papers, {setup['passages']} passages")
        per = result["per_search_ms"]
        out(
            f"CPU per search over {result['queries']} queries: mean {per['mean_of_passes']} ms"
            f" (passes {per['min_pass']}-{per['max_pass']}), per query p50 {per['p50']},"
            f" p95 {per['p95']}; {result['in_baselines']} baselines"
        )
        for row in result["passes"]:
            out(f"  pass {row}")
        out("by stage (ms per search: total = python + sql; then the server's other processes):")
        for stage, row in result["stages"].items():
            out(
                f"  {stage:9s} {row['total_ms']:7.2f} = {row['python_ms']:6.2f}"
                f" + {row['sql_ms']:6.2f}; other {row['server_other_ms']:5.2f}"
            )

    # --- dense plan: exact scan vs HNSW iterative scan ---------------------------------------

    def dense_plans(self, k: int) -> list[dict]:
        model = get_embedder().name
        vectors = bench_scale.draw(30, seed=7)  # queries from the passages' distribution
        rows = []
        for start, end in PLAN_WINDOWS:
            filters = SearchFilters(start=_day(start, end=False), end=_day(end, end=True))
            size = _count_window(filters.start, filters.end)
            timings: dict[str, list[float]] = {"exact": [], "hnsw": []}
            recalls, short = [], 0
            for vector in vectors:
                found = {}
                for plan in ("exact", "hnsw"):
                    with transaction.atomic(), connection.cursor() as cursor:
                        started = time.perf_counter()
                        result = dense_search(cursor, vector, model, filters, k, plan=plan)
                        timings[plan].append((time.perf_counter() - started) * 1000)
                    found[plan] = [h.paper_id for h in result.hits]
                    if plan == "hnsw" and result.plan != "hnsw":
                        short += 1  # the index came back short and the exact scan stepped in
                truth = set(found["exact"])
                if truth:
                    recalls.append(len(truth.intersection(found["hnsw"])) / len(truth))
            rows.append(
                {
                    "window": f"{start or '…'} → {end or '…'}",
                    "papers": size,
                    "exact_p50_ms": round(statistics.median(timings["exact"]), 2),
                    "hnsw_p50_ms": round(statistics.median(timings["hnsw"]), 2),
                    "hnsw_recall@k": round(statistics.mean(recalls), 3) if recalls else None,
                    "hnsw_fell_back_to_exact": short,
                }
            )
        return rows

    # --- BM25 candidate cap -------------------------------------------------------------------

    def bm25_cap(self) -> dict:
        capped_ms, full_ms, agree10, exact = [], [], [], 0
        for topic in TOPICS:
            for _ in range(3):
                with connection.cursor() as cursor:
                    started = time.perf_counter()
                    capped = lexical_search(
                        cursor, topic, SearchFilters(), settings.SEARCH_CANDIDATES
                    )
                    capped_ms.append((time.perf_counter() - started) * 1000)
                    started = time.perf_counter()
                    full = lexical_search(
                        cursor, topic, SearchFilters(), settings.SEARCH_CANDIDATES, cap=10**9
                    )
                    full_ms.append((time.perf_counter() - started) * 1000)
            exact += capped.exact
            top = {h.paper_id for h in full.hits[:10]}
            agree10.append(
                len(top.intersection(h.paper_id for h in capped.hits[:10])) / max(len(top), 1)
            )
        return {
            "cap": settings.LEXICAL_CANDIDATE_CAP,
            "capped_p50_ms": round(statistics.median(capped_ms), 2),
            "capped_p95_ms": round(percentile(capped_ms, 95), 2),
            "exhaustive_p50_ms": round(statistics.median(full_ms), 2),
            "exhaustive_p95_ms": round(percentile(full_ms, 95), 2),
            "top10_agreement": round(statistics.mean(agree10), 3),
            "provably_exact_queries": f"{exact}/{len(TOPICS)}",
        }

    # --- scale -------------------------------------------------------------------------------

    def scale(self, options) -> None:
        n = options["scale"]
        if n < 1000:
            raise CommandError("--scale needs at least 1000 vectors")
        database = "bench_scale" if options["database"] == "bench_search" else options["database"]
        model = get_embedder().name
        with scratch_database(database, keep=options["keep_db"]):
            info = bench_scale.load(n, model, self.say)
            if options["year_indexes"]:
                info.update(bench_scale.build_year_indexes(options["year_indexes"], self.say))
            if options["windows"]:
                rows = bench_scale.window_sweep(model, self.say, settings.SEARCH_CANDIDATES)
                info["load_average"] = os.getloadavg()
                if options["json"]:
                    self.stdout.write(json.dumps({"setup": info, "windows": rows}, indent=2))
                return
            result = {"setup": info, **bench_scale.measure(model, info, self.say)}
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, default=str))
            return
        out = self.stdout.write
        out(f"{n} synthetic 384-d vectors: {json.dumps(result['setup'], default=str)}")
        for row in result["dense_search"]:
            out(
                f"  {row['window']:14s} {row['papers_wanted']:4d} papers, {row['plan']:5s}:"
                f" p50 {row['p50_ms']} ms,"
                f" p95 {row['p95_ms']} ms, plans {row['plans']}, always full {row['always_full']}"
            )
        recall = result["recall"]
        out(f"  exact scan (truth) p50 {recall['exact_scan_p50_ms']} ms")
        for row in recall["sweep"]:
            out(
                f"  ef_search {row['ef_search']}: recall@10 {row['recall@10']}, p50 {row['p50_ms']} ms"
            )

    # --- full-text chunks at scale -----------------------------------------------------------

    def chunks(self, options, now: datetime) -> None:
        n = options["chunks"]
        if n < 1000:
            raise CommandError("--chunks needs at least 1000 chunks")
        database = "bench_chunks" if options["database"] == "bench_search" else options["database"]
        model = get_embedder().name
        queries = [f"{topic} {phrase}".strip() for phrase in PHRASES for topic in TOPICS]
        setting = options["compare_setting"]
        if setting and not isinstance(getattr(settings, setting, None), bool):
            raise CommandError(f"--compare-setting: {setting} is not a boolean setting")
        with scratch_database(database, keep=options["keep_db"]):
            setup = self.load(options["snapshot"])
            compare = options["compare_precision"]
            setup.update(bench_chunks.load_chunks(n, model, self.say, compare))
            result = {"setup": setup, **bench_chunks.measure(
                model, queries, now, self.say, compare=compare, repeat=options["repeat"],
                recall_queries=options["recall_queries"], setting_off=setting,
            )}  # fmt: skip
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, default=str))
            return
        self.stdout.write(json.dumps(result, indent=2, default=str))

    # --- text at scale ------------------------------------------------------------------------

    def text(self, options, now: datetime) -> None:
        n = options["text"]
        if n < 1000:
            raise CommandError("--text needs at least 1000 papers")
        database = "bench_text" if options["database"] == "bench_search" else options["database"]
        model = get_embedder().name
        queries = [f"{topic} {phrase}".strip() for phrase in PHRASES for topic in TOPICS]
        with scratch_database(database, keep=options["keep_db"]):
            setup = bench_text.load(n, options["snapshot"], model, self.say)
            self.say(f"setup: {json.dumps(setup, default=str)}")  # a long run keeps it early
            result = {"setup": setup}
            if options["build_only"]:
                self.stdout.write(json.dumps(result, indent=2, default=str))
                return
            result["query_vectors"] = options["query_vectors"]
            if options["query_vectors"] == "synthetic":
                bench_text.use_synthetic_query_vectors(queries, now)
            setting = options["compare_setting"]
            if options["compare_year_floors"]:
                setting = "LEXICAL_YEAR_FLOORS"
            if setting:
                if not isinstance(getattr(settings, setting, None), bool):
                    raise CommandError(f"--compare-setting: {setting} is not a boolean setting")
                result.update(self.compare_setting(setting, queries, now, options))
                self.stdout.write(json.dumps(result, indent=2, default=str))
                return
            result["correctness"], result["speed"] = self.run_queries(
                now, options["k"], options["repeat"]
            )
            self.say(f"speed: {json.dumps(result['speed'], default=str)}")
            result["bm25_agreement"] = bench_text.bm25_agreement(queries, now, self.say)
            self.say(f"bm25: {json.dumps(result['bm25_agreement'])}")
            self.say("dense plans over windows at SEARCH_CANDIDATES papers")
            result["window_sweep"] = bench_text.window_sweep(model, self.say)
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, default=str))
            return
        out = self.stdout.write
        out(f"{n} papers grown from the sample: {json.dumps(setup, default=str)}")
        corr, speed = result["correctness"], result["speed"]
        out(
            f"correctness: {corr['all_results_inside_window']}/{corr['windowed_queries']} inside,"
            f" {corr['k_results_when_k_exist']}/{corr['windowed_queries']} with k results"
        )
        out(
            f"search() over {speed['queries']} queries: p50 {speed['p50_ms']} ms,"
            f" p95 {speed['p95_ms']} ms, max {speed['max_ms']} ms,"
            f" CPU {speed['cpu_ms_per_query']} ms a query; by window"
            f" {json.dumps(speed['by_window'])}; dense plans {speed['dense_plans']}"
        )
        out("  stage p50 / p95 (ms): " + ", ".join(
            f"{s} {speed['stages_p50_ms'][s]}/{speed['stages_p95_ms'][s]}"
            for s in speed["stages_p50_ms"]
        ))  # fmt: skip
        out(f"BM25 vs exhaustive BM25: {json.dumps(result['bm25_agreement'])}")
        sweep = result["window_sweep"]
        out(f"dense plans at {sweep['rows_wanted']} rows over {sweep['papers']} vectors:")
        for row in sweep["windows"]:
            out(f"  {json.dumps(row)}")

    # --- report ------------------------------------------------------------------------------

    def report(self, result: dict) -> None:
        out = self.stdout.write
        setup, corr, speed = result["setup"], result["correctness"], result["speed"]
        out(f"catalogue: {setup['papers']} papers, {setup['passages']} passages ({setup['dates']})")
        out(f"vectors: {setup['vectors']}; HNSW {setup['hnsw_size']}, BM25 {setup['bm25_size']}")
        out(
            f"correctness: {corr['all_results_inside_window']}/{corr['windowed_queries']} windowed "
            f"queries with every result inside; {corr['k_results_when_k_exist']}/"
            f"{corr['windowed_queries']} with k results whenever k exist"
        )
        for failure in corr["failures"]:
            out(f"  FAIL {failure}")
        out(
            f"search() end to end over {speed['queries']} queries: p50 {speed['p50_ms']} ms, "
            f"p95 {speed['p95_ms']} ms, max {speed['max_ms']} ms; dense plans {speed['dense_plans']}"
        )
        out("  stage p50 / p95 (ms): " + ", ".join(
            f"{s} {speed['stages_p50_ms'][s]}/{speed['stages_p95_ms'][s]}"
            for s in speed["stages_p50_ms"]
        ))  # fmt: skip
        out("dense plan by window (k papers; recall of HNSW vs exact):")
        for row in result["dense_plans"]:
            out(
                f"  {row['window']:28s} {row['papers']:6d} papers  exact {row['exact_p50_ms']:6.2f} ms"
                f"  hnsw {row['hnsw_p50_ms']:6.2f} ms  recall {row['hnsw_recall@k']}"
                f"  fallbacks {row['hnsw_fell_back_to_exact']}"
            )
        cap = result["bm25_cap"]
        out(
            f"BM25 cap {cap['cap']}: p50 {cap['capped_p50_ms']} ms (p95 {cap['capped_p95_ms']}) vs "
            f"exhaustive p50 {cap['exhaustive_p50_ms']} ms (p95 {cap['exhaustive_p95_ms']}); "
            f"top-10 agreement {cap['top10_agreement']}, provably exact {cap['provably_exact_queries']}"
        )


def _day(value: str | None, *, end: bool) -> datetime | None:
    if value is None:
        return None
    day = date.fromisoformat(value)
    return datetime.combine(day, datetime.max.time() if end else datetime.min.time(), UTC)


def _count_window(start, end) -> int:
    """Visible papers with a passage in [start, end]."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM papers_paper p WHERE NOT p.hidden"
            " AND (%s::timestamptz IS NULL OR p.published >= %s)"
            " AND (%s::timestamptz IS NULL OR p.published <= %s)"
            " AND EXISTS (SELECT 1 FROM papers_passage s WHERE s.paper_id = p.id)",
            [start, start, end, end],
        )
        return cursor.fetchone()[0]

"""`manage.py bench_embed [--n 500]`: the embedding pipeline against the raw model, in one run.

1. Takes N papers spread evenly over the snapshot sample (all eras, all abstract lengths) and
   imports them into a scratch database `bench_embed` on the same PostgreSQL server (created,
   migrated and dropped here, like the test runner does; the user's catalogue is never touched).
2. Raw model: the same passages the pipeline will embed, split and tokenised in memory
   beforehand, through the model alone (onnxruntime + pooling), in the most favourable order
   (all at once, sorted by length). Timed before and after the pipeline; the mean is the baseline,
   so the machine's load drifting during the run does not favour either side.
3. Pipeline: `embed_missing` on the scratch database (fetch, split, tokenise, embed, insert with
   the HNSW index, commit per batch).

Reports papers/s of each, pipeline/raw (target >= 0.85), where the pipeline's time goes, what
sorting by length saves, and the process's peak memory (target < 1.5 GB).
"""

import json
import resource
import time
from contextlib import closing
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from bench import SHARED_DATA
from bench.scratch_db import scratch_database
from papers.embeddings import get_embedder
from papers.embeddings.minilm import TOKENS_PER_RUN
from papers.indexing.passages import document_text, split_passages
from papers.indexing.vectors import embed_missing
from papers.ingest.snapshot import open_snapshot, parse_snapshot_record
from papers.ingest.upsert import upsert_papers
from papers.management.arguments import positive_int
from papers.models import Paper, Passage


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


class Command(BaseCommand):
    help = "Benchmark embed_missing against the raw MiniLM model on N sample papers."

    def add_arguments(self, parser):
        parser.add_argument("--n", type=positive_int, default=500, help="papers (default 500)")
        parser.add_argument(
            "--path",
            type=Path,
            default=SHARED_DATA / "arxiv-snapshot/arxiv-sample.jsonl.gz",
            help="snapshot sample (default ../shared/data/arxiv-snapshot/arxiv-sample.jsonl.gz)",
        )
        parser.add_argument("--batch-size", type=positive_int, help="embed_missing batch size")
        parser.add_argument(
            "--budgets",
            default="",
            help="also time the raw model at these tokens-per-run budgets, e.g. 256,512,2048",
        )

    def handle(self, *args, n, path, batch_size, budgets, **options):
        try:
            budgets = [int(b) for b in budgets.split(",") if b.strip()]
        except ValueError:
            raise CommandError(
                f"--budgets takes numbers separated by commas, not {budgets!r}"
            ) from None
        if not path.is_file():
            raise CommandError(f"sample file not found: {path}")
        embedder = get_embedder("minilm")
        self.stdout.write(
            f"model {embedder.name}, {settings.EMBEDDING_THREADS} threads; "
            f"peak RSS after loading {_peak_rss_mb():.0f} MB"
        )
        records = self._sample(path, n)
        self.stdout.write(f"sample: {len(records)} papers spread over {path.name}")

        self.stdout.write("scratch database bench_embed: creating and migrating…")
        with scratch_database("bench_embed"):
            upsert_papers(parse_snapshot_record(r) for r in records)
            report = self._measure(embedder, batch_size, budgets)
        self._print(report)

    def _sample(self, path: Path, n: int) -> list[dict]:
        """n snapshot records taken at even intervals through the file (streamed twice, so the
        file never sits in memory and the peak RSS is the embedder's)."""
        with closing(open_snapshot(path)) as snapshot:
            total = sum(1 for _ in snapshot.lines)
        step = max(1, total // n)
        with closing(open_snapshot(path)) as snapshot:
            return [json.loads(line) for i, line in enumerate(snapshot.lines) if i % step == 0][:n]

    def _measure(self, embedder, batch_size, budgets) -> dict:
        # The exact passages the pipeline will embed, from the rows it will read.
        texts = []
        for title, abstract in Paper.objects.order_by("pk").values_list("title", "abstract"):
            document = document_text(title, abstract)
            spans = split_passages(document, embedder.count_tokens, embedder.max_tokens)
            texts.extend(span.text(document) for span in spans)
        token_ids = embedder.tokenize(texts)
        papers = Paper.objects.count()
        embedder.embed_tokens(token_ids[:8])  # warm-up: first run allocates

        def raw(sort_by_length=True) -> tuple[float, float]:
            """(wall, CPU) seconds of the model alone on every passage."""
            wall, cpu = time.perf_counter(), time.process_time()
            embedder.embed_tokens(token_ids, sort_by_length=sort_by_length)
            return time.perf_counter() - wall, time.process_time() - cpu

        report = {"papers": papers, "passages": len(texts)}
        report["tokens"] = sum(len(ids) for ids in token_ids)
        report["raw_before"] = raw()
        report["rss_raw"] = _peak_rss_mb()
        cpu = time.process_time()
        pipeline = embed_missing(embedder=embedder, batch_size=batch_size)
        report["pipeline_cpu"] = time.process_time() - cpu
        report["rss_pipeline"] = _peak_rss_mb()
        report["raw_after"] = raw()
        report["raw_unsorted"] = raw(sort_by_length=False)
        default_budget, report["budgets"] = embedder.tokens_per_run, {}
        try:
            for budget in budgets:
                embedder.tokens_per_run = budget
                report["budgets"][budget] = raw()
        finally:
            embedder.tokens_per_run = default_budget
        report["pipeline"] = pipeline
        report["stored"] = Passage.objects.filter(model=embedder.name).count()
        report["second_run"] = embed_missing(embedder=embedder).papers
        report["query_ms"] = self._query_latency(embedder)
        return report

    def _query_latency(self, embedder) -> float:
        """Median milliseconds of embed_query on short questions (chat's per-message cost)."""
        questions = [
            f"recent papers on {topic}"
            for topic in ("diffusion models", "protein folding", "quantum error correction")
        ] * 20
        times = []
        for question in questions:
            started = time.perf_counter()
            embedder.embed_query(question)
            times.append(time.perf_counter() - started)
        return 1000 * sorted(times)[len(times) // 2]

    def _print(self, r: dict) -> None:
        papers, pipeline = r["papers"], r["pipeline"]
        raw_seconds = (r["raw_before"][0] + r["raw_after"][0]) / 2
        raw_cpu = (r["raw_before"][1] + r["raw_after"][1]) / 2
        raw_rate = papers / raw_seconds
        rate = pipeline.papers / pipeline.seconds
        w = self.stdout.write
        w(
            f"data: {papers} papers, {r['passages']} passages, {r['tokens']} tokens "
            f"({r['passages'] - papers} extra passages from texts over the window)"
        )
        w(
            f"raw model: {r['raw_before'][0]:.1f} s before, {r['raw_after'][0]:.1f} s after the "
            f"pipeline = {raw_rate:.1f} papers/s (mean); {raw_cpu:.1f} CPU s = "
            f"{r['passages'] / raw_cpu:.1f} passages per CPU second "
            f"(groups of at most {TOKENS_PER_RUN} tokens)"
        )
        w(
            f"raw model, unsorted groups of 32: {r['raw_unsorted'][0]:.1f} s, "
            f"{r['raw_unsorted'][1]:.1f} CPU s = {raw_cpu / r['raw_unsorted'][1]:.2f} of the "
            "sorted speed per CPU second"
        )
        for budget, (wall, cpu) in r["budgets"].items():
            w(
                f"raw model, groups of at most {budget} tokens: {wall:.1f} s, {cpu:.1f} CPU s = "
                f"{r['passages'] / cpu:.1f} passages per CPU second"
            )
        t = pipeline.timings
        w(
            f"pipeline: {pipeline.papers} papers, {pipeline.passages} passages in "
            f"{pipeline.seconds:.1f} s = {rate:.1f} papers/s; fetch {t['fetch']:.2f} s, "
            f"split {t['split']:.2f} s, embed {t['embed']:.2f} s, write {t['write']:.2f} s, "
            f"{pipeline.batches} batches"
        )
        w(
            f"pipeline/raw = {rate / raw_rate:.2f} by wall clock (target >= 0.85); "
            f"{raw_cpu / r['pipeline_cpu']:.2f} by this process's CPU seconds "
            f"({r['pipeline_cpu']:.1f} CPU s; the load of other processes does not move it)"
        )
        w(
            f"peak RSS: {r['rss_raw']:.0f} MB after the raw run, {r['rss_pipeline']:.0f} MB "
            f"after the pipeline (target < 1500 MB)"
        )
        w(f"embed_query: {r['query_ms']:.1f} ms median over 60 short questions")
        w(f"stored passages {r['stored']}; a second embed_missing embedded {r['second_run']}")
        if r["stored"] != r["passages"] or r["second_run"]:
            raise CommandError("the pipeline did not store exactly the passages of the sample")

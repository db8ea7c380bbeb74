"""`manage.py bench_answers`: the answer-behaviour suite of issue #11, on a slice of the sample.

    manage.py bench_answers [--slice default|small] [--snapshot PATH] [--json] [--json-out FILE]
                            [--only NAME ...]
                            [--database bench_answers] [--fresh]

A fixed slice of ../shared/data/arxiv-snapshot/arxiv-sample.jsonl.gz (bench.answer_slice) is
written into a scratch database (`bench_answers_<slice>` on the same server) through the
production code: upsert_papers, the BM25 index, the passage vectors of the active embedder. The
database is kept between runs (embedding ~2,900 papers takes minutes on this CPU; the next run
only migrates it and indexes what is missing); `--fresh` rebuilds it.

Then every case of bench.answer_cases is asked through `chat.service.ask` in a thread of its own
with the configured answer backend (the offline `extractive` one by default) and checked as a
user would (bench.answer_checks). Prints a PASS/FAIL table with the reason of each failure, the
pass rate per intent and overall, and the composer's time per answer and the overhead before
the first token (p50/p95). Results in docs/BENCHMARKS.md.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.utils import timezone

from bench import SHARED_DATA
from bench.answer_cases import build_cases
from bench.answer_slice import SLICES, read_slice
from bench.answer_suite import elapsed, load_catalogue, run_suite, summarise
from bench.scratch_db import scratch_database
from papers.indexing.lexical import index_missing
from papers.indexing.vectors import embed_missing
from papers.ingest.upsert import upsert_papers
from papers.models import Paper


class Command(BaseCommand):
    help = "Answer-behaviour suite: ask ~85 cases through the chat on a slice of the arXiv sample."

    def add_arguments(self, parser):
        parser.add_argument(
            "--snapshot",
            type=Path,
            default=SHARED_DATA / "arxiv-snapshot/arxiv-sample.jsonl.gz",
            help="default ../shared/data/arxiv-snapshot/arxiv-sample.jsonl.gz",
        )
        parser.add_argument("--slice", choices=sorted(SLICES), default="default")
        parser.add_argument("--database", help="scratch database (default bench_answers_<slice>)")
        parser.add_argument("--fresh", action="store_true", help="rebuild the scratch database")
        parser.add_argument("--only", nargs="+", metavar="NAME", help="cases or intents to run")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument(
            "--json-out", type=Path, metavar="FILE", help="also write the JSON object to FILE"
        )

    def handle(self, *args, **options):
        if not options["snapshot"].is_file():
            raise CommandError(f"snapshot not found: {options['snapshot']}")
        spec = SLICES[options["slice"]]
        self.quiet = options["json"]
        name = options["database"] or f"bench_answers_{spec.name}"
        # One INFO line per answer started would bury the table.
        chat_log = logging.getLogger("chat")
        level = chat_log.level
        chat_log.setLevel(logging.WARNING)
        try:
            self.measure(options, spec, name)
        finally:
            chat_log.setLevel(level)

    def measure(self, options, spec, name) -> None:
        with scratch_database(name, keep=not options["fresh"]):
            setup = self.load(options["snapshot"], spec)
            today = timezone.now().date()
            catalogue = load_catalogue(today)
            cases = build_cases(catalogue)
            if options["only"]:
                wanted = set(options["only"])
                cases = [c for c in cases if c.name in wanted or c.intent in wanted]
                if not cases:
                    raise CommandError(f"no case or intent named {sorted(wanted)}")
            started = time.perf_counter()
            results = run_suite(cases, catalogue, progress=self.progress)
            summary = summarise(results)
        summary["seconds"] = elapsed(started)
        summary["setup"] = setup
        summary["today"] = today.isoformat()
        summary["backend"] = settings.LLM_BACKEND
        summary["embedder"] = settings.EMBEDDING_BACKEND
        summary["load_average"] = round(os.getloadavg()[0], 1)
        payload = {"summary": summary, "cases": [r.as_dict() for r in results]}
        text = json.dumps(payload, indent=2, default=str, ensure_ascii=False)
        if options["json_out"]:
            options["json_out"].write_text(text + "\n")
        if options["json"]:
            self.stdout.write(text)
        else:
            self.report(results, summary)

    def say(self, message: str) -> None:
        if not self.quiet:
            self.stderr.write(message)

    def progress(self, result) -> None:
        self.say(f"  {'PASS' if result.passed else 'FAIL'} {result.case.name}")

    # --- the scratch catalogue --------------------------------------------------------------------
    def load(self, snapshot: Path, spec) -> dict:
        started = time.perf_counter()
        records = read_slice(snapshot, spec)
        if Paper.objects.count() != len(records):
            self.say(f"writing the {spec.name} slice: {len(records)} papers from {snapshot}")
            Paper.objects.all().delete()
            upsert_papers(records)
        index_missing()
        result = embed_missing(progress=not self.quiet)
        if result.passages:
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")
        dates = sorted(r.published.date() for r in records)
        return {
            "slice": spec.name,
            "papers": len(records),
            "dates": f"{dates[0]} .. {dates[-1]}" if dates else "",
            "embedded_now": result.papers,
            "seconds": elapsed(started),
        }

    # --- the report -------------------------------------------------------------------------------
    def report(self, results, summary) -> None:
        setup = summary["setup"]
        self.stdout.write(
            f"catalogue: {setup['slice']} slice, {setup['papers']} papers ({setup['dates']}); "
            f"today {summary['today']}; backend {summary['backend']}, embedder "
            f"{summary['embedder']}; load average {summary['load_average']}"
        )
        width = max(len(r.case.name) for r in results)
        self.stdout.write("")
        for r in results:
            verdict = "PASS" if r.passed else "FAIL"
            line = f"{verdict}  {r.case.name:<{width}}  {r.case.intent:<17} {r.case.question[:60]}"
            self.stdout.write(line)
            if not r.passed:
                self.stdout.write(f"      ↳ {r.reason}")
        self.stdout.write("")
        self.stdout.write("pass rate by intent:")
        for intent, row in summary["by_intent"].items():
            self.stdout.write(
                f"  {intent:<17} {row['passed']:>2}/{row['cases']:<2} {row['rate']:6.0%}"
            )
        self.stdout.write(
            f"overall: {summary['passed']}/{summary['cases']} = {summary['rate']:.0%} "
            f"({summary['seconds']} s)"
        )
        unsourced = summary["unsourced_cases"]
        self.stdout.write(
            f"answers with a sentence found in none of their sources: {len(unsourced)}"
            + (f" ({', '.join(unsourced)})" if unsourced else "")
        )
        for r in results:
            for sentence in r.unsourced[:3]:
                self.stdout.write(f"  {r.case.name}: “{sentence[:100]}”")
        for key, label in (
            ("overhead_ms", "overhead before the first token"),
            ("composer_ms", "composer time per answer"),
        ):
            row = summary[key]
            if row.get("n"):
                self.stdout.write(
                    f"{label}: n={row['n']} p50={row['p50']} p95={row['p95']} max={row['max']} ms"
                )

"""`manage.py bench_researcher`: a researcher's questions on the 28 shared PDFs, read as answers.

    manage.py bench_researcher [--pdfs DIR] [--database bench_fulltext] [--only NAME ...]
                               [--lines N] [--json-out FILE]

The catalogue is bench_fulltext's scratch database (the 28 PDFs' records, BM25, vectors and
their full text read over HTTP from a local stand-in for arxiv.org), built the same way and kept
between runs. Each case of bench.researcher_cases is asked through `chat.service.ask` in a thread
of its own, its earlier turns first (bench.answer_suite, as the socket and the API do), with the
configured backend (the offline composer by default). Every turn's answer is printed (its first
`--lines` lines, the papers it cites) with the case's checks, so the answers can be read and
judged; the checks only catch the plainest failures. Results in docs/BENCHMARKS.md.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from bench import SHARED_DATA
from bench.answer_suite import load_catalogue, run_suite
from bench.management.commands.bench_fulltext import Command as FulltextBench
from bench.researcher_cases import CASES
from bench.scratch_db import scratch_database


class Command(BaseCommand):
    help = "A researcher's follow-ups, lists and yes/no questions on the 28 shared PDFs."

    def add_arguments(self, parser):
        parser.add_argument("--pdfs", type=Path, default=SHARED_DATA / "arxiv-pdf")
        parser.add_argument("--database", default="bench_fulltext")
        parser.add_argument("--only", nargs="+", metavar="NAME", help="cases to run")
        parser.add_argument("--lines", type=int, default=12, help="lines of each answer shown")
        parser.add_argument("--json-out", type=Path, metavar="FILE")

    def handle(self, *args, pdfs, database, only, lines, json_out, **options):
        if not (pdfs / "metadata.jsonl").is_file():
            raise CommandError(f"no metadata.jsonl in {pdfs}")
        cases = [c for c in CASES if not only or c.name in only]
        if not cases:
            raise CommandError(f"no case named {only}")
        chat_log = logging.getLogger("chat")
        level = chat_log.level
        chat_log.setLevel(logging.WARNING)
        try:
            with scratch_database(database, keep=True):
                FulltextBench(stdout=self.stdout, stderr=self.stderr)._load(pdfs)
                catalogue = load_catalogue(timezone.now().date())
                results = run_suite(cases, catalogue)
        finally:
            chat_log.setLevel(level)
        for result in results:
            self.show(result, lines)
        passed = sum(r.passed for r in results)
        self.stdout.write(
            f"\n{passed}/{len(results)} cases pass their checks; backend "
            f"{settings.LLM_BACKEND or 'extractive'}, embedder {settings.EMBEDDING_BACKEND}; "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        if json_out:
            json_out.write_text(
                json.dumps([self.record(r) for r in results], indent=2, ensure_ascii=False) + "\n"
            )

    @staticmethod
    def turns(result) -> list:
        chain, answer = [], result.answer
        while answer is not None:
            chain.append(answer)
            answer = answer.previous
        return chain[::-1]

    def show(self, result, lines: int) -> None:
        verdict = "PASS" if result.passed else "FAIL"
        self.stdout.write(
            f"\n=== {verdict} {result.case.name}"
            + (f": {result.reason}" if not result.passed else "")
        )
        for answer in self.turns(result):
            self.stdout.write(f"Q: {answer.question}")
            shown = answer.content.splitlines()
            for line in shown[:lines]:
                self.stdout.write(f"   | {line[:220]}")
            if len(shown) > lines:
                self.stdout.write(f"   | … ({len(shown) - lines} more lines)")
            cited = ", ".join(
                f"[{c['number']}] {c['arxiv_id']}{' p.' + str(c['page']) if c.get('page') else ''}"
                for c in answer.cited
            )
            self.stdout.write(
                f"   cites: {cited or '-'}; {len(answer.sources)} cards; "
                f"followup_of {answer.analysis.get('followup_of')}"
            )

    def record(self, result) -> dict:
        return {
            "name": result.case.name,
            "passed": result.passed,
            "reason": result.reason,
            "turns": [
                {"question": a.question, "answer": a.content, "cited": a.cited_ids()}
                for a in self.turns(result)
            ],
        }

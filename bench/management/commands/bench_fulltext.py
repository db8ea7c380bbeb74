"""`manage.py bench_fulltext`: questions answered by the BODY of the shared arXiv PDFs.

    manage.py bench_fulltext [--questions FILE.jsonl] [--split tuning|held_out|fresh|all] [--pdfs DIR]
                             [--variants fused,papers_first,direct,off] [--database NAME]
                             [--chunk-rankings rrf,mix] [--fresh] [--verbose]

The 28 PDFs of ../shared/data/arxiv-pdf and their catalogue records (metadata.jsonl) go into a
scratch database (`bench_fulltext` on the same server, kept between runs) through the production
code: upsert_papers, the BM25 index, the abstract vectors, then papers.fulltext.read.read_paper
for each paper, fetched over real HTTP from a local server standing in for arxiv.org
(tests/fakes/arxiv_pdfs.py). Then each question of bench/fulltext_questions.py (answers in
the papers' bodies, never in their abstracts; written by reading the PDFs' text) is asked through
the API (POST /api/threads/<id>/messages/, a new thread each) with the configured answer backend
(the offline extractive composer by default), once per FULLTEXT_RETRIEVAL variant and
FULLTEXT_CHUNK_RANKING. The scratch database is kept: a second run finds the PDFs read and only
asks the questions (about a minute); `--fresh` reads them again.

A question counts as answered when the answer cites a card of the right paper whose page span
holds one of the pages the answer string is printed on and whose passage contains that string
(case and spacing aside). "retrieved" counts the same among all cards, cited or not; "stated"
the answered questions whose answer text itself says the answer string (the extractive composer
may cite the right card for another of its sentences). The tuning questions (QUESTIONS), the
held-out ones (HELD_OUT) and the fresh ones (FRESH), never used to choose a change, and the kinds a
researcher asks (KINDS: written before session 13's changes, then worked on, so tuning from then
on) and READER (session 14's check, written before its changes, only reported) are counted apart
and together. Results in
docs/BENCHMARKS.md.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.test import override_settings
from tqdm import tqdm

from bench import SHARED_DATA
from bench.fulltext_questions import FRESH, HELD_OUT, KINDS, QUESTIONS, READER
from bench.scratch_db import scratch_database

VARIANTS = ("fused", "papers_first", "direct", "off")
SPLITS = {
    "tuning": QUESTIONS,
    "held_out": HELD_OUT,
    "fresh": FRESH,
    "kinds": KINDS,
    "reader": READER,
}


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def holds_answer(card: dict, case: dict) -> bool:
    """The card is of the right paper, its pages hold the answer's page, its passage the answer."""
    if card.get("arxiv_id") != case["arxiv_id"] or card.get("kind") != "fulltext":
        return False
    first, last = card.get("page") or 0, card.get("page_end") or card.get("page") or 0
    if not any(first <= page <= last for page in case["pages"]):
        return False
    return _norm(case["answer"]) in _norm(card.get("passage", ""))


class Command(BaseCommand):
    help = "Full-text questions: share answered from the right page's chunk, per retrieval variant."

    def add_arguments(self, parser):
        parser.add_argument(
            "--questions", type=Path, help="JSON lines (default: bench/fulltext_questions.py)"
        )
        parser.add_argument(
            "--split",
            choices=[*SPLITS, "all"],
            default="all",
            help="which questions of bench/fulltext_questions.py (default: every split)",
        )
        parser.add_argument("--pdfs", type=Path, default=SHARED_DATA / "arxiv-pdf")
        parser.add_argument("--variants", default=",".join(VARIANTS))
        parser.add_argument(
            "--chunk-rankings",
            default="",
            help="FULLTEXT_CHUNK_RANKING values to compare (default: the setting)",
        )
        parser.add_argument("--database", default="bench_fulltext")
        parser.add_argument("--fresh", action="store_true", help="rebuild the scratch database")
        parser.add_argument("--verbose", action="store_true", help="print every miss")
        parser.add_argument(
            "--word-lists",
            action="store_true",
            help="also rank each question's paper in each word list alone (abstracts' BM25, the"
            " chunk word search, the bodies' BM25: bench/word_lists.py)",
        )
        parser.add_argument(
            "--json-out",
            type=Path,
            metavar="FILE",
            help="write every question's answer and outcome to FILE (JSON), to diff two runs",
        )

    def handle(
        self,
        *args,
        questions,
        split,
        pdfs,
        variants,
        chunk_rankings,
        database,
        fresh,
        verbose,
        json_out=None,
        word_lists=False,
        **options,
    ):
        from chat.retrieval.chunks import RANKINGS

        variants = [v.strip() for v in variants.split(",") if v.strip()]
        if unknown := set(variants) - set(VARIANTS):
            raise CommandError(f"unknown variants {sorted(unknown)}; use {', '.join(VARIANTS)}")
        rankings = [r.strip() for r in chunk_rankings.split(",") if r.strip()] or [
            settings.FULLTEXT_CHUNK_RANKING
        ]
        if unknown := set(rankings) - set(RANKINGS):
            raise CommandError(
                f"unknown chunk rankings {sorted(unknown)}; use {', '.join(RANKINGS)}"
            )
        if not (pdfs / "metadata.jsonl").is_file():
            raise CommandError(f"no metadata.jsonl in {pdfs}")
        if questions:
            lines = questions.read_text().splitlines()
            cases = [{"split": "file", **json.loads(line)} for line in lines if line.strip()]
        else:
            chosen = SPLITS if split == "all" else {split: SPLITS[split]}
            cases = [{"split": name, **case} for name, rows in chosen.items() for case in rows]
        with scratch_database(database, keep=not fresh):
            self._load(pdfs)
            results = {}
            for variant in variants:
                for chunk_ranking in rankings:
                    label = f"{variant}/{chunk_ranking}"
                    with override_settings(
                        FULLTEXT_RETRIEVAL=variant,
                        FULLTEXT_CHUNK_RANKING=chunk_ranking,
                        CHAT_RATE_LIMIT_PER_MINUTE=0,
                    ):
                        results[label] = self._ask_all(cases, label, verbose)
            if word_lists:
                from bench import word_lists as lists

                found = lists.ranks(cases)
        self.stdout.write(
            f"\n{len(cases)} questions, backend {settings.LLM_BACKEND or 'extractive'}, "
            f"embedder {settings.EMBEDDING_BACKEND}"
        )
        self.stdout.write(
            f"{'variant/ranking':20} {'split':9} {'answered':>12} {'retrieved':>12} "
            f"{'stated':>12} {'s/question':>11}"
        )
        splits = list(dict.fromkeys(case["split"] for case in cases))
        for variant, outcomes in results.items():
            for name in [*splits, "all"] if len(splits) > 1 else splits:
                rows = [o for o in outcomes if name in ("all", o["split"])]
                n = len(rows)
                counts = [sum(o[key] for o in rows) for key in ("answered", "retrieved", "stated")]
                seconds = sum(o["seconds"] for o in rows) / n
                self.stdout.write(
                    f"{variant:20} {name:9} "
                    + " ".join(f"{count:>4}/{n} {count / n:5.0%}" for count in counts)
                    + f" {seconds:10.2f}"
                )
        if word_lists:
            self.stdout.write("\nEach word list alone: the rank of the question's paper")
            for line in lists.summary(found):
                self.stdout.write(line)
        if json_out:
            json_out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")

    def _load(self, pdfs: Path) -> None:
        """The papers, their BM25 and abstract vectors, and their full text read over HTTP."""
        from papers.fulltext.read import read_paper
        from papers.indexing.lexical import index_missing
        from papers.indexing.vectors import embed_missing
        from papers.ingest.snapshot import parse_snapshot_record
        from papers.ingest.upsert import upsert_papers
        from papers.models import FullText, Paper
        from tests.fakes.arxiv_pdfs import FakePdfServer

        lines = (pdfs / "metadata.jsonl").read_text().splitlines()
        upsert_papers([parse_snapshot_record(json.loads(line)) for line in lines if line.strip()])
        index_missing()
        embed_missing()
        with (
            FakePdfServer(data_dir=pdfs) as server,
            override_settings(ARXIV_PDF_URL=server.url_template, ARXIV_DELAY_SECONDS=0),
        ):
            started = time.perf_counter()
            papers = list(Paper.objects.order_by("arxiv_id"))
            for paper in tqdm(papers, desc="reading PDFs", unit="paper"):
                read_paper(paper)
            failed = FullText.objects.exclude(status=FullText.Status.OK)
            for fulltext in failed.select_related("paper"):
                self.stderr.write(f"{fulltext.paper.arxiv_id}: not read: {fulltext.reason}")
            self.stdout.write(
                f"{len(papers)} papers read in {time.perf_counter() - started:.0f} s "
                f"({len(server.requests)} PDFs fetched this run)"
            )

    def _ask_all(self, cases, variant: str, verbose: bool) -> list[dict]:
        """One outcome per question: its split, answered, retrieved, stated, seconds."""
        from django.contrib.auth import get_user_model
        from rest_framework.authtoken.models import Token
        from rest_framework.test import APIClient

        from chat.models import Thread

        user, _ = get_user_model().objects.get_or_create(username="bench_fulltext")
        token, _ = Token.objects.get_or_create(user=user)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        outcomes = []
        for case in tqdm(cases, desc=variant, unit="question"):
            started = time.perf_counter()
            thread = Thread.objects.create(owner=user, title=f"bench {variant}")
            response = client.post(
                f"/api/threads/{thread.pk}/messages/", {"text": case["question"]}, format="json"
            )
            if response.status_code != 201:
                raise CommandError(
                    f"the API refused {case['question']!r}: {response.content[:300]}"
                )
            answer = response.json()["answer"]
            cards = answer["sources"]
            cited = [c for c in cards if c["number"] in set(answer["citations"])]
            ok = any(holds_answer(c, case) for c in cited)
            outcomes.append(
                {
                    "split": case["split"],
                    "answered": ok,
                    "retrieved": any(holds_answer(c, case) for c in cards),
                    "stated": ok and _norm(case["answer"]) in _norm(answer["content"]),
                    "seconds": time.perf_counter() - started,
                    "question": case["question"],
                    "expected": case["answer"],
                    "answer": answer["content"],
                    "holding": [c["number"] for c in cards if holds_answer(c, case)],
                }
            )
            if verbose and not ok:
                where = [(c["number"], c["arxiv_id"], c.get("pages")) for c in cards]
                self.stdout.write(
                    f"MISS [{variant}] [{case['split']}] {case['arxiv_id']} p{case['pages']} {case['question']}\n"
                    f"     cards {where}\n     answer: {answer['content'][:300]!r}"
                )
        return outcomes

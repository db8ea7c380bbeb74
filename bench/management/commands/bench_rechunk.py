"""Seconds per paper of a re-cut from stored text (fetch_fulltext --rechunk) after an upgrade,
against a fresh read of the same papers, with the configured embedder.

The first PAPERS shared PDFs are read (served by the local arXiv stand-in, no delay) into a scratch
database (`bench_rechunk`, kept between runs). Then, REPEAT times:
- "pre-table chunks": each paper's chunks as the release before tables left them (the chunker of
  git d2738f3^, papers/fulltext/chunk.py, loaded from git; vectors reused where the text is the
  same), no chunker recorded; `fetch_fulltext --rechunk` re-cuts them;
- "signature missing": the chunks are current but no chunker is recorded (an install read after
  tables, before the signature): the re-cut finds them the same and only records it.
"""

from __future__ import annotations

import subprocess
import sys
import time
import types
from pathlib import Path

from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.test import override_settings

from bench import SHARED_DATA
from bench.scratch_db import scratch_database

PRE_TABLE_CHUNKER = "d2738f3^:papers/fulltext/chunk.py"


class Command(BaseCommand):
    help = "Time a re-cut of stale full texts (fetch_fulltext --rechunk) against a fresh read."

    def add_arguments(self, parser):
        parser.add_argument("--papers", type=int, default=10)
        parser.add_argument("--repeat", type=int, default=2)
        parser.add_argument("--pdfs", type=Path, default=SHARED_DATA / "arxiv-pdf")
        parser.add_argument("--database", default="bench_rechunk")

    def handle(self, *args, papers, repeat, pdfs, database, **options):
        with scratch_database(database, keep=True):
            self._run(papers, repeat, pdfs)

    def _run(self, count: int, repeat: int, pdfs: Path):
        import json

        from papers.embeddings import get_embedder
        from papers.fulltext.read import read_paper
        from papers.ingest.snapshot import parse_snapshot_record
        from papers.ingest.upsert import upsert_papers
        from papers.models import FullText, IngestRun, Paper
        from tests.fakes.arxiv_pdfs import FakePdfServer

        lines = (pdfs / "metadata.jsonl").read_text().splitlines()
        upsert_papers([parse_snapshot_record(json.loads(line)) for line in lines if line.strip()])
        embedder = get_embedder()
        chosen = list(Paper.objects.order_by("arxiv_id")[:count])
        unread = [p for p in chosen if not FullText.objects.filter(paper=p, status="ok").exists()]
        with (
            FakePdfServer(data_dir=pdfs) as server,
            override_settings(ARXIV_PDF_URL=server.url_template, ARXIV_DELAY_SECONDS=0),
        ):
            started = time.perf_counter()
            for paper in unread:
                read_paper(paper)
            if unread:
                seconds = time.perf_counter() - started
                self.stdout.write(
                    f"fresh read of {len(unread)} papers ({embedder.name}): {seconds:.1f} s, "
                    f"{seconds / len(unread):.2f} s a paper (local server, no delay)"
                )
        old = _pre_table_chunker()
        for rep in range(repeat):
            _as_the_pre_table_release_left_them(chosen, old, embedder)
            self._recut(f"[{rep}] pre-table chunks", len(chosen), IngestRun)
            FullText.objects.filter(paper__in=chosen).update(chunker="")
            self._recut(f"[{rep}] signature missing", len(chosen), IngestRun)

    def _recut(self, label: str, papers: int, IngestRun):
        started = time.perf_counter()
        call_command("fetch_fulltext", "--rechunk", "--no-progress", stdout=self.stdout)
        seconds = time.perf_counter() - started
        run = IngestRun.objects.filter(source=IngestRun.Source.RECHUNK).first()
        load = open("/proc/loadavg").read().split()[0]
        self.stdout.write(
            f"{label}: {seconds:.1f} s, {seconds / papers:.2f} s a paper, load {load}; "
            f"timings {run.timings}"
        )


def _pre_table_chunker() -> types.ModuleType:
    source = subprocess.run(
        ["git", "show", PRE_TABLE_CHUNKER], capture_output=True, text=True, check=True
    ).stdout
    module = types.ModuleType("pre_table_chunk")
    sys.modules[module.__name__] = module  # its dataclasses look their module up
    exec(compile(source, PRE_TABLE_CHUNKER, "exec"), module.__dict__)  # noqa: S102
    return module


def _as_the_pre_table_release_left_them(papers, old, embedder) -> None:
    from papers.fulltext.parse import ParsedPdf
    from papers.fulltext.read import chunk_passages, index_words
    from papers.models import FullText, Passage

    for paper in papers:
        fulltext = FullText.objects.get(paper=paper)
        text = fulltext.text
        parsed = ParsedPdf(
            text=text,
            page_starts=list(fulltext.page_starts),
            sections=fulltext.sections,
            pages=fulltext.pages,
        )
        chunks = old.chunk_text(parsed, embedder)
        vectors = {
            text[start:end]: vector
            for start, end, vector in Passage.objects.chunks()
            .filter(paper=paper)
            .values_list("start", "end", "embedding")
        }
        texts = [chunk.text(text) for chunk in chunks]
        if new := [t for t in dict.fromkeys(texts) if t not in vectors]:
            vectors.update(zip(new, embedder.embed_documents(new), strict=True))
        Passage.objects.chunks().filter(paper=paper).delete()
        Passage.objects.bulk_create(
            chunk_passages(
                paper.pk, paper.published, chunks, [vectors[t] for t in texts], embedder.name
            )
        )
        index_words(paper, text)
        FullText.objects.filter(pk=fulltext.pk).update(chunker="")

"""`manage.py bench_pdf_parsers [--max-pages 4] [--pdfs N] [--e2e 3]`: pypdfium2, pypdf and
pdfminer.six on the shared arXiv PDFs (bench/pdf_parsers.py says what each probe measures), then
the full-text pipeline end to end without the fetch: parse + chunk + embed (the configured
embedder) on the N shortest PDFs, as papers/minute."""

import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from bench import SHARED_DATA
from bench.pdf_parsers import PARSERS, compare, shared_pdfs
from papers.embeddings import get_embedder
from papers.fulltext.chunk import chunk_text
from papers.fulltext.parse import parse_pdf


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser):
        parser.add_argument("--data", type=Path, default=SHARED_DATA / "arxiv-pdf")
        parser.add_argument("--pdfs", type=int, help="only the first N PDFs (by id)")
        parser.add_argument(
            "--max-pages",
            type=int,
            default=4,
            help="pages read per PDF by each parser (pdfminer.six takes ~0.5 s a page)",
        )
        parser.add_argument("--parsers", nargs="+", choices=PARSERS, default=list(PARSERS))
        parser.add_argument(
            "--e2e", type=int, default=3, help="PDFs for the end-to-end run (0: none)"
        )

    def handle(self, *args, data, pdfs, max_pages, parsers, e2e, **options):
        if not data.is_dir():
            raise CommandError(f"no PDF folder at {data} (../shared absent?)")
        chosen = shared_pdfs(data, pdfs)
        self.stdout.write(
            f"{len(chosen)} PDFs, up to {max_pages} pages each, each parser in its own process"
        )
        results = compare(chosen, max_pages, parsers)
        self.stdout.write(
            "| parser | pages | pages/s | peak MB | abstract 8-gram recall 1-col / 2-col "
            "| ligatures left | line-end hyphens marked | ± | (cid:) | 1-char lines | errors |"
        )
        self.stdout.write("|---|---|---|---|---|---|---|---|---|---|---|")
        base = results[0].pages_per_second or 1
        for r in results:
            self.stdout.write(
                f"| {r.parser} {r.version} | {r.pages} | {r.pages_per_second:.1f} "
                f"({r.pages_per_second / base:.2f}x) | {r.peak_mb:.0f} | "
                f"{r.recall_one_column:.3f} / {r.recall_two_column:.3f} | {r.ligatures} | "
                f"{r.line_end_hyphens} | {r.plus_minus} | {r.cid_escapes} | {r.one_char_lines} "
                f"| {len(r.errors)} |"
            )
            for error in r.errors:
                self.stdout.write(f"    {error}")
        if e2e:
            self._end_to_end(sorted(chosen, key=lambda p: p["pages"])[:e2e], chosen)

    def _end_to_end(self, pdfs: list[dict], everything: list[dict]) -> None:
        embedder = get_embedder()
        embedder.embed_documents(["warm up"])  # the model loads outside the timing
        # Baseline in the same process (the machine's load varies from run to run): the
        # abstracts of the shared papers, what the embedder does all day.
        abstracts = [p["abstract"] for p in everything if p["abstract"].strip()]
        t = time.perf_counter()
        embedder.embed_documents(abstracts)
        abstract_rate = len(abstracts) / (time.perf_counter() - t)
        stages = {"parse": 0.0, "chunk": 0.0, "embed": 0.0}
        pages = chunks = chunk_tokens = 0
        started = time.perf_counter()
        for pdf in pdfs:
            content = Path(pdf["path"]).read_bytes()
            t0 = time.perf_counter()
            parsed = parse_pdf(content)
            t1 = time.perf_counter()
            spans = chunk_text(parsed, embedder)
            t2 = time.perf_counter()
            texts = [c.text(parsed.text) for c in spans]
            embedder.embed_documents(texts)
            t3 = time.perf_counter()
            chunk_tokens += sum(map(embedder.count_tokens, texts))
            stages["parse"] += t1 - t0
            stages["chunk"] += t2 - t1
            stages["embed"] += t3 - t2
            pages += parsed.pages
            chunks += len(spans)
        seconds = time.perf_counter() - started
        self.stdout.write(
            f"\nend to end (fetch excluded), {embedder.name}, EMBEDDING_THREADS="
            f"{settings.EMBEDDING_THREADS}: {len(pdfs)} papers, {pages} pages, {chunks} chunks in "
            f"{seconds:.1f} s = {len(pdfs) / seconds * 60:.2f} papers/min, "
            f"{pages / seconds * 60:.0f} pages/min, {chunks / seconds:.1f} chunks/s; "
            + ", ".join(f"{k} {v:.1f} s ({v / seconds:.0%})" for k, v in stages.items())
        )
        self.stdout.write("  " + ", ".join(p["arxiv_id"] for p in pdfs))
        abstract_tokens = sum(map(embedder.count_tokens, abstracts)) / len(abstracts)
        self.stdout.write(
            f"  baseline, same process: {abstract_rate:.1f} abstracts/s (mean "
            f"{abstract_tokens:.0f} tokens); chunks (mean {chunk_tokens / chunks:.0f} tokens) "
            f"embed at {chunks / stages['embed']:.1f}/s = "
            f"{chunks / stages['embed'] / abstract_rate:.2f}x the abstract rate"
        )

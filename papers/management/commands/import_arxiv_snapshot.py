"""`manage.py import_arxiv_snapshot PATH`: bulk import of the arXiv metadata snapshot."""

import os
import sys
from datetime import date

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from papers.ingest.snapshot import Problem, import_snapshot
from papers.jobs import enqueue_indexing

# Beyond this many, skipped lines are counted, not printed (all are in the IngestRun, capped).
PRINTED_PROBLEMS = 50


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise CommandError(f"--since wants a date like 2024-01-31, not {text!r}") from None


class Command(BaseCommand):
    help = (
        "Import the arXiv metadata snapshot (JSON lines, plain or .gz): streams, writes in bulk, "
        "skips malformed lines with their line numbers, idempotent."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="arxiv-metadata-oai-snapshot.json(.gz) or .jsonl(.gz)")
        parser.add_argument("--limit", type=int, help="stop after this many valid papers")
        parser.add_argument(
            "--since", type=_date, help="only papers whose latest version is on or after DATE"
        )
        parser.add_argument("--batch-size", type=int, default=1000)
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")
        parser.add_argument(
            "--no-index",
            action="store_true",
            help="do not queue the indexing job (BM25 + vectors) for the new papers",
        )

    def handle(self, *args, path, limit, since, batch_size, no_progress, no_index, **options):
        if limit is not None and limit < 1:
            raise CommandError("--limit must be at least 1")
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1")
        # Counted in bytes of the file read (compressed bytes for .gz), whatever --limit says:
        # the bar ends where the file or the limit does, and its ETA is the file's.
        bar = tqdm(
            total=os.path.getsize(path) if os.path.isfile(path) else None,
            unit="B",
            unit_scale=True,
            file=sys.stderr,
            disable=no_progress,
            dynamic_ncols=True,
        )
        if limit and not since:
            self.stderr.write(
                "note: the snapshot is sorted oldest first, so --limit alone imports its oldest "
                "papers; add --since 2024-01-01 (or later) for recent ones"
            )
        printed = 0

        def on_problem(problem: Problem) -> None:
            nonlocal printed
            printed += 1
            if printed <= PRINTED_PROBLEMS:
                # Lift the bar off the terminal while the line is written.
                with bar.external_write_mode(file=sys.stderr):
                    self.stderr.write(f"skipped {problem}")

        def progress(done: int, total: int, counts) -> None:
            handled = counts.new + counts.updated + counts.unchanged
            bar.total = total
            bar.update(done - bar.n)
            rate = handled / bar.format_dict["elapsed"] if bar.format_dict["elapsed"] else 0
            bar.set_postfix(papers=handled, new=counts.new, per_s=f"{rate:.0f}", refresh=False)

        try:
            result = import_snapshot(
                path,
                limit=limit,
                since=since,
                batch_size=batch_size,
                progress=progress,
                on_problem=on_problem,
            )
        except FileNotFoundError as exc:
            raise CommandError(str(exc)) from None
        finally:
            bar.close()
        if printed > PRINTED_PROBLEMS:
            self.stderr.write(
                f"… {printed - PRINTED_PROBLEMS} more skipped lines (see the ingest run)"
            )
        counts = result.counts
        self.stdout.write(
            f"{result.run.get_status_display()}: {counts.new} new, {counts.updated} updated, "
            f"{counts.unchanged} unchanged, {result.problems} skipped lines"
            + (f", {result.filtered} before --since" if since else "")
            + f" in {result.seconds:.1f} s ({result.papers_per_second:.0f} papers/s);"
            f" ingest run #{result.run.pk}"
        )
        if counts.written and not no_index:
            enqueue_indexing("after snapshot import")
            self.stdout.write(
                "indexing (BM25 + vectors) queued: the job cluster of `scripts/run` does it in the"
                " background; `manage.py embed_papers` does the vectors in this terminal instead"
            )
        if result.run.status == "failed":
            raise CommandError(result.run.errors[-1]["error"] if result.run.errors else "failed")

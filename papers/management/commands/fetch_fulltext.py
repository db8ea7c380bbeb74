from datetime import UTC, datetime

from django.core.management.base import BaseCommand, CommandError

from papers.fulltext.rechunk import recut_papers, select_stale
from papers.fulltext.runs import read_papers, select_papers
from papers.ingest.runs import RunBusy
from papers.management.arguments import positive_int


def _date(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text).replace(tzinfo=UTC)
    except ValueError:
        raise ValueError(text) from None


class Command(BaseCommand):
    help = (
        "Read the full text of papers from their arXiv PDFs: fetch (politely), parse, chunk, "
        "embed. Idempotent: a paper already read at its version is skipped, a newer version "
        "replaces it. A paper that fails is recorded with its reason and the next one proceeds; "
        "the exit code is 0 whenever the run ran. Recorded as an ingest run (source fulltext). "
        "With --rechunk: re-cut the chunks of papers read by an older chunker from their stored "
        "text (no PDF fetched; after an upgrade), recorded as a run of source rechunk."
    )

    def add_arguments(self, parser):
        parser.add_argument("arxiv_ids", nargs="*", metavar="ARXIV_ID", help="papers to read")
        parser.add_argument("--since", type=_date, help="papers published on or after this date")
        parser.add_argument(
            "--category",
            action="append",
            default=[],
            dest="categories",
            metavar="CAT",
            help="only papers in this category (repeatable; an archive such as cs takes all)",
        )
        parser.add_argument("--limit", type=positive_int, help="read at most N papers")
        parser.add_argument(
            "--retry-failed",
            action="store_true",
            help="also papers whose reading failed at their current version",
        )
        parser.add_argument(
            "--rechunk",
            action="store_true",
            help="re-cut papers whose chunks an older chunker cut, from their stored text (all "
            "of them, or the ARXIV_IDs / --limit given); fetches nothing",
        )
        parser.add_argument(
            "--reread",
            action="store_true",
            help="fetch and read the ARXIV_IDs again even when read at their version (after a "
            "change in how PDF text is cleaned, which --rechunk cannot recover)",
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args, arxiv_ids, since, categories, limit, retry_failed, **options):
        if options["rechunk"]:
            return self._rechunk(arxiv_ids, limit, progress=not options["no_progress"])
        if options["reread"] and not arxiv_ids:
            raise CommandError("--reread reads the ARXIV_IDs given again: name them")
        if not (arxiv_ids or since or categories or limit):
            raise CommandError("say which papers: ARXIV_ID ..., --since, --category or --limit")
        selection = select_papers(
            arxiv_ids, since=since, categories=categories, limit=limit, retry_failed=retry_failed
        )
        params = {
            "arxiv_ids": arxiv_ids,
            "since": since.date().isoformat() if since else None,
            "categories": categories,
            "limit": limit,
        }
        run = read_papers(
            selection,
            params=params,
            progress=not options["no_progress"],
            force=options["reread"],
        )
        failed = sum(e.get("error") != "not in the catalogue" for e in run.errors)
        self.stdout.write(
            f"full text run #{run.pk} {run.status}: {run.new} read, {run.updated} replaced by a "
            f"newer version, {run.unchanged} already read, {run.skipped} not in the catalogue, "
            f"{failed} failed in {run.timings.get('total', 0):.1f} s"
        )
        for error in run.errors:
            self.stdout.write(f"  {error.get('arxiv_id', '')}: {error['error']}")

    def _rechunk(self, arxiv_ids, limit, progress: bool):
        rows, not_stale = select_stale(arxiv_ids, limit=limit)
        for arxiv_id in not_stale:
            self.stdout.write(f"  {arxiv_id}: no stale full text (not read, or already current)")
        if not rows:
            self.stdout.write("nothing to re-cut: every paper's chunks are current")
            return
        try:
            run = recut_papers(
                rows, params={"arxiv_ids": arxiv_ids, "limit": limit}, progress=progress
            )
        except RunBusy as exc:
            raise CommandError(f"not started: {exc}") from exc
        seconds = run.timings.get("total", 0)
        self.stdout.write(
            f"re-cut run #{run.pk} {run.status}: {run.updated} re-cut "
            f"({run.progress.get('embedded', 0)} of {run.progress.get('chunks', 0)} chunks "
            f"embedded anew), {run.unchanged} unchanged, {run.skipped} read again meanwhile, "
            f"{len(run.errors)} failed in {seconds:.1f} s"
            + (f" ({seconds / len(rows):.2f} s a paper)" if rows else "")
        )
        for error in run.errors:
            self.stdout.write(f"  {error.get('arxiv_id', '')}: {error['error']}")

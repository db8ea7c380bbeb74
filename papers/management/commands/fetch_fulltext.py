from datetime import UTC, datetime

from django.core.management.base import BaseCommand, CommandError

from papers.fulltext.runs import read_papers, select_papers
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
        "the exit code is 0 whenever the run ran. Recorded as an ingest run (source fulltext)."
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
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args, arxiv_ids, since, categories, limit, retry_failed, **options):
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
        run = read_papers(selection, params=params, progress=not options["no_progress"])
        failed = sum(e.get("error") != "not in the catalogue" for e in run.errors)
        self.stdout.write(
            f"full text run #{run.pk} {run.status}: {run.new} read, {run.updated} replaced by a "
            f"newer version, {run.unchanged} already read, {run.skipped} not in the catalogue, "
            f"{failed} failed in {run.timings.get('total', 0):.1f} s"
        )
        for error in run.errors:
            self.stdout.write(f"  {error.get('arxiv_id', '')}: {error['error']}")

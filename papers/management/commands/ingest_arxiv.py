"""`manage.py ingest_arxiv`: fetch recent papers from the arXiv API (the nightly job, by hand)."""

from datetime import UTC, date, datetime, time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from papers.ingest.arxiv_api import ingest_arxiv
from papers.jobs import enqueue_indexing


def _moment(text: str) -> datetime:
    """2024-01-31 (midnight UTC) or a full ISO timestamp."""
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), time.min, tzinfo=UTC)
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise CommandError(
            f"expected a date like 2024-01-31 or 2024-01-31T12:00, not {text!r}"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class Command(BaseCommand):
    help = (
        "Fetch papers submitted in a window from the arXiv API (default: since the last "
        "successful run, else since the catalogue's newest paper, else ARXIV_INITIAL_DAYS; "
        "continues a failed run where it stopped)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--since", type=_moment, help="window start (date or ISO time, UTC)")
        parser.add_argument("--until", type=_moment, help="window end (default: now)")
        parser.add_argument(
            "--category",
            action="append",
            dest="categories",
            metavar="CATEGORY",
            help=f"an arXiv category; repeatable (default: {' '.join(settings.ARXIV_CATEGORIES)})",
        )

    def handle(self, *args, since, until, categories, **options):
        try:
            result = ingest_arxiv(
                since=since, until=until, categories=categories, report=self.stdout.write
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if result.window_start:
            self.stdout.write(
                f"window {result.window_start:%Y-%m-%d %H:%M} .. {result.window_end:%Y-%m-%d %H:%M} UTC"
            )
        self.stdout.write(result.summary())
        if result.changed:
            enqueue_indexing("after ingest_arxiv")
            self.stdout.write("indexing (BM25 + vectors) queued for the job cluster")
        if result.status in ("failed", "busy"):
            raise CommandError(result.message or result.status)

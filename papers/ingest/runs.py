"""Bookkeeping of one ingest run: an IngestRun row kept up to date as the run goes."""

import time

from django.utils import timezone

from papers.ingest.upsert import UpsertCounts
from papers.models import IngestRun

# Enough to diagnose a bad file; a file with a million bad lines must not bloat one row.
MAX_STORED_ERRORS = 100


class RunRecorder:
    """Creates the IngestRun at start, accumulates counts and errors, closes it with a status."""

    def __init__(self, source: str, params: dict, **fields):
        self.run = IngestRun.objects.create(source=source, params=params, **fields)
        self.counts = UpsertCounts()
        self.error_count = 0
        self._started = time.monotonic()

    def error(self, message: str, **context) -> None:
        self.error_count += 1
        if len(self.run.errors) < MAX_STORED_ERRORS:
            self.run.errors.append({**context, "error": message})

    def add(self, counts: UpsertCounts) -> None:
        self.counts.add(counts)

    def save_progress(self, **fields) -> None:
        """Persist counts (and e.g. the resume cursor) now, so a crash loses nothing recorded."""
        for name, value in fields.items():
            setattr(self.run, name, value)
        self._copy_counts()
        self.run.save()

    def finish(self, status: str | None = None, **timings) -> IngestRun:
        elapsed = time.monotonic() - self._started
        if status is None:
            status = IngestRun.Status.PARTIAL if self.error_count else IngestRun.Status.SUCCEEDED
        if self.error_count > len(self.run.errors):
            hidden = self.error_count - len(self.run.errors)
            self.run.errors.append({"error": f"… and {hidden} more errors not stored"})
        self.run.status = status
        self.run.finished_at = timezone.now()
        self.run.timings = {**timings, "total": round(elapsed, 3)}
        self._copy_counts()
        self.run.save()
        return self.run

    def _copy_counts(self) -> None:
        for name, value in self.counts.as_dict().items():
            setattr(self.run, name, value)

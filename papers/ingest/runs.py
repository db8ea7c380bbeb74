"""Bookkeeping of runs (ingests and indexing): an IngestRun row kept up to date as the run goes,
and the rule that only one run of a kind is active at a time across all processes.

One run at a time is a PostgreSQL session advisory lock per kind: it is released when the process
holding it dies (a killed worker never blocks the next run), and any process can see whether it
is held (`pg_locks`), which is how pages and /healthz know that indexing is under way.
"""

import time
from contextlib import contextmanager

from django.db import connection
from django.utils import timezone

from papers.ingest.upsert import UpsertCounts
from papers.models import IngestRun

# Enough to diagnose a bad file; a file with a million bad lines must not bloat one row.
MAX_STORED_ERRORS = 100

# Fixed, arbitrary keys of the advisory locks: one run of each kind at a time.
LOCK_KEYS = {
    "arxiv": 0x61727869,  # "arxi": arXiv API ingests and refreshes
    "indexing": 0x696E6478,  # "indx": BM25 + vectors of new papers
    "rechunk": 0x72636E6B,  # "rcnk": full texts re-cut by a newer chunker
}


class RunBusy(Exception):
    """Another run of this kind holds the lock."""

    def __init__(self, kind: str, active: IngestRun | None = None):
        self.kind = kind
        self.active = active
        super().__init__(describe_busy(kind, active))


def describe_busy(kind: str, active: IngestRun | None) -> str:
    """One line naming the run that is active: what a second caller is told."""
    if active is None:
        return f"another {kind} run is active"
    text = f"{kind} run #{active.pk} is active (started {active.started_at:%Y-%m-%d %H:%M} UTC"
    done, total = active.progress.get("done"), active.progress.get("total")
    if total:
        text += f", {done:,} of {total:,} papers"
    return text + ")"


def _try_lock(kind: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [LOCK_KEYS[kind]])
        return cursor.fetchone()[0]


def _unlock(kind: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(%s)", [LOCK_KEYS[kind]])


def lock_held(kind: str) -> bool:
    """True while some process runs a run of this kind (holds its advisory lock)."""
    key = LOCK_KEYS[kind]
    with connection.cursor() as cursor:
        # A bigint key shows in pg_locks as classid (high 32 bits), objid (low 32), objsubid 1.
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted"
            " AND classid = %s AND objid = %s AND objsubid = 1"
            # Advisory locks belong to one database; pg_locks lists the whole server's.
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))",
            [key >> 32, key & 0xFFFFFFFF],
        )
        return cursor.fetchone()[0]


def active_run(source: str) -> IngestRun | None:
    """The newest run of `source` still marked running (the one holding the lock, if any)."""
    return IngestRun.objects.filter(source=source, status=IngestRun.Status.RUNNING).first()


@contextmanager
def exclusive(kind: str, source: str | None = None):
    """Hold the lock of `kind` for the block; RunBusy (naming the active run of `source`) when
    another process holds it. Runs of `source` left "running" by a dead process are closed."""
    if not _try_lock(kind):
        raise RunBusy(kind, active_run(source) if source else None)
    try:
        if source:
            close_interrupted(source)
        yield
    finally:
        _unlock(kind)


def close_interrupted(source: str) -> int:
    """Runs of `source` still marked running while we hold its lock: their process died."""
    stale = list(IngestRun.objects.filter(source=source, status=IngestRun.Status.RUNNING))
    for run in stale:
        run.status = IngestRun.Status.FAILED
        run.finished_at = timezone.now()
        run.errors = [*run.errors, {"error": "interrupted (the process stopped mid-run)"}]
        run.save(update_fields=["status", "finished_at", "errors"])
    return len(stale)


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

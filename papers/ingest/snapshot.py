"""Bulk import of the arXiv metadata snapshot (Kaggle `arxiv-metadata-oai-snapshot`, JSON lines).

Streams the file (plain or gzip) line by line and writes in batches, so memory stays flat however
large the file is. Duplicate ids are found with a temporary table on the database side rather
than a Python set that would grow with the file. Malformed lines are reported with their line
numbers and skipped; the rest of the file still imports.
"""

import gzip
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path
from queue import Full, Queue
from typing import IO

from django.db import DatabaseError, connection

from papers.identifiers import InvalidArxivId, split_version, submission_month
from papers.ingest.runs import RunRecorder
from papers.ingest.upsert import (
    BATCH_SIZE,
    PaperRecord,
    UpsertCounts,
    looks_withdrawn,
    upsert_batch,
)
from papers.models import IngestRun

logger = logging.getLogger("papers.ingest")


class MalformedRecord(ValueError):
    """A snapshot line that cannot become a paper; the message says why."""


@dataclass(frozen=True)
class Problem:
    line: int
    error: str
    arxiv_id: str | None = None

    def __str__(self) -> str:
        where = f"line {self.line}" + (f" ({self.arxiv_id})" if self.arxiv_id else "")
        return f"{where}: {self.error}"


@dataclass
class SnapshotResult:
    run: IngestRun
    counts: UpsertCounts
    lines: int = 0
    filtered: int = 0  # valid, but outside --since
    problems: int = 0
    seconds: float = 0.0

    @property
    def papers_per_second(self) -> float:
        handled = self.counts.new + self.counts.updated + self.counts.unchanged
        return handled / self.seconds if self.seconds else 0.0


# --- One line -> one PaperRecord ----------------------------------------------------------------

_AUTHOR_SPLIT = re.compile(r",\s*|\s+and\s+")


def _version_date(text: str) -> datetime:
    try:
        # "Mon, 2 Apr 2007 19:18:42 GMT": strptime is several times faster than the email parser.
        return datetime.strptime(text, "%a, %d %b %Y %H:%M:%S %Z").replace(tzinfo=UTC)
    except ValueError:
        parsed = parsedate_to_datetime(text)
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def not_after_first_month(earliest_known: datetime, arxiv_id: str) -> datetime:
    """The publication date of a record that does not list v1 (copies of the snapshot trimmed to
    the latest version, or with only update_date): its earliest date is a revision's, often years
    after the paper appeared (the Transformer's v7 is dated 2023). The identifier still gives
    v1's month: past that month, its first day is the better date."""
    month = submission_month(arxiv_id)
    following = (month + timedelta(days=32)).replace(day=1)
    return month if earliest_known >= following else earliest_known


def _dates_and_version(data: dict, arxiv_id: str) -> tuple[datetime, datetime, int]:
    versions = data.get("versions")
    if isinstance(versions, list) and versions:
        try:
            first = _version_date(versions[0]["created"])
            last = _version_date(versions[-1]["created"])
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise MalformedRecord(f"unreadable versions[].created ({exc})") from None
        label = str(versions[-1].get("version", ""))
        number = int(label[1:]) if label[:1] == "v" and label[1:].isdigit() else len(versions)
        if str(versions[0].get("version", "v1")) != "v1":
            first = not_after_first_month(first, arxiv_id)
        return first, last, number
    update_date = data.get("update_date")
    if update_date:
        try:
            day = datetime.fromisoformat(update_date).replace(tzinfo=UTC)
        except (TypeError, ValueError):
            raise MalformedRecord(f"unreadable update_date {update_date!r}") from None
        return not_after_first_month(day, arxiv_id), day, 1
    raise MalformedRecord("no dates (neither versions[].created nor update_date)")


def _authors(data: dict) -> list[str]:
    parsed = data.get("authors_parsed")
    if isinstance(parsed, list) and parsed:
        names = []
        for parts in parsed:
            if isinstance(parts, list) and parts:
                # [last, first, suffix, affiliation...] -> "first last suffix"; affiliations
                # are not part of a name.
                last, first, suffix = [*parts[:3], "", ""][:3]
                names.append(
                    " ".join(
                        p.strip() for p in (first, last, suffix) if isinstance(p, str) and p.strip()
                    )
                )
        return [n for n in names if n]
    raw = data.get("authors")
    if isinstance(raw, str) and raw.strip():
        return [n.strip() for n in _AUTHOR_SPLIT.split(" ".join(raw.split())) if n.strip()]
    return []


def _text(data: dict, key: str) -> str:
    value = data.get(key)
    return value.strip() if isinstance(value, str) else ""


def parse_snapshot_record(data) -> PaperRecord:
    """One decoded snapshot line as a PaperRecord; MalformedRecord says what is wrong."""
    if not isinstance(data, dict):
        raise MalformedRecord(f"expected a JSON object, got {type(data).__name__}")
    raw_id = data.get("id")
    if not isinstance(raw_id, str) or not raw_id.strip():
        raise MalformedRecord("missing id")
    try:
        arxiv_id, _ = split_version(raw_id)
    except InvalidArxivId:
        raise MalformedRecord(f"id {raw_id!r} is not an arXiv identifier") from None
    title = " ".join(_text(data, "title").split())
    if not title:
        raise MalformedRecord("missing title")
    abstract = _text(data, "abstract")
    if not abstract:
        raise MalformedRecord("missing abstract")
    published, updated, version = _dates_and_version(data, arxiv_id)
    categories = _text(data, "categories").split()
    comments = _text(data, "comments")
    return PaperRecord(
        arxiv_id=arxiv_id,
        version=version,
        title=title,
        abstract=abstract,
        authors=_authors(data),
        primary_category=categories[0] if categories else "",
        categories=categories,
        published=published,
        updated=updated,
        doi=_text(data, "doi"),
        journal_ref=_text(data, "journal-ref"),
        comments=comments,
        license=_text(data, "license"),
        withdrawn=looks_withdrawn(comments, abstract),
    )


# --- Reading the file ---------------------------------------------------------------------------


@dataclass
class _OpenSnapshot:
    lines: IO[bytes]
    raw: IO[bytes]  # the file on disk: its position drives the progress bar for .gz too
    size: int

    def close(self) -> None:
        self.lines.close()
        self.raw.close()


def open_snapshot(path: Path) -> _OpenSnapshot:
    raw = path.open("rb")
    magic = raw.read(2)
    raw.seek(0)
    lines = gzip.GzipFile(fileobj=raw, mode="rb") if magic == b"\x1f\x8b" else raw
    return _OpenSnapshot(lines=lines, raw=raw, size=path.stat().st_size)


# --- Duplicate ids across the whole file, kept on the database side -----------------------------


class _SeenIds:
    """Ids already read in this run, with the line they were on, in a session temp table."""

    def __init__(self):
        with connection.cursor() as cursor:
            cursor.execute(
                "CREATE TEMP TABLE IF NOT EXISTS snapshot_seen_ids"
                " (arxiv_id text PRIMARY KEY, line integer NOT NULL)"
            )
            cursor.execute("TRUNCATE snapshot_seen_ids")

    def first_lines_of_repeats(self, lines_by_id: dict[str, int]) -> dict[str, int]:
        """Record these ids; return {id: first line} for those an earlier batch already had."""
        ids = list(lines_by_id)
        with connection.cursor() as cursor:
            cursor.execute(
                """
                INSERT INTO snapshot_seen_ids (arxiv_id, line)
                SELECT * FROM unnest(%s::text[], %s::int[])
                ON CONFLICT (arxiv_id) DO NOTHING
                RETURNING arxiv_id
                """,
                [ids, [lines_by_id[i] for i in ids]],
            )
            fresh = {row[0] for row in cursor.fetchall()}
            repeats = [i for i in ids if i not in fresh]
            if not repeats:
                return {}
            cursor.execute(
                "SELECT arxiv_id, line FROM snapshot_seen_ids WHERE arxiv_id = ANY(%s::text[])",
                [repeats],
            )
            return dict(cursor.fetchall())

    def drop(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS snapshot_seen_ids")


# --- Reading and parsing in a background thread -------------------------------------------------


@dataclass
class _ParsedBatch:
    records: list[PaperRecord] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    filtered: int = 0
    last_line: int = 0
    bytes_read: int = 0


def _parse_batches(
    snapshot: _OpenSnapshot, *, limit: int | None, since: date | None, batch_size: int
) -> Iterator[_ParsedBatch]:
    accepted = 0
    batch = _ParsedBatch()
    for number, line in enumerate(snapshot.lines, start=1):
        batch.last_line = number
        if not line.strip():
            continue
        try:
            record = parse_snapshot_record(json.loads(line))
        except (ValueError, MalformedRecord) as exc:
            # json.JSONDecodeError and UnicodeDecodeError are ValueErrors too.
            message = str(exc) if isinstance(exc, MalformedRecord) else f"bad JSON ({exc})"
            batch.problems.append(Problem(number, message, _id_hint(line)))
            continue
        if since and record.updated.date() < since:
            batch.filtered += 1
            continue
        batch.records.append(record)
        batch.lines.append(number)
        accepted += 1
        if limit and accepted >= limit:
            break
        if len(batch.records) >= batch_size:
            batch.bytes_read = snapshot.raw.tell()
            yield batch
            batch = _ParsedBatch(last_line=number)
    batch.bytes_read = snapshot.raw.tell()
    yield batch


class _ReadError(Exception):
    """The file could not be read past some line (a truncated or corrupt .gz)."""

    def __init__(self, line: int, cause: Exception):
        super().__init__(f"could not read the file past line {line}: {cause}")


def _in_background(batches: Iterator[_ParsedBatch], depth: int = 2) -> Iterator[_ParsedBatch]:
    """Decompress and parse the next batches in a thread while this one is written: the database
    call releases the GIL, so reading costs almost nothing on top of writing."""
    queue: Queue = Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def hand_over(item) -> bool:
        while not stop.is_set():
            try:
                queue.put(item, timeout=0.1)
                return True
            except Full:
                continue
        return False

    def produce() -> None:
        last_line = 0
        try:
            for batch in batches:
                last_line = batch.last_line
                if not hand_over(batch):
                    return
            hand_over(done)
        except (OSError, EOFError) as exc:
            hand_over(_ReadError(last_line + 1, exc))
        except BaseException as exc:  # handed to the consumer, which re-raises it
            hand_over(exc)

    thread = threading.Thread(target=produce, name="snapshot-reader", daemon=True)
    thread.start()
    try:
        while (item := queue.get()) is not done:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join()


# --- The import ---------------------------------------------------------------------------------


def import_snapshot(
    path: str | Path,
    *,
    limit: int | None = None,
    since: date | None = None,
    batch_size: int = BATCH_SIZE,
    progress: Callable[[int, int, UpsertCounts], None] | None = None,
    on_problem: Callable[[Problem], None] | None = None,
) -> SnapshotResult:
    """Import a snapshot file. `limit` stops after that many valid papers; `since` keeps papers
    whose latest version is on or after that date. `progress(bytes_read, bytes_total, counts)`
    is called after each batch; `on_problem(problem)` for every skipped line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"snapshot file not found: {path}")
    recorder = RunRecorder(
        IngestRun.Source.SNAPSHOT,
        params={"path": str(path), "limit": limit, "since": since.isoformat() if since else None},
    )
    result = SnapshotResult(run=recorder.run, counts=recorder.counts)
    started = time.monotonic()
    write_seconds = 0.0

    def report(problem: Problem) -> None:
        result.problems += 1
        recorder.error(problem.error, line=problem.line, id=problem.arxiv_id)
        (on_problem or (lambda p: logger.warning("snapshot %s: %s", path.name, p)))(problem)

    def write(batch: _ParsedBatch) -> None:
        first_line: dict[str, int] = {}
        unique: list[PaperRecord] = []
        for record, line in zip(batch.records, batch.lines, strict=True):
            if record.arxiv_id in first_line:
                earlier = first_line[record.arxiv_id]
                report(
                    Problem(line, f"duplicate id, first seen on line {earlier}", record.arxiv_id)
                )
                continue
            first_line[record.arxiv_id] = line
            unique.append(record)
        repeats = seen.first_lines_of_repeats(first_line) if first_line else {}
        for arxiv_id, earlier in repeats.items():
            report(
                Problem(
                    first_line[arxiv_id], f"duplicate id, first seen on line {earlier}", arxiv_id
                )
            )
        recorder.add(upsert_batch([r for r in unique if r.arxiv_id not in repeats]))

    snapshot = open_snapshot(path)
    seen = _SeenIds()
    batches = _in_background(
        _parse_batches(snapshot, limit=limit, since=since, batch_size=batch_size)
    )
    try:
        for batch in batches:
            write_started = time.monotonic()
            for problem in batch.problems:
                report(problem)
            result.lines = batch.last_line
            result.filtered += batch.filtered
            write(batch)
            recorder.save_progress()
            write_seconds += time.monotonic() - write_started
            if progress:
                progress(batch.bytes_read, snapshot.size, recorder.counts)
    except _ReadError as exc:
        # Keep what was written, say where it stopped.
        recorder.error(str(exc))
        result.seconds = time.monotonic() - started
        result.run = recorder.finish(IngestRun.Status.FAILED, write=round(write_seconds, 3))
        return result
    except BaseException as exc:
        # Database down, Ctrl-C...: the run must not stay "running" forever; the caller reports.
        recorder.error(f"stopped after line {result.lines}: {type(exc).__name__}: {exc}")
        try:
            recorder.finish(IngestRun.Status.FAILED, write=round(write_seconds, 3))
        except DatabaseError:
            logger.warning("snapshot %s: could not mark run %s failed", path.name, recorder.run.pk)
        raise
    finally:
        batches.close()  # stops and joins the reader thread before its file goes away
        snapshot.close()
        seen.drop()
    result.seconds = time.monotonic() - started
    result.run = recorder.finish(
        # Time spent writing; the rest of "total" is reading that the writes did not hide.
        write=round(write_seconds, 3),
        papers_per_second=round(result.papers_per_second, 1),
        lines=result.lines,
        filtered=result.filtered,
    )
    return result


_ID_HINT = re.compile(rb'"id"\s*:\s*"([^"]{1,40})"')


def _id_hint(line: bytes) -> str | None:
    """The id of a line that failed to parse, when it can still be seen, for the report."""
    match = _ID_HINT.search(line)
    return match.group(1).decode("utf-8", "replace") if match else None

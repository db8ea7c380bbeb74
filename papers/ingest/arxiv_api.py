"""The nightly ingest from the arXiv API, and refreshing chosen papers by id.

A window ingest asks, per category, for the papers submitted in [window start, window end],
oldest first, a page at a time. After each page is written, the run's cursor (category, offset)
is saved, so a run that dies (arXiv down, process killed) is continued by the next run from the
same window and the same offset: nothing is fetched or counted twice. The window end is fixed
when the window is planned, so the result set a cursor points into does not move.

Only one arXiv ingest runs at a time across all processes (a PostgreSQL advisory lock); together
with the client's process-wide lock that keeps us at one request at a time.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import arxiv
from django.conf import settings
from django.db.models import Max
from django.utils import timezone

from papers.identifiers import InvalidArxivId, parse_arxiv_id, split_version
from papers.ingest.arxiv_client import ArxivQueryError, ArxivUnavailable, PoliteClient
from papers.ingest.runs import RunBusy, RunRecorder, exclusive
from papers.ingest.upsert import PaperRecord, UpsertCounts, looks_withdrawn, upsert_papers
from papers.models import IngestRun, Paper

logger = logging.getLogger("papers.ingest")

# arXiv announces papers a day or more after submission (longer over weekends), so a paper
# submitted just before last night's window end may only show up now. Re-reading that stretch
# costs a few requests; the upsert makes it free of writes.
WINDOW_OVERLAP = timedelta(days=3)
ID_LIST_CHUNK = 100
# With no successful API run, the window starts this long before the catalogue's newest paper.
CATALOGUE_OVERLAP = timedelta(days=1)
# A window longer than this is a backfill: it is announced with its request count.
BACKFILL_DAYS = 3


@dataclass
class ArxivIngestResult:
    status: str
    run_id: int | None = None
    counts: UpsertCounts = field(default_factory=UpsertCounts)
    window_start: datetime | None = None
    window_end: datetime | None = None
    resumed_from: int | None = None
    requests: int = 0
    message: str = ""

    @property
    def changed(self) -> bool:
        return self.counts.written > 0

    @property
    def completed(self) -> bool:
        return self.status in (IngestRun.Status.SUCCEEDED, IngestRun.Status.PARTIAL)

    def followed_by(self, later: "ArxivIngestResult") -> "ArxivIngestResult":
        """This run and the one after it, as one result (counts summed, the worse status)."""
        counts = UpsertCounts()
        counts.add(self.counts)
        counts.add(later.counts)
        worst = next(
            (
                s
                for s in (IngestRun.Status.FAILED, IngestRun.Status.PARTIAL)
                if s in (self.status, later.status)
            ),
            later.status,
        )
        return ArxivIngestResult(
            status=worst,
            run_id=later.run_id,
            counts=counts,
            window_start=self.window_start,
            window_end=later.window_end,
            resumed_from=self.resumed_from,
            requests=self.requests + later.requests,
            message="; ".join(m for m in (self.message, later.message) if m),
        )

    def summary(self) -> str:
        c = self.counts
        text = (
            f"{self.status}: {c.new} new, {c.updated} updated, {c.unchanged} unchanged,"
            f" {c.skipped} skipped in {self.requests} requests"
        )
        if self.resumed_from:
            text += f" (resumed run #{self.resumed_from})"
        return text + (f"; {self.message}" if self.message else "")


def _exclusive(own_run_started: bool = False):
    """One arXiv ingest at a time across all processes (RunBusy names the active one). A caller
    whose own run row already exists (a refresh) must not have it taken for a dead one."""
    return exclusive("arxiv", None if own_run_started else IngestRun.Source.ARXIV_API)


# --- From the API's results to our records ------------------------------------------------------


def record_from_result(result: arxiv.Result) -> PaperRecord:
    """An `arxiv.Result` as a PaperRecord; InvalidArxivId for an entry id we cannot read."""
    arxiv_id, version = split_version(result.get_short_id())
    abstract = (result.summary or "").strip()
    comments = (result.comment or "").strip()
    return PaperRecord(
        arxiv_id=arxiv_id,
        version=version or 1,
        title=" ".join((result.title or "").split()),
        abstract=abstract,
        authors=[a.name for a in result.authors if a.name],
        primary_category=result.primary_category or "",
        categories=list(result.categories),
        published=result.published,
        updated=result.updated,
        doi=result.doi or "",
        journal_ref=result.journal_ref or "",
        comments=comments,
        withdrawn=looks_withdrawn(comments, abstract),
    )


def _records(results: list[arxiv.Result], recorder: RunRecorder) -> list[PaperRecord]:
    records = []
    for result in results:
        try:
            records.append(record_from_result(result))
        except InvalidArxivId:
            recorder.counts.skipped += 1
            recorder.error("unreadable entry id", id=result.entry_id)
    return records


# --- Planning the window ------------------------------------------------------------------------


@dataclass
class _Plan:
    categories: list[str]
    window_start: datetime
    window_end: datetime
    cursor: dict
    resumed_from: IngestRun | None = None


def _resumable_run(categories: list[str]) -> IngestRun | None:
    """The latest window run, if it failed (or was killed while running) part-way through."""
    latest = (
        IngestRun.objects.filter(source=IngestRun.Source.ARXIV_API, params__kind="window")
        .order_by("-started_at")
        .first()
    )
    if latest is None or latest.status not in (IngestRun.Status.FAILED, IngestRun.Status.RUNNING):
        return None
    if latest.status == IngestRun.Status.RUNNING:
        # We hold the ingest lock, so a "running" run is one whose process died.
        latest.status = IngestRun.Status.FAILED
        latest.finished_at = latest.finished_at or timezone.now()
        latest.errors = [*latest.errors, {"error": "interrupted (the process stopped mid-run)"}]
        latest.save(update_fields=["status", "finished_at", "errors"])
    if sorted(latest.params.get("categories", [])) != sorted(categories):
        return None
    if not (latest.cursor.get("category") or latest.cursor.get("done")):
        return None  # nothing was stored: a fresh window from the last success covers it
    return latest if latest.window_start and latest.window_end else None


def default_window_start(end: datetime) -> datetime:
    """Where a window with no --since starts: the end of the last successful window (minus the
    announcement overlap); with none, the newest paper the catalogue holds (a snapshot import)
    minus a day, so the months between a snapshot and today are fetched, not skipped; only an
    empty catalogue starts ARXIV_INITIAL_DAYS back."""
    last_end = IngestRun.objects.filter(
        source=IngestRun.Source.ARXIV_API,
        status__in=[IngestRun.Status.SUCCEEDED, IngestRun.Status.PARTIAL],
        params__kind="window",
    ).aggregate(end=Max("window_end"))["end"]
    if last_end:
        return last_end - WINDOW_OVERLAP
    newest = Paper.objects.aggregate(newest=Max("published"))["newest"]
    if newest is not None and newest < end:
        return newest - CATALOGUE_OVERLAP
    return end - timedelta(days=settings.ARXIV_INITIAL_DAYS)


def plan_window(since: datetime | None, until: datetime | None, categories: list[str]) -> _Plan:
    failed = _resumable_run(categories)
    same_window = failed is not None and (
        (since is None or since == failed.window_start)
        and (until is None or until == failed.window_end)
    )
    if failed is not None and same_window:
        return _Plan(
            categories, failed.window_start, failed.window_end, dict(failed.cursor), failed
        )
    end = until or timezone.now()
    if since is None:
        since = default_window_start(end)
    if since >= end:
        raise ValueError(
            f"empty window: since {since:%Y-%m-%d %H:%M} is not before until {end:%Y-%m-%d %H:%M}"
        )
    return _Plan(categories, since, end, {})


def _category_query(category: str, start: datetime, end: datetime) -> str:
    stamp = "%Y%m%d%H%M"  # arXiv reads these as GMT
    return (
        f"cat:{category} AND submittedDate:"
        f"[{start.astimezone(UTC).strftime(stamp)} TO {end.astimezone(UTC).strftime(stamp)}]"
    )


# --- The window ingest --------------------------------------------------------------------------


def ingest_arxiv(
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    categories: list[str] | None = None,
    client: PoliteClient | None = None,
    report: Callable[[str], None] | None = None,
) -> ArxivIngestResult:
    """Fetch what was submitted in the window (by default: since the last successful run, else
    since the catalogue's newest paper, else the last ARXIV_INITIAL_DAYS), per category, and
    upsert it. Continues a failed run. `report` receives the lines a person should see (a
    backfill's request count); by default they are logged."""
    categories = list(categories or settings.ARXIV_CATEGORIES)
    client = client or PoliteClient()
    report = report or logger.info
    try:
        with _exclusive():
            plan = plan_window(since, until, categories)
            result = _run_window(plan, client, report)
            if plan.resumed_from and since is None and until is None and result.completed:
                # The interrupted window is done; go on up to now in the same job rather than
                # leave today's papers for tomorrow.
                later = _run_window(plan_window(None, None, categories), client, report)
                result = result.followed_by(later)
            return result
    except RunBusy as exc:
        logger.info("arXiv ingest skipped: %s", exc)
        return ArxivIngestResult(status="busy", message=str(exc))


class _RequestPlan:
    """How many requests a window takes: a category's count is known from its first page (the
    feed's total); categories not reached yet are estimated from those that were."""

    def __init__(self, plan: _Plan, client: PoliteClient, recorder: RunRecorder, report):
        self.client, self.recorder, self.report = client, recorder, report
        self.pending = [c for c in plan.categories if c not in plan.cursor.get("done", [])]
        self.known: dict[str, int] = {}
        self.start = client.requests_made
        days = (plan.window_end - plan.window_start).total_seconds() / 86400
        self.backfill = days > BACKFILL_DAYS
        if self.backfill:
            report(
                f"backfill of {days:.0f} days ({plan.window_start:%Y-%m-%d} .. "
                f"{plan.window_end:%Y-%m-%d}) in {len(self.pending)} categories, one request "
                f"every {client.delay_seconds:g} s; resumable: an interrupted run is continued "
                "by the next one"
            )

    def category_total(self, category: str, total: int, offset: int) -> None:
        pages = max(1, -(-(total - offset) // self.client.page_size))
        self.known[category] = pages
        planned = self.planned()
        self.save()
        if self.backfill:
            minutes = planned * self.client.delay_seconds / 60
            self.report(
                f"{category}: {total:,} papers in the window, {pages} requests; about "
                f"{planned:,} requests in all (~{minutes:.0f} min)"
            )

    def planned(self) -> int:
        unknown = len([c for c in self.pending if c not in self.known])
        average = sum(self.known.values()) / len(self.known) if self.known else 1
        return sum(self.known.values()) + round(unknown * average)

    def save(self) -> None:
        self.recorder.run.progress = {
            "requests": self.client.requests_made - self.start,
            "planned_requests": max(self.planned(), self.client.requests_made - self.start),
        }


def _run_window(plan: _Plan, client: PoliteClient, report=logger.info) -> ArxivIngestResult:
    recorder = RunRecorder(
        IngestRun.Source.ARXIV_API,
        params={
            "kind": "window",
            "categories": plan.categories,
            "resumed_from": plan.resumed_from.pk if plan.resumed_from else None,
            "url": client.base_url,
        },
        window_start=plan.window_start,
        window_end=plan.window_end,
        cursor=plan.cursor,
    )
    result = ArxivIngestResult(
        status=IngestRun.Status.RUNNING,
        run_id=recorder.run.pk,
        counts=recorder.counts,
        window_start=plan.window_start,
        window_end=plan.window_end,
        resumed_from=plan.resumed_from.pk if plan.resumed_from else None,
    )
    done = list(plan.cursor.get("done", []))
    requests_before = client.requests_made
    requests = _RequestPlan(plan, client, recorder, report)
    try:
        for category in plan.categories:
            if category in done:
                continue
            offset = plan.cursor.get("offset", 0) if plan.cursor.get("category") == category else 0
            _ingest_category(client, recorder, category, plan, offset, done, requests)
            done.append(category)
            recorder.save_progress(cursor={"done": done, "category": None, "offset": 0})
    except ArxivUnavailable as exc:
        # One line, no traceback: being offline is a state, not a bug.
        message = (
            f"arXiv unreachable at {client.base_url}: {exc.reason}; serving what the catalogue has"
        )
        logger.warning(message)
        recorder.error(message, url=exc.url)
        result.message = message
        result.status = recorder.finish(IngestRun.Status.FAILED).status
    except arxiv.HTTPError as exc:
        message = f"arXiv refused a request with HTTP {exc.status}; stopping this run"
        logger.warning("%s (%s)", message, exc.url)
        recorder.error(message, url=exc.url)
        result.message = message
        result.status = recorder.finish(IngestRun.Status.FAILED).status
    except BaseException as exc:
        recorder.error(f"{type(exc).__name__}: {exc}")
        recorder.finish(IngestRun.Status.FAILED)
        raise
    else:
        recorder.run.cursor = {}
        result.status = recorder.finish().status
    finally:
        result.requests = client.requests_made - requests_before
    logger.info("arXiv ingest run #%s %s", result.run_id, result.summary())
    return result


def _ingest_category(client, recorder, category, plan, offset, done, requests) -> None:
    search = arxiv.Search(
        query=_category_query(category, plan.window_start, plan.window_end),
        max_results=None,
        sort_by=arxiv.SortCriterion.SubmittedDate,
        sort_order=arxiv.SortOrder.Ascending,
    )
    first_page = True
    while True:
        try:
            feed = client.fetch_page(search, offset, first_page=first_page)
        except ArxivQueryError as exc:
            # This category's query is rejected; the other categories can still be fetched.
            recorder.error(exc.message, category=category)
            logger.warning("arXiv rejected the query for %s: %s", category, exc.message)
            return
        if first_page:
            requests.category_total(category, feed.header.total_results, offset)
        first_page = False
        if not feed.results:
            return
        recorder.add(upsert_papers(_records(feed.results, recorder)))
        offset += len(feed.results)
        requests.save()
        # Saved after the page is written: a resume starts at the first page not yet stored.
        recorder.save_progress(cursor={"done": done, "category": category, "offset": offset})
        if offset >= feed.header.total_results:
            return


# --- Refreshing chosen papers -------------------------------------------------------------------


def refresh_papers(arxiv_ids: list[str], client: PoliteClient | None = None) -> ArxivIngestResult:
    """Fetch these papers by id (id_list query) and apply newer versions."""
    client = client or PoliteClient()
    wanted: list[str] = []
    invalid: list[str] = []
    for raw in arxiv_ids:
        try:
            arxiv_id, version = parse_arxiv_id(raw)
        except InvalidArxivId:
            invalid.append(raw)
            continue
        wanted.append(f"{arxiv_id}v{version}" if version else arxiv_id)
    recorder = RunRecorder(
        IngestRun.Source.ARXIV_API,
        params={"kind": "refresh", "ids": wanted, "url": client.base_url},
    )
    for raw in invalid:
        recorder.error("not an arXiv identifier", id=raw)
    result = ArxivIngestResult(
        status=IngestRun.Status.RUNNING, run_id=recorder.run.pk, counts=recorder.counts
    )
    requests_before = client.requests_made
    try:
        with _exclusive(own_run_started=True):
            for start in range(0, len(wanted), ID_LIST_CHUNK):
                chunk = wanted[start : start + ID_LIST_CHUNK]
                search = arxiv.Search(id_list=chunk, max_results=len(chunk))
                try:
                    feed = client.fetch_page(search, 0)
                except ArxivQueryError as exc:
                    recorder.error(exc.message, ids=chunk)
                    continue
                recorder.add(upsert_papers(_records(feed.results, recorder)))
                found = {r.get_short_id() for r in feed.results} | {
                    split_version(r.get_short_id())[0] for r in feed.results
                }
                for arxiv_id in chunk:
                    if arxiv_id not in found:
                        recorder.error("not found on arXiv", id=arxiv_id)
    except (RunBusy, ArxivUnavailable, arxiv.HTTPError) as exc:
        message = (
            f"arXiv unreachable at {client.base_url}: {exc.reason}; serving what the catalogue has"
            if isinstance(exc, ArxivUnavailable)
            else str(exc)
        )
        logger.warning(message)
        recorder.error(message)
        result.message = message
        result.status = recorder.finish(IngestRun.Status.FAILED).status
    else:
        result.status = recorder.finish().status
    finally:
        result.requests = client.requests_made - requests_before
    return result

"""The real `arxiv` client over real HTTP against a local server replaying recorded responses."""

import logging
import socket
from datetime import UTC, datetime, timedelta

import arxiv
import pytest

from papers.ingest.arxiv_api import WINDOW_OVERLAP, ingest_arxiv, refresh_papers
from papers.ingest.arxiv_client import ArxivQueryError, PoliteClient
from papers.models import IngestRun, Paper
from tests.fakes.arxiv_replay import ReplayArxiv

pytestmark = pytest.mark.django_db

SINCE = datetime(2024, 1, 1, tzinfo=UTC)
UNTIL = datetime(2024, 1, 8, tzinfo=UTC)


def _window_pages(replay) -> list[int]:
    return [start for query, start in replay.pages() if query.startswith("cat:")]


def test_window_ingest_pages_through_every_result(arxiv_api):
    result = ingest_arxiv(since=SINCE, until=UNTIL)
    assert result.status == "succeeded"
    assert (result.counts.new, result.requests) == (60, 6)
    assert _window_pages(arxiv_api) == [0, 10, 20, 30, 40, 50]
    assert Paper.objects.count() == 60
    query = arxiv_api.requests[0].params
    assert query["search_query"] == "cat:cs.AI AND submittedDate:[202401010000 TO 202401080000]"
    assert (query["sortBy"], query["sortOrder"], query["max_results"]) == (
        "submittedDate",
        "ascending",
        "10",
    )
    assert arxiv_api.concurrent_peak == 1
    run = IngestRun.objects.get()
    assert (run.status, run.new, run.window_start, run.window_end, run.cursor) == (
        "succeeded",
        60,
        SINCE,
        UNTIL,
        {},
    )


def test_old_style_ids_and_version_suffixes_are_stored_without_version(arxiv_api):
    ingest_arxiv(since=SINCE, until=UNTIL)
    old_style = Paper.objects.get(arxiv_id="cs/0503050")
    assert old_style.version == 1
    ninth = Paper.objects.get(arxiv_id="2409.05654")
    assert ninth.version == 9 and ninth.published < ninth.updated
    assert not Paper.objects.filter(arxiv_id__contains="v").exclude(arxiv_id__contains="/").exists()


def test_running_the_same_window_twice_changes_nothing(arxiv_api):
    ingest_arxiv(since=SINCE, until=UNTIL)
    stamps = list(Paper.objects.order_by("pk").values_list("modified_at", flat=True))
    again = ingest_arxiv(since=SINCE, until=UNTIL)
    assert (again.counts.new, again.counts.updated, again.counts.unchanged) == (0, 0, 60)
    assert list(Paper.objects.order_by("pk").values_list("modified_at", flat=True)) == stamps


def test_a_newer_version_from_arxiv_updates_an_older_paper(arxiv_api, add_paper):
    add_paper("2409.05654", version=3, title="Old title")
    result = ingest_arxiv(since=SINCE, until=UNTIL)
    assert (result.counts.new, result.counts.updated) == (59, 1)
    assert Paper.objects.get(arxiv_id="2409.05654").version == 9


def test_empty_result_and_error_feed(arxiv_api):
    result = ingest_arxiv(
        since=SINCE, until=UNTIL, categories=["cs.ZZ", "cs.CL"], client=PoliteClient(page_size=100)
    )
    assert result.status == "partial"
    assert result.counts.written == 0 and result.requests == 2
    run = IngestRun.objects.get()
    assert run.errors == [{"category": "cs.ZZ", "error": "incorrect id format for abc"}]
    assert run.cursor == {}, "both categories were finished"


def test_the_client_raises_on_the_error_feed(arxiv_api):
    with pytest.raises(ArxivQueryError, match="incorrect id format for abc"):
        PoliteClient(page_size=100).fetch_page(arxiv.Search(id_list=["abc"]), 0)


def test_429_then_success_waits_as_told(arxiv_api):
    arxiv_api.fail_next(2, status=429, retry_after="0.3")
    result = ingest_arxiv(since=SINCE, until=UNTIL)
    assert result.status == "succeeded" and result.counts.new == 60
    statuses = [r.status for r in arxiv_api.requests]
    assert statuses[:3] == [429, 429, 200]
    gaps = [b.at - a.at for a, b in zip(arxiv_api.requests, arxiv_api.requests[1:3], strict=False)]
    assert min(gaps) >= 0.3


def test_requests_are_spaced_by_the_configured_delay(arxiv_api, settings):
    settings.ARXIV_DELAY_SECONDS = 0.15
    ingest_arxiv(since=SINCE, until=UNTIL)
    times = [r.at for r in arxiv_api.requests]
    assert len(times) == 6
    assert min(b - a for a, b in zip(times, times[1:], strict=False)) >= 0.14


def test_unreachable_arxiv_logs_one_line_and_fails_the_run(db, settings, caplog):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings.ARXIV_API_URL = f"http://127.0.0.1:{port}/api/query"
    settings.ARXIV_DELAY_SECONDS = 0
    settings.ARXIV_MAX_RETRIES = 1
    with caplog.at_level(logging.DEBUG, logger="papers.ingest"):
        result = ingest_arxiv(since=SINCE, until=UNTIL, categories=["cs.AI"])
    assert result.status == "failed"
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and warnings[0].exc_info is None
    assert warnings[0].getMessage() == (
        f"arXiv unreachable at {settings.ARXIV_API_URL}: [Errno 111] Connection refused;"
        " serving what the catalogue has"
    )
    assert IngestRun.objects.get().status == "failed"


def test_a_server_dying_mid_run_is_resumed_without_duplicates(arxiv_api, shared_data, settings):
    arxiv_api.die_after(3)  # pages 0, 10, 20 answered, then the server is gone
    failed = ingest_arxiv(since=SINCE, until=UNTIL)
    assert failed.status == "failed" and failed.counts.new == 30
    run = IngestRun.objects.get()
    assert run.cursor == {"done": [], "category": "cs.AI", "offset": 30}

    with ReplayArxiv(
        data_dir=shared_data / "arxiv-api", categories={"cs.AI": "q_testing"}, total_results=60
    ) as back:
        settings.ARXIV_API_URL = back.url
        resumed = ingest_arxiv(since=SINCE, until=UNTIL)  # the same window: continue it
    assert resumed.status == "succeeded"
    assert resumed.resumed_from == run.pk
    assert (resumed.window_start, resumed.window_end) == (SINCE, UNTIL)
    assert _window_pages(back) == [30, 40, 50], "pages already stored are not fetched again"
    assert (resumed.counts.new, resumed.counts.unchanged) == (30, 0)
    assert Paper.objects.count() == 60


def test_resume_skips_categories_already_finished(arxiv_api, shared_data, settings):
    settings.ARXIV_CATEGORIES = ["cs.AI", "cs.LG"]
    arxiv_api.die_after(8)  # cs.AI's 6 pages, then 2 of cs.LG's
    failed = ingest_arxiv(since=SINCE, until=UNTIL)
    assert IngestRun.objects.get(pk=failed.run_id).cursor == {
        "done": ["cs.AI"],
        "category": "cs.LG",
        "offset": 20,
    }
    with ReplayArxiv(
        data_dir=shared_data / "arxiv-api",
        categories={"cs.AI": "q_testing", "cs.LG": "q_testing"},
        total_results=60,
    ) as back:
        settings.ARXIV_API_URL = back.url
        resumed = ingest_arxiv(since=SINCE, until=UNTIL)
    assert back.pages()[0][0].startswith("cat:cs.LG")
    assert _window_pages(back) == [20, 30, 40, 50]
    assert resumed.status == "succeeded"


def test_a_run_killed_while_running_is_resumed_then_the_window_goes_on_to_now(arxiv_api):
    killed = IngestRun.objects.create(
        source="arxiv_api",
        status="running",
        params={"kind": "window", "categories": ["cs.AI"]},
        window_start=SINCE,
        window_end=UNTIL,
        cursor={"done": [], "category": "cs.AI", "offset": 50},
    )
    result = ingest_arxiv()
    # The killed window's last page, then a fresh window from its end (minus the overlap) to now.
    assert _window_pages(arxiv_api) == [50, 0, 10, 20, 30, 40, 50]
    assert (result.status, result.resumed_from, result.counts.new) == ("succeeded", killed.pk, 60)
    killed.refresh_from_db()
    assert killed.status == "failed" and "interrupted" in killed.errors[-1]["error"]
    resumed, fresh = IngestRun.objects.exclude(pk=killed.pk).order_by("started_at")
    assert (resumed.window_start, resumed.window_end, resumed.new) == (SINCE, UNTIL, 10)
    assert fresh.window_start == UNTIL - WINDOW_OVERLAP and fresh.new == 50


def test_a_failed_run_that_stored_nothing_is_not_resumed(arxiv_api):
    IngestRun.objects.create(
        source="arxiv_api",
        status="succeeded",
        params={"kind": "window", "categories": ["cs.AI"]},
        window_start=SINCE - timedelta(days=7),
        window_end=SINCE,
    )
    IngestRun.objects.create(
        source="arxiv_api",
        status="failed",
        params={"kind": "window", "categories": ["cs.AI"]},
        window_start=SINCE,
        window_end=UNTIL,
        cursor={},
    )
    result = ingest_arxiv()
    assert result.resumed_from is None and result.window_start == SINCE - WINDOW_OVERLAP


def test_next_window_starts_where_the_last_successful_one_ended(arxiv_api):
    ingest_arxiv(since=SINCE, until=UNTIL)
    follow_up = ingest_arxiv()
    assert follow_up.window_start == UNTIL - WINDOW_OVERLAP
    assert follow_up.window_end > UNTIL


def test_the_first_window_covers_the_initial_days(arxiv_api, settings):
    settings.ARXIV_INITIAL_DAYS = 2
    result = ingest_arxiv()
    assert result.window_end - result.window_start == timedelta(days=2)


def test_refresh_by_id_handles_old_style_versions_and_unknown_ids(arxiv_api):
    arxiv_api_client = PoliteClient(page_size=100)
    result = refresh_papers(["astro-ph/0601001"], client=arxiv_api_client)
    assert result.status == "succeeded" and result.counts.new == 1
    assert Paper.objects.get(arxiv_id="astro-ph/0601001").version == 1

    for versioned in ("quant-ph/0201082v1", "2104.12255v1"):
        assert refresh_papers([versioned], client=arxiv_api_client).counts.new == 1
    assert {"quant-ph/0201082", "2104.12255"} <= set(
        Paper.objects.values_list("arxiv_id", flat=True)
    )
    assert [q for q, _ in arxiv_api.pages()][1:3] == ["quant-ph/0201082v1", "2104.12255v1"]

    missing = refresh_papers(["0000.0000", "abc"], client=arxiv_api_client)
    assert missing.status == "partial"
    errors = IngestRun.objects.get(pk=missing.run_id).errors
    assert {"id": "abc", "error": "not an arXiv identifier"} in errors
    # No month 00: refused before asking arXiv (whose recorded answer for it is empty).
    assert {"id": "0000.0000", "error": "not an arXiv identifier"} in errors


def test_refresh_applies_a_newer_version(arxiv_api, add_paper):
    add_paper(
        "1605.08386",
        version=1,
        title="Stale",
        updated=datetime(2016, 5, 1, tzinfo=UTC),
        **{"published": datetime(2016, 5, 1, tzinfo=UTC)},
    )
    # The recorded answer is v1 too: equal versions change nothing.
    result = refresh_papers(["1605.08386"], client=PoliteClient(page_size=100))
    assert (result.counts.unchanged, result.counts.updated) == (1, 0)
    assert Paper.objects.get(arxiv_id="1605.08386").title == "Stale"
    Paper.objects.filter(arxiv_id="1605.08386").update(version=0)
    refresh_papers(["1605.08386"], client=PoliteClient(page_size=100))
    assert Paper.objects.get(arxiv_id="1605.08386").title != "Stale"


def test_busy_when_another_ingest_holds_the_lock(arxiv_api):
    from django.db import connections

    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [0x61727869])
        result = ingest_arxiv(since=SINCE, until=UNTIL)
    finally:
        other.close()
    assert result.status == "busy" and not arxiv_api.requests


def test_ingest_arxiv_command(arxiv_api):
    from io import StringIO

    from django.core.management import CommandError, call_command

    out = StringIO()
    call_command(
        "ingest_arxiv",
        "--since",
        "2024-01-01",
        "--until",
        "2024-01-08",
        "--category",
        "cs.AI",
        stdout=out,
    )
    assert "window 2024-01-01 00:00 .. 2024-01-08 00:00 UTC" in out.getvalue()
    assert "succeeded: 60 new, 0 updated, 0 unchanged, 0 skipped in 6 requests" in out.getvalue()
    with pytest.raises(CommandError, match="empty window"):
        call_command("ingest_arxiv", "--since", "2024-02-01", "--until", "2024-01-01")
    with pytest.raises(CommandError, match="expected a date"):
        call_command("ingest_arxiv", "--since", "last tuesday")


def _submitted_ranges(replay) -> list[str]:
    return [
        query.split("submittedDate:")[1] for query, _ in replay.pages() if "submittedDate" in query
    ]


def test_after_a_snapshot_the_first_ingest_starts_at_the_catalogues_newest_paper(
    arxiv_api, add_paper, settings
):
    """No successful API run yet: the window starts a day before the newest paper imported, so
    the months between a snapshot and today are fetched (not just ARXIV_INITIAL_DAYS)."""
    settings.ARXIV_INITIAL_DAYS = 7
    add_paper("2605.00001", published=datetime(2026, 5, 31, 9, 30, tzinfo=UTC))
    add_paper("2401.00001", published=datetime(2024, 1, 2, tzinfo=UTC))
    result = ingest_arxiv(until=datetime(2026, 11, 23, tzinfo=UTC))
    assert result.status == "succeeded"
    assert result.window_start == datetime(2026, 5, 30, 9, 30, tzinfo=UTC)
    assert set(_submitted_ranges(arxiv_api)) == {"[202605300930 TO 202611230000]"}


def test_a_failed_first_run_does_not_fall_back_to_the_initial_days(arxiv_api, add_paper):
    add_paper("2605.00001", published=datetime(2026, 5, 31, tzinfo=UTC))
    arxiv_api.fail_next(times=20, status=400)  # refused: nothing stored, no cursor to resume
    assert ingest_arxiv(until=datetime(2026, 11, 23, tzinfo=UTC)).status == "failed"
    retry = ingest_arxiv(until=datetime(2026, 11, 23, tzinfo=UTC))
    assert retry.window_start == datetime(2026, 5, 30, tzinfo=UTC)


def test_a_backfill_says_how_many_requests_it_takes(arxiv_api, add_paper, settings):
    from io import StringIO

    from django.core.management import call_command

    settings.ARXIV_CATEGORIES = ["cs.AI", "cs.LG"]
    add_paper("2605.00001", published=datetime(2026, 5, 31, tzinfo=UTC))
    out = StringIO()
    call_command("ingest_arxiv", "--until", "2026-11-23", stdout=out)
    text = out.getvalue()
    assert "backfill of 177 days (2026-05-30 .. 2026-11-23) in 2 categories" in text
    assert "cs.AI: 60 papers in the window, 6 requests; about 12 requests in all" in text
    assert "cs.LG: 60 papers in the window, 6 requests; about 12 requests in all" in text
    run = IngestRun.objects.filter(params__kind="window").get()
    assert run.progress == {"requests": 12, "planned_requests": 12}

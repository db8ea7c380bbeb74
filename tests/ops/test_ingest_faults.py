"""Fault drills for the ingest: an arXiv that answers 503 with Retry-After and then truncated
feeds, and ingest processes killed with SIGKILL in the middle of their work.

The arXiv side is tests.fakes.arxiv_replay (recorded responses over real HTTP) with one more fault it
does not script itself: a feed cut off half-way. The ingest engineer's tests cover a 429, a server
that dies, and a run marked "running" by hand; these drills add the truncated feed and real
processes killed for real.
"""

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime

import pytest
from django.db.models import Count

from papers.ingest.arxiv_api import ingest_arxiv
from papers.models import IngestRun, Paper
from tests import live_server
from tests.fakes.arxiv_replay import ReplayArxiv, Request

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(90)]

SINCE = datetime(2024, 1, 1, tzinfo=UTC)
UNTIL = datetime(2024, 1, 8, tzinfo=UTC)
RECORDED_PAPERS = 60  # the replayed "testing" search: 6 pages of 10


class FlakyArxiv(ReplayArxiv):
    """ReplayArxiv that can also cut the next good responses short.

    "body": a complete HTTP response whose Atom feed stops half-way (a proxy or arXiv giving up
    mid-page); "connection": the headers promise the whole feed, half is sent, the connection
    closes."""

    def truncate_next(self, times: int = 1, how: str = "body") -> None:
        self._truncations = getattr(self, "_truncations", []) + [how] * times

    def _send(self, handler, status, body, params, headers=None):
        truncations = getattr(self, "_truncations", [])
        if status != 200 or not truncations:
            return super()._send(handler, status, body, params, headers)
        how = truncations.pop(0)
        half = body[: len(body) // 2]
        self.requests.append(Request(time.monotonic(), handler.path, params, 200))
        handler.send_response(200)
        handler.send_header("Content-Type", "application/atom+xml")
        handler.send_header("Content-Length", str(len(body if how == "connection" else half)))
        handler.end_headers()
        handler.wfile.write(half)
        handler.wfile.flush()
        handler.close_connection = True


@pytest.fixture
def flaky_arxiv(shared_data, settings):
    replay = FlakyArxiv(
        data_dir=shared_data / "arxiv-api", categories={"cs.AI": "q_testing"},
        total_results=RECORDED_PAPERS,
    ).start()
    settings.ARXIV_API_URL = replay.url
    settings.ARXIV_DELAY_SECONDS = 0
    settings.ARXIV_PAGE_SIZE = 10
    settings.ARXIV_MAX_RETRIES = 3
    settings.ARXIV_CATEGORIES = ["cs.AI"]
    yield replay
    replay.stop()


def recorded_abstracts(replay: ReplayArxiv) -> dict[str, str]:
    """arXiv id -> abstract, straight from the recorded feeds (what must end up stored)."""
    from arxiv import _feed

    from papers.ingest.arxiv_api import record_from_result

    abstracts = {}
    for path in sorted(replay.data_dir.glob("q_testing_s*_m10_*.xml")):
        for result in _feed.parse(path.read_bytes()).results:
            record = record_from_result(result)
            abstracts[record.arxiv_id] = record.abstract
    return abstracts


def assert_catalogue_is_exactly_the_recording(replay) -> None:
    expected = recorded_abstracts(replay)
    stored = dict(Paper.objects.values_list("arxiv_id", "abstract"))
    assert len(stored) == len(expected) == RECORDED_PAPERS
    assert stored == expected, "every paper, each with its whole abstract"
    duplicates = Paper.objects.values("arxiv_id").annotate(n=Count("id")).filter(n__gt=1)
    assert not duplicates.exists()


@pytest.mark.parametrize("how", ["body", "connection"])
def test_503_with_retry_after_then_a_truncated_feed_loses_nothing(flaky_arxiv, how):
    flaky_arxiv.fail_next(1, status=503, retry_after="1")
    flaky_arxiv.truncate_next(1, how=how)
    result = ingest_arxiv(since=SINCE, until=UNTIL)

    assert result.status == "succeeded", result.summary()
    statuses = [r.status for r in flaky_arxiv.requests]
    assert statuses[0] == 503
    waited = flaky_arxiv.requests[1].at - flaky_arxiv.requests[0].at
    assert waited >= 1.0, "Retry-After was honoured"
    assert result.counts.new == RECORDED_PAPERS
    assert_catalogue_is_exactly_the_recording(flaky_arxiv)


# --- Processes killed mid-ingest ----------------------------------------------------------------
def manage(*args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", *args], cwd=live_server.ROOT,
        env={**os.environ, "DATABASE_URL": live_server.test_database_url(),
             "FLATUNIVERSE_TESTING": "1", **env},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )


def kill_when(process: subprocess.Popen, condition, timeout: float = 60) -> None:
    """SIGKILL `process` as soon as `condition()` holds (it must still be running then)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, f"finished before the kill:\n{process.stdout.read()}"
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)


@pytest.mark.slow
def test_ingest_process_killed_mid_window_is_resumed_without_duplicates(flaky_arxiv, settings):
    env = {
        "ARXIV_API_URL": flaky_arxiv.url, "ARXIV_DELAY_SECONDS": "0.3",
        "ARXIV_PAGE_SIZE": "10", "ARXIV_CATEGORIES": "cs.AI",
    }
    window = ["--since", SINCE.isoformat(), "--until", UNTIL.isoformat()]
    first = manage("ingest_arxiv", *window, env=env)
    kill_when(first, lambda: Paper.objects.count() >= 20)

    killed = IngestRun.objects.get()
    assert killed.status == "running", "nobody got to close it: the process died"
    stored_before = Paper.objects.count()
    assert 20 <= stored_before < RECORDED_PAPERS

    second = manage("ingest_arxiv", *window, env=env)
    output, _ = second.communicate(timeout=60)
    assert second.returncode == 0, output
    killed.refresh_from_db()
    assert killed.status == "failed" and "interrupted" in killed.errors[-1]["error"]
    resumed = IngestRun.objects.exclude(pk=killed.pk).get()
    assert resumed.params["resumed_from"] == killed.pk
    assert resumed.new == RECORDED_PAPERS - stored_before, "only what was missing was fetched"
    assert_catalogue_is_exactly_the_recording(flaky_arxiv)


@pytest.mark.slow
def test_snapshot_import_killed_mid_file_then_run_again_has_no_duplicates(shared_data):
    snapshot = shared_data / "arxiv-snapshot" / "arxiv-sample.jsonl.gz"
    args = ["import_arxiv_snapshot", str(snapshot), "--limit", "1500", "--batch-size", "100",
            "--no-index", "--no-progress"]
    first = manage(*args, env={})
    kill_when(first, lambda: Paper.objects.count() >= 300)
    stored_before = Paper.objects.count()

    second = manage(*args, env={})
    output, _ = second.communicate(timeout=90)
    assert second.returncode == 0, output
    assert Paper.objects.count() == 1500
    duplicates = Paper.objects.values("arxiv_id").annotate(n=Count("id")).filter(n__gt=1)
    assert not duplicates.exists()
    rerun = IngestRun.objects.filter(source="snapshot").order_by("started_at").last()
    assert (rerun.status, rerun.new, rerun.unchanged) == (
        "succeeded", 1500 - stored_before, stored_before
    ), output

"""One indexing run at a time: a second run (job or `embed_papers`) returns at once naming the
active one, and papers arriving meanwhile are embedded once, by the active run."""

import threading
import time
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, connections

from papers.indexing.run import run_indexing
from papers.ingest.runs import LOCK_KEYS, lock_held
from papers.ingest.upsert import upsert_papers
from papers.jobs import index_new_papers_job
from papers.models import IngestRun, Paper, Passage
from tests.papers.conftest import make_record


@pytest.fixture
def hashing(settings):
    settings.EMBEDDING_BACKEND = "hashing"


def _add_papers(count: int, start: int = 0) -> None:
    upsert_papers(make_record(f"2401.{start + n:05d}") for n in range(count))


@pytest.fixture
def other_process_indexing(db):
    """Another process holding the indexing lock, with its run row, like a cluster worker."""
    other = connections.create_connection("default")
    other.ensure_connection()
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [LOCK_KEYS["indexing"]])
    run = IngestRun.objects.create(
        source=IngestRun.Source.EMBED, progress={"stage": "vectors", "done": 1240, "total": 2998}
    )
    yield run
    other.close()


def test_second_indexing_job_returns_at_once_naming_the_active_run(hashing, other_process_indexing):
    _add_papers(3)
    assert lock_held("indexing")
    started = time.monotonic()
    outcome = index_new_papers_job()
    assert time.monotonic() - started < 2
    assert outcome["status"] == "busy"
    assert f"indexing run #{other_process_indexing.pk} is active" in outcome["message"]
    assert "1,240 of 2,998 papers" in outcome["message"]
    assert Passage.objects.count() == 0  # left to the active run
    # The active run is not taken for a dead one.
    other_process_indexing.refresh_from_db()
    assert other_process_indexing.status == IngestRun.Status.RUNNING


def test_embed_papers_during_a_run_names_it_and_exits_0(hashing, other_process_indexing):
    _add_papers(2)
    out = StringIO()
    call_command("embed_papers", stdout=out, verbosity=0)  # no CommandError: exit status 0
    line = out.getvalue().strip()
    assert line.startswith(f"indexing run #{other_process_indexing.pk} is active")
    assert "--wait" in line
    assert Passage.objects.count() == 0


def test_embed_papers_wait_waits_for_the_active_run_then_indexes(hashing, db, settings):
    _add_papers(2)
    other = connections.create_connection("default")
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [LOCK_KEYS["indexing"]])
    other.inc_thread_sharing()
    threading.Timer(1.0, other.close).start()  # the other run ends after a second
    out = StringIO()
    started = time.monotonic()
    call_command("embed_papers", "--wait", stdout=out, verbosity=0)
    assert time.monotonic() - started >= 1.0
    assert "waiting for it" in out.getvalue()
    assert Paper.objects.embedded_with("hashing-test").count() == 2


def test_a_run_left_running_by_a_dead_process_is_closed_by_the_next(hashing, db):
    dead = IngestRun.objects.create(source=IngestRun.Source.EMBED)
    _add_papers(2)
    outcome = run_indexing()
    assert outcome.status == "succeeded" and outcome.embedded == 2
    dead.refresh_from_db()
    assert dead.status == IngestRun.Status.FAILED
    run = IngestRun.objects.get(pk=outcome.run_ids[0])
    assert (run.status, run.new, run.progress["done"], run.progress["total"]) == (
        "succeeded",
        2,
        2,
        2,
    )


@pytest.mark.django_db(transaction=True)
def test_jobs_racing_embed_each_paper_once(hashing):
    """Two indexing jobs on two workers while papers keep arriving: every paper is embedded by
    exactly one run (the runs' counts add up to the papers, never more)."""
    _add_papers(150)
    results = {}

    def worker(name):
        try:
            results[name] = run_indexing(batch_size=1)
        finally:
            connection.close()

    first = threading.Thread(target=worker, args=("first",))
    first.start()
    deadline = time.monotonic() + 10
    while not lock_held("indexing") and time.monotonic() < deadline:
        time.sleep(0.005)
    _add_papers(50, start=150)  # a second import lands while the first run works
    second = threading.Thread(target=worker, args=("second",))
    second.start()
    first.join(30)
    second.join(30)
    assert results["second"].status == "busy"
    assert results["first"].embedded == 200
    runs = IngestRun.objects.filter(source=IngestRun.Source.EMBED)
    assert sum(run.new for run in runs) == 200
    assert Paper.objects.embedded_with("hashing-test").count() == 200

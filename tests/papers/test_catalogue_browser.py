"""The home page in real headless Chromium while a worker indexes: the catalogue's coverage and
"Indexing N of M papers", updated live (the page polls /papers/catalogue/), then the end of it."""

import psycopg
import pytest

from papers.indexing.run import run_indexing
from papers.ingest.runs import LOCK_KEYS
from papers.ingest.upsert import upsert_papers
from papers.models import IngestRun
from tests import live_server
from tests.chat.test_browser import chromium  # noqa: F401 (the browser fixture)
from tests.papers.conftest import make_record

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_home_shows_coverage_and_live_indexing_progress(chromium, settings, monkeypatch):  # noqa: F811
    settings.EMBEDDING_BACKEND = "hashing"
    # Playwright's sync API keeps an event loop in this thread; our ORM calls here are plain
    # synchronous test steps (the worker's side), not code running on that loop.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    upsert_papers(make_record(f"2401.{n:05d}", primary_category="cs.CL") for n in range(1, 6))
    worker = psycopg.connect(
        live_server.test_database_url(), autocommit=True
    )  # a worker indexing elsewhere
    worker.execute("SELECT pg_advisory_lock(%s)", [LOCK_KEYS["indexing"]])
    run = IngestRun.objects.create(
        source=IngestRun.Source.EMBED, progress={"done": 2, "total": 5, "per_second": 0.05}
    )
    try:
        with live_server.LiveServer(env={"EMBEDDING_BACKEND": "hashing"}) as server:
            page = chromium.new_page()
            page.set_default_timeout(20_000)
            page.goto(server.url + "/")
            catalogue = page.locator("#catalogue")
            assert "5 papers in the catalogue, published 2024-01-02 to 2024-01-02" in (
                catalogue.inner_text()
            )
            assert "cs.CL · 5" in catalogue.inner_text()
            indexing = page.locator('#catalogue [data-role="indexing"]')
            assert indexing.inner_text() == "Indexing 2 of 5 papers, about a minute left"

            # The worker moves on: the line follows without a reload.
            run.progress = {"done": 4, "total": 5, "per_second": 0.05}
            run.save()
            page.wait_for_function(
                "() => document.querySelector('#catalogue [data-role=indexing]').textContent"
                ".includes('Indexing 4 of 5 papers')"
            )
            # It finishes (here: this process indexes, the worker lets go of its lock).
            run.status = IngestRun.Status.SUCCEEDED
            run.save()
            worker.execute("SELECT pg_advisory_unlock(%s)", [LOCK_KEYS["indexing"]])
            run_indexing()
            page.wait_for_function(
                "() => document.querySelector('#catalogue [data-role=indexing]').textContent"
                " === 'All 5 papers are indexed.'"
            )
    finally:
        worker.close()

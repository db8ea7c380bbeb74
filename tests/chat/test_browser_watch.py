"""Issue #15.4 in real headless Chromium: follow a thread, replay a nightly ingest (the recorded
arXiv API, the real ingest, indexing and watch jobs), then see the badge in the thread list and
the "New since you asked" update in the thread. Screenshot kept in test-artifacts/."""

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from chat import jobs
from chat.models import Follow
from papers.jobs import index_new_papers_job, ingest_recent_job
from tests.chat.test_browser import ARTIFACTS, chromium, open_chat_as  # noqa: F401 (fixture)
from tests.chat.test_watch import asked
from tests.live_server import LiveServer
from tests.papers.conftest import arxiv_api  # noqa: F401  (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ENV = {"EMBEDDING_BACKEND": "hashing", "LLM_BACKEND": "extractive", "LLM_FALLBACK": "extractive"}


def off_the_page_loop(work):
    """Playwright's sync API runs an event loop in this thread, where the ORM refuses to run:
    database work goes to a thread of its own."""

    def run():
        try:
            return work()
        finally:
            connections.close_all()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run).result()


def nightly() -> dict:
    assert ingest_recent_job(categories=["cs.AI"])["new"] == 60
    index_new_papers_job()
    return jobs.watch_followed_threads_job()


@pytest.fixture
def thread(owner, settings):
    """Asked and answered an hour before the night's ingest (made before Chromium starts)."""
    settings.EMBEDDING_BACKEND = "hashing"
    return asked(owner, "What is new in metamorphic testing?", "metamorphic testing",
                 answered_at=timezone.now() - timedelta(hours=1))


def test_follow_a_thread_and_see_new_since_you_asked(owner, password, thread, arxiv_api,  # noqa: F811
                                                     chromium):  # noqa: F811
    with LiveServer(env=ENV) as server:
        page = open_chat_as(chromium, server, owner.username, password)
        page.goto(f"{server.url}/chat/{thread.pk}/")
        page.click("#follow")
        page.locator("#follow", has_text="Following").wait_for()
        assert off_the_page_loop(lambda: Follow.objects.filter(thread=thread).exists())

        result = off_the_page_loop(nightly)
        assert result["updates"] == 1

        page.goto(server.url + "/chat/")
        badge = page.locator(".thread-list li", has_text="metamorphic testing").locator(
            "[data-role=watch-badge]")
        assert badge.inner_text() == "1 new"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "watch-badge.png"), full_page=True)

        page.click("text=What is new in metamorphic testing?")
        update = page.locator(".msg-assistant").last
        assert update.locator("[data-role=watch-update]").inner_text() == "New since you asked"
        assert "New since you asked" in update.locator(".answer").inner_text()
        assert update.locator("a.cite").count() >= 1
        assert update.locator(".sources .source").count() >= 1
        page.screenshot(path=str(ARTIFACTS / "watch-new-since-you-asked.png"), full_page=True)
        # Opened: the badge is gone.
        assert page.locator("[data-role=watch-badge]").count() == 0

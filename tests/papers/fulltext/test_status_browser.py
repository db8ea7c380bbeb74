"""The paper page in real headless Chromium while its full text is read: the status line follows
queued -> reading -> read, N pages without a reload (it polls papers:fulltext-status)."""

import pytest

from papers.fulltext.read import read_paper
from papers.models import FullText
from tests import live_server
from tests.chat.test_browser import chromium  # noqa: F401 (the browser fixture)
from tests.papers.fulltext.conftest import SHORT

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LINE = "[data-role=fulltext-status]"


def _line_is(text: str) -> str:
    return f"() => document.querySelector('{LINE}').textContent === {text!r}"


@pytest.fixture
def sync_orm_beside_playwright(monkeypatch):
    """Playwright's sync API keeps an event loop in this thread; our ORM calls are plain
    synchronous test steps (the worker's side), not code running on that loop."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def test_paper_page_follows_the_full_text_as_it_is_read(
    sync_orm_beside_playwright,
    pdf_server,
    shared_papers,
    chromium,  # noqa: F811
):
    paper = shared_papers[SHORT]
    fulltext = FullText.objects.create(paper=paper, version=paper.version)  # queued
    with live_server.LiveServer(env={"EMBEDDING_BACKEND": "hashing"}) as server:
        page = chromium.new_page()
        page.set_default_timeout(20_000)
        page.goto(f"{server.url}/papers/{SHORT}/")
        assert page.locator(LINE).inner_text() == "Full text: queued"
        assert page.locator(f'a[href="https://arxiv.org/pdf/{SHORT}"]').count() == 1

        fulltext.status = FullText.Status.FETCHING
        fulltext.save()
        page.wait_for_function(_line_is("Full text: reading…"))

        # The worker that marked it "reading" reads it (force: it is that worker).
        read_paper(paper, force=True)
        page.wait_for_function(_line_is("Full text: read, 6 pages"))
        assert page.locator(LINE).get_attribute("data-state") == "ok"

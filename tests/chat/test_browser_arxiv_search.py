"""Issue #14 item 5 in real headless Chromium: a question the catalogue has nothing on gets a
"Search arXiv for this" button (on the streamed answer and on the saved one after a reload);
clicking it searches the recorded arXiv API replayed over HTTP, imports what it finds, asks the
question again, and the new answer cites the imported papers. The catalogue is the small slice
of the arXiv sample (computer vision, mostly), embedded with the hashing embedder."""

import re

import pytest

from tests.chat.test_browser import chromium, open_chat_as  # noqa: F401 (the fixture)
from tests.chat.test_browser_answers import (  # noqa: F401 (slice_catalogue: the fixture)
    arxiv_ids,
    cited_numbers,
    slice_catalogue,
)
from tests.fakes import SHARED_DATA
from tests.fakes.arxiv_replay import ReplayArxiv
from tests.live_server import LiveServer

# Outside the slice: the relevance gate finds nothing for it with the hashing embedder.
QUESTION = "testing REST APIs"
RECORDING = SHARED_DATA / "arxiv-api" / "q_testing_s0_m10_bc5a6c384fe9.xml"

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def live_arxiv():
    replay = ReplayArxiv(data_dir=SHARED_DATA / "arxiv-api", queries={r"abs:testing": "q_testing"})
    replay.start()
    yield replay
    replay.stop()


def recorded_ids() -> set[str]:
    """The papers the replayed search returns, read from the recording itself."""
    text = RECORDING.read_text()
    return set(re.findall(r"<id>https?://arxiv\.org/abs/([^<]+?)(?:v\d+)?</id>", text))


def test_nothing_then_search_arxiv_then_an_answer_from_it(
    slice_catalogue,  # noqa: F811
    live_arxiv,
    owner,
    password,
    chromium,  # noqa: F811
):
    found = recorded_ids()
    assert len(found) == 10 and not found & set(slice_catalogue)  # outside the catalogue
    env = {
        "EMBEDDING_BACKEND": "hashing",
        "LLM_BACKEND": "extractive",
        "LLM_FALLBACK": "extractive",
        "ARXIV_API_URL": live_arxiv.url,
        "ARXIV_DELAY_SECONDS": "0",
        "ARXIV_MAX_RETRIES": "1",
        "ARXIV_LIVE_RESULTS": "10",
    }
    with LiveServer(env=env) as server:
        page = open_chat_as(chromium, server, owner.username, password, 60_000)
        page.fill("#new-chat-text", QUESTION)
        page.keyboard.press("Enter")
        page.wait_for_function(
            "() => document.querySelectorAll('.msg-assistant[data-status=complete]').length == 1"
        )

        # The streamed answer says the catalogue has nothing, cites nothing, offers arXiv.
        first = page.locator(".msg-assistant").nth(0)
        assert first.locator(".sources .source").count() == 0
        assert first.locator("button.search-arxiv").is_visible()
        # The saved answer, read back on a reload, offers it too.
        page.reload()
        page.wait_for_function("() => document.querySelector('#connection').dataset.kind == 'ok'")
        first = page.locator(".msg-assistant").nth(0)
        assert first.locator("button.search-arxiv").inner_text() == "Search arXiv for this"
        assert live_arxiv.requests == []

        # arXiv down: the answer says why, and the button can be tried again.
        live_arxiv.fail_next(times=2, status=503)  # the first try and its one retry
        first.locator("button.search-arxiv").click()
        page.wait_for_function(
            "() => document.querySelector('.arxiv-step').classList.contains('error-note')"
        )
        reason = first.locator(".arxiv-step").inner_text()
        assert "arXiv" in reason and "try again later" not in reason, reason  # the server's own
        assert first.locator("button.search-arxiv").is_enabled()
        assert page.locator(".msg-assistant").count() == 1
        failed = len(live_arxiv.requests)

        first.locator("button.search-arxiv").click()
        page.wait_for_function(
            "() => document.querySelectorAll('.msg-assistant[data-status=complete]').length == 2"
        )
        assert first.locator(".arxiv-step").inner_text() == (
            "Imported 10 papers from arXiv; asking again…"
        )
        assert len(live_arxiv.requests) == failed + 1
        second = page.locator(".msg-assistant").nth(1)
        # The same question asked again in the thread, now answered from the imported papers.
        assert page.locator(".msg-user .bubble").all_inner_texts() == [QUESTION, QUESTION]
        sources = arxiv_ids(second)
        cited = {sources[n - 1] for n in cited_numbers(second)}
        assert cited & found, (cited, sources)
        assert second.locator("button.search-arxiv").count() == 0

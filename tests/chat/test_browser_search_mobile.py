"""Chromium: the search page's pages and sort, and the chat on a phone (390 x 844): the
conversation first, opened at its latest answer, header and composer under a fifth of the
screen, a citation landing its card below the sticky header. Screenshots in test-artifacts/."""

import re

import pytest

from chat.models import Message
from tests.chat.test_browser import ARTIFACTS, chromium, open_chat_as  # noqa: F401 (a fixture)
from tests.live_server import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SERVER_ENV = {"EMBEDDING_BACKEND": "hashing", "SEARCH_RESULTS": "2"}


def result_ids(page) -> list[str]:
    return [re.search(r"/papers/([^/]+)/", h).group(1)
            for h in page.locator(".search-results .card-title").evaluate_all(
                "links => links.map(a => a.getAttribute('href'))")]


def test_search_pages_and_sort(catalogue, chromium):  # noqa: F811
    ARTIFACTS.mkdir(exist_ok=True)
    with LiveServer(env=SERVER_ENV) as server:
        page = chromium.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(30_000)
        page.goto(server.url + "/search/?q=diffusion+models")
        count = page.inner_text(".results-count")
        total = int(re.search(r"Results 1–2 of (\d+)", count).group(1))
        assert total >= 3
        first = result_ids(page)
        page.screenshot(path=str(ARTIFACTS / "search-page-1.png"), full_page=True)

        page.click("a[rel=next]")
        page.wait_for_url("**page=2**")
        assert f"Results 3–{min(4, total)} of {total}" in page.inner_text(".results-count")
        second = result_ids(page)
        assert second and not set(first) & set(second)
        page.screenshot(path=str(ARTIFACTS / "search-page-2.png"), full_page=True)

        page.click("nav.sort a:has-text('newest first')")
        page.wait_for_url("**sort=date**")
        assert "page=" not in page.url  # a new order starts at its first page
        dated = page.locator(".search-results .meta").all_inner_texts()
        days = [re.search(r"\d{4}-\d{2}-\d{2}", text).group(0) for text in dated]
        assert days == sorted(days, reverse=True)
        page.screenshot(path=str(ARTIFACTS / "search-sorted-by-date.png"), full_page=True)

        # Each result: more like it (nearest by vector), and its author's page.
        page.click(".search-results .more-like >> nth=0")
        assert page.locator(".search-understood .chip:has-text('like arXiv:')").count() == 1
        page.click(".search-results a.author >> nth=0")
        page.wait_for_url("**/papers/authors/**")
        assert page.locator(".cards .card").count() >= 1


@pytest.fixture
def long_thread(saved_thread):
    """Six answers: the latest is far below the first. (Written before Playwright starts: its
    event loop makes Django refuse synchronous queries.)"""
    answer = saved_thread.messages.filter(role="assistant").first()
    for n in range(5):
        Message.objects.create(thread=saved_thread, role="user", content=f"And question {n}?")
        answer.pk = None
        answer.id = None
        answer.save()
    return saved_thread


def test_chat_on_a_phone(catalogue, long_thread, password, chromium):  # noqa: F811
    saved_thread = long_thread
    ARTIFACTS.mkdir(exist_ok=True)
    with LiveServer(env=SERVER_ENV) as server:
        page = open_chat_as(chromium, server, "olivia", password)
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(f"{server.url}/chat/{saved_thread.pk}/")
        page.wait_for_selector("#connection:has-text('Connected')", state="attached")
        page.wait_for_timeout(300)
        page.screenshot(path=str(ARTIFACTS / "chat-phone.png"))
        geometry = page.evaluate("""() => {
            const box = (s) => document.querySelector(s).getBoundingClientRect();
            const answers = document.querySelectorAll('.msg-assistant');
            return {
                header: box('.topbar').height, composer: box('#composer').height,
                chatTop: box('.chat').top, listTop: box('.thread-side').top,
                lastBottom: answers[answers.length - 1].getBoundingClientRect().bottom,
                scrollY: window.scrollY, height: window.innerHeight,
            };
        }""")
        assert geometry["chatTop"] < geometry["listTop"]  # the conversation first
        assert geometry["scrollY"] > 0  # opened at the latest answer, not the top
        assert 0 < geometry["lastBottom"] <= geometry["height"]
        share = (geometry["header"] + geometry["composer"]) / geometry["height"]
        assert share < 0.20, f"header {geometry['header']} + composer {geometry['composer']} px"

        # A citation lands its card below the sticky header.
        page.locator(".msg-assistant a.cite >> nth=0").click()
        page.wait_for_timeout(400)
        card_top = page.evaluate("() => document.querySelector('.source:target').getBoundingClientRect().top")
        assert card_top >= geometry["header"]
        page.screenshot(path=str(ARTIFACTS / "chat-phone-citation.png"))
        print(f"phone: header {geometry['header']:.0f} px + composer {geometry['composer']:.0f} px"
              f" = {share:.0%} of 844 px")

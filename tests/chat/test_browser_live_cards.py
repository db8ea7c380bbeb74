"""A live answer's source cards (drawn by chat.js from the socket's events, not the saved page)
have what the reloaded page's cards have: the folded "Passage used" and author names that link
to the authors' pages."""

import re

import pytest

from tests.chat.test_browser import (  # noqa: F401 -- the chromium fixture
    ARTIFACTS,
    chromium,
    model_reply,
)
from tests.fakes.openai_chat import FakeOpenAI, Reply
from tests.live_server import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _check_cards(page, answer):
    """The answer's cards: a closed 'Passage used' that opens on the abstract, author links."""
    card = answer.locator(".sources .source").filter(has_text="Latent diffusion transformers")
    card.wait_for()
    summary = card.locator("details.passage > summary")
    assert summary.inner_text() == "Passage used"
    snippet = card.locator("details.passage .snippet")
    assert snippet.is_hidden()
    summary.click()
    assert snippet.is_visible()
    assert "latent patches" in snippet.inner_text()
    author = card.locator(".meta a.author")
    assert author.all_inner_texts() == ["Carla Diaz"]
    assert re.fullmatch(r"/papers/authors/[^/]+/", author.get_attribute("href"))
    return author.get_attribute("href")


def test_a_live_answer_has_the_passage_and_author_links(catalogue, owner, password, chromium):  # noqa: F811
    with FakeOpenAI() as fake:
        fake.default = Reply(model_reply, tokens_per_second=200)
        with LiveServer(env=fake.server_env()) as server:
            page = chromium.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(30_000)
            page.goto(server.url + "/accounts/login/")
            page.fill("#id_username", owner.username)
            page.fill("#id_password", password)
            page.click("form button[type=submit]")
            page.goto(server.url + "/chat/")
            page.fill("#new-chat-text", "diffusion transformers attention")
            page.keyboard.press("Enter")
            page.wait_for_url("**/chat/*-*/")
            page.wait_for_selector('.msg-assistant[data-status="complete"]')
            # A second question on the open page: its answer is drawn only from the stream.
            page.fill("#question", "latent diffusion transformers")
            page.keyboard.press("Enter")
            page.wait_for_function(
                "() => document.querySelectorAll('.msg-assistant[data-status=complete]').length == 2"
            )
            live = page.locator(".msg-assistant").nth(1)
            live_href = _check_cards(page, live)
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "chat-live-passage-used.png"), full_page=True)

            # The reloaded page draws the same (templates/chat/_sources.html).
            page.reload()
            assert _check_cards(page, page.locator(".msg-assistant").nth(1)) == live_href
            page.click(f'.msg-assistant >> nth=1 >> a.author[href="{live_href}"]')
            page.wait_for_url(f"**{live_href}")
            assert "Latent diffusion transformers" in page.inner_text("main")

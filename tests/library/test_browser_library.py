"""Issue #15.3 in real headless Chromium: save papers from search and from a paper page into a
new collection, then "Ask about this collection"; the answer (the offline extractive backend)
cites only that collection's papers. Screenshot kept in test-artifacts/."""

import re

import pytest

from tests.chat.conftest import catalogue  # noqa: F401  (fixture)
from tests.chat.test_browser import ARTIFACTS, chromium, open_chat_as  # noqa: F401 (fixture)
from tests.live_server import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ENV = {"EMBEDDING_BACKEND": "hashing", "LLM_BACKEND": "extractive", "LLM_FALLBACK": "extractive"}
COLLECTION = {"2301.00001", "2510.00003"}  # video diffusion; fast sampling for diffusion


def test_save_into_a_collection_and_ask_about_it(catalogue, owner, password, chromium):  # noqa: F811
    with LiveServer(env=ENV) as server:
        page = open_chat_as(chromium, server, owner.username, password)

        # From search: a new collection, made in the save menu, without leaving the page.
        page.goto(server.url + "/search/?q=diffusion+video")
        card = page.locator("li.card", has_text="Denoising diffusion models for video")
        card.locator(".save-menu summary").click()
        card.locator("input[name=new_name]").fill("Diffusion reading")
        card.locator(".save-form button[type=submit]").click()
        card.locator(".save-status", has_text="Saved to “Diffusion reading”").wait_for()
        assert "/search/" in page.url

        # From a paper page: into the collection that now exists.
        page.goto(server.url + "/papers/2510.00003/")
        page.click(".paper-links .save-menu summary")
        page.select_option(".paper-links select[name=collection]", label="Diffusion reading")
        page.click(".paper-links .save-form button[type=submit]")
        page.locator(".paper-links .save-status", has_text="Saved to").wait_for()

        # The library lists it with its count; its page has both papers.
        page.goto(server.url + "/library/")
        assert "2 papers" in page.inner_text(".collection-list")
        page.click("text=Diffusion reading")
        assert page.locator(".saved-papers li.card").count() == 2

        # Ask about it: a thread scoped to the two papers.
        page.click("#ask-collection")
        page.wait_for_url("**/chat/*-*/")
        page.fill("#question", "What do these papers say about diffusion models?")
        page.keyboard.press("Enter")
        page.wait_for_selector('.msg-assistant[data-status="complete"]', timeout=60_000)
        links = page.locator(".msg-assistant .sources .source a:has-text('arXiv:')")
        cited = {re.sub(r"v\d+$", "", t.removeprefix("arXiv:").strip())
                 for t in links.all_inner_texts()}
        assert cited and cited <= COLLECTION, cited
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "library-ask-collection.png"), full_page=True)

"""A thread's exports in real headless Chromium (#15.2): two answers streamed live share one
reference list (a paper keeps its number across answers, live and after a reload), and the
Export menu downloads the thread's BibTeX, which parses. Screenshot: test-artifacts/thread-export.png."""

import re

import bibtexparser
import pytest

from tests.chat.test_browser import ARTIFACTS, chromium, open_chat_as  # noqa: F401 (the fixture)
from tests.fakes.openai_chat import FakeOpenAI, Reply
from tests.live_server import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def reply(body: dict) -> str:
    if not body.get("stream"):
        return "diffusion transformers attention"
    return "Diffusion transformers scale [1], and attention matters [2]."


def labels(page) -> list[dict[str, str]]:
    """Per answer: arXiv id (version dropped) -> the number its card shows."""
    found = []
    for answer in page.locator(".msg-assistant").all():
        ids = [re.sub(r"v\d+$", "", t.removeprefix("arXiv:").strip())
               for t in answer.locator(".source a:has-text('arXiv:')").all_inner_texts()]
        numbers = answer.locator(".source .source-number").all_inner_texts()
        found.append(dict(zip(ids, numbers, strict=True)))
    return found


def test_thread_numbers_and_bibtex_download(catalogue, owner, password, chromium):  # noqa: F811
    with FakeOpenAI() as fake:
        fake.default = Reply(reply, tokens_per_second=400)
        with LiveServer(env=fake.server_env()) as server:
            page = open_chat_as(chromium, server, owner.username, password)
            page.fill("#new-chat-text", "diffusion transformers attention")
            page.keyboard.press("Enter")
            page.wait_for_selector('.msg-assistant[data-status="complete"]')
            page.fill("#question", "and video diffusion models?")
            page.keyboard.press("Enter")
            page.wait_for_function(
                "() => document.querySelectorAll('.msg-assistant[data-status=complete]').length == 2"
            )
            live = labels(page)
            first, second = live
            shared = set(first) & set(second)
            assert shared, live  # the test needs a paper shown in both answers
            for arxiv_id in shared:
                assert first[arxiv_id] == second[arxiv_id]
            top = max(int(n.strip("[]")) for n in first.values())
            new = [int(second[i].strip("[]")) for i in second if i not in first]
            assert all(n > top for n in new)
            live_cites = page.locator(".msg-assistant").nth(1).locator("a.cite").all_inner_texts()

            page.reload()
            page.wait_for_selector(".msg-assistant .source")
            assert labels(page) == live  # the saved page numbers them the same
            assert page.locator(".msg-assistant").nth(1).locator("a.cite").all_inner_texts() == live_cites

            page.click(".thread-export summary")
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "thread-export.png"))
            with page.expect_download() as info:
                page.click("[data-role=export-bibtex]")
            download = info.value
            assert download.suggested_filename.endswith(".bib")
            library = bibtexparser.parse_string(open(download.path(), encoding="utf-8").read())
            assert not library.failed_blocks
            eprints = [e.fields_dict["eprint"].value for e in library.entries]
            in_order = sorted({**first, **second}.items(), key=lambda kv: int(kv[1].strip("[]")))
            assert eprints == [arxiv_id for arxiv_id, _ in in_order]
            assert all(e.fields_dict["archivePrefix"].value == "arXiv" for e in library.entries)

"""Issue #11 in real headless Chromium, with the default offline backend (no model): a signed-in
researcher asks a list question, then "which of these …", then says "hi". The page must show a
list answer, a follow-up whose sources are among the first answer's, and a small-talk reply with
no sources and no citations. The catalogue is real: the small slice of the arXiv sample
(bench.answer_slice), embedded with the hashing embedder."""

import re

import pytest

from bench.answer_slice import SMALL, read_slice
from papers.indexing.lexical import index_missing
from papers.indexing.vectors import embed_missing
from papers.ingest.upsert import upsert_papers
from papers.models import Paper
from tests.chat.test_browser import ARTIFACTS, chromium, open_chat_as  # noqa: F401 (the fixture)
from tests.fakes import SHARED_DATA
from tests.live_server import LiveServer

SNAPSHOT = SHARED_DATA / "arxiv-snapshot" / "arxiv-sample.jsonl.gz"
LIST_QUESTION = "papers on object detection"
# The follow-up asks for a word some, not all, of the list's papers mention (chosen from these
# once the list is known, so the test does not hang on what the small slice happens to hold).
FOLLOW_UP_WORDS = ("transformers", "adversarial", "video", "domain", "3D", "attention", "graph")

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def slice_catalogue(transactional_db, settings):
    if not SNAPSHOT.is_file():
        pytest.skip(f"needs {SNAPSHOT}")
    settings.EMBEDDING_BACKEND = "hashing"
    upsert_papers(read_slice(SNAPSHOT, SMALL))
    index_missing()
    embed_missing()
    # Each paper's text, read now: the ORM refuses to run inside Playwright's event loop.
    return {p.arxiv_id: f"{p.title} {p.abstract}" for p in Paper.objects.all()}


def arxiv_ids(answer) -> list[str]:
    """The arXiv ids of an answer's source cards, as the page shows them."""
    links = answer.locator(".sources .source a:has-text('arXiv:')").all_inner_texts()
    # The cards name the version read ("2203.15793v2"); the catalogue keys papers without it.
    return [re.sub(r"v\d+$", "", text.removeprefix("arXiv:").strip()) for text in links]


def cited_numbers(answer) -> set[int]:
    return {
        int(n) for n in answer.locator("a.cite").evaluate_all("a => a.map(x => x.dataset.source)")
    }


def check_folded(answer) -> int:
    """The cards a final answer does not cite are folded behind a button that shows them;
    returns how many."""
    cards = answer.locator(".sources .source")
    cited = len(cited_numbers(answer))
    uncited = cards.count() - cited
    more = answer.locator(".more-sources")
    if not uncited or not cited:
        assert more.count() == 0
        return 0
    assert answer.locator(".sources .source:visible").count() == cited
    assert more.inner_text() == f"Show {uncited} more passage{'s' * (uncited > 1)} found but not quoted"
    more.click()
    assert answer.locator(".sources .source:visible").count() == cards.count()
    assert more.inner_text() == f"Hide the {uncited} passage{'s' * (uncited > 1)} not quoted"
    more.click()
    assert answer.locator(".sources .source:visible").count() == cited
    return uncited


def test_list_then_which_of_these_then_hi(slice_catalogue, owner, password, chromium):  # noqa: F811
    env = {
        "EMBEDDING_BACKEND": "hashing",
        "LLM_BACKEND": "extractive",
        "LLM_FALLBACK": "extractive",
    }
    with LiveServer(env=env) as server:
        page = open_chat_as(chromium, server, owner.username, password, 30_000)

        def ask(text: str, nth: int):
            page.fill("#question" if nth else "#new-chat-text", text)
            page.keyboard.press("Enter")
            page.wait_for_function(
                f"() => document.querySelectorAll('.msg-assistant[data-status=complete]').length == {nth + 1}"
            )
            return page.locator(".msg-assistant").nth(nth)

        # 1. A list: several papers, one per line, each cited.
        first = ask(LIST_QUESTION, 0)
        first_ids = arxiv_ids(first)
        assert len(first_ids) >= 3
        # One line per paper, naming it (not quotes strung together).
        titles = first.locator(".sources .source .card-title").all_inner_texts()
        lines = first.locator(".answer li").all_inner_texts()
        naming = [line for line in lines if any(t.strip() in line for t in titles)]
        assert len(naming) >= 3, first.locator(".answer").inner_text()
        assert len(cited_numbers(first)) >= 3
        assert not re.search(r"not enough to answer|none of them mentions", first.inner_text())
        assert check_folded(first) == 0  # every card cited: none folded
        # The follow-up has something to find among them (else this test would prove nothing).
        for word in FOLLOW_UP_WORDS:
            stem = word.rstrip("s")
            transformers = [i for i in first_ids if re.search(stem, slice_catalogue[i], re.I)]
            if 0 < len(transformers) < len(first_ids):
                break
        assert 0 < len(transformers) < len(first_ids), ("no word picks some of", titles)

        # 2. "which of these …": works on the first answer's papers, cites some of them.
        second = ask(f"which of these are about {word}?", 1)
        second_ids = arxiv_ids(second)
        assert second_ids and set(second_ids) <= set(first_ids), (second_ids, first_ids)
        numbers = cited_numbers(second)
        assert numbers
        cited_ids = {second_ids[n - 1] for n in numbers}
        assert cited_ids <= set(transformers), (cited_ids, transformers)

        # 3. Small talk: a reply, no sources, no citations.
        third = ask("hi", 2)
        assert third.locator(".sources .source").count() == 0
        assert third.locator("a.cite").count() == 0
        assert len(third.locator(".answer").inner_text().split()) >= 3

        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "chat-answers.png"), full_page=True)

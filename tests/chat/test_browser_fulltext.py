"""Issue #12 in real headless Chromium: a signed-in researcher opens a paper page, presses "Ask
about this paper", asks a question only the paper's body answers, and sees the cited page
("p. 3"), the quoted passage with the answering sentence marked and the link to arXiv's PDF at
that page, live and again after a reload; and a number in a table (OPT's PDF, read over HTTP from
the local arXiv stand-in), whose quoted row is marked in the card's table. Offline backend,
hashing embedder, real database."""

import pytest

from papers.models import Paper
from tests.chat.fulltext_helpers import add_fulltext
from tests.chat.test_browser import chromium, open_chat_as  # noqa: F401 (the fixture)
from tests.chat.test_browser_answers import check_folded
from tests.live_server import LiveServer

# The fixtures of tests/papers/fulltext: a local arXiv PDF server over the shared PDFs.
from tests.papers.fulltext.conftest import pdf_server, shared_papers  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TRAINING = (
    "We train the student with a learning rate of 3e-4 and a batch size of 512 on eight A100 "
    "GPUs for 200k iterations."
)


@pytest.fixture
def read_paper(catalogue):
    paper = Paper.objects.get(arxiv_id="2510.00003")
    add_fulltext(paper, [
        ["1 Introduction. Diffusion models sample slowly; distillation makes them fast."],
        ["2 Method. The consistency function maps any noisy point to the trajectory's origin."],
        ["4 Experiments. " + TRAINING + " The teacher is frozen throughout distillation."],
    ], section="4 Experiments")
    return paper


def test_ask_about_this_paper_cites_the_page_and_quotes_the_sentence(
    read_paper, owner, password, chromium  # noqa: F811
):
    env = {"EMBEDDING_BACKEND": "hashing", "LLM_BACKEND": "extractive", "LLM_FALLBACK": "extractive"}
    # A loaded machine (other benchmarks beside) takes long to import Django: wait for it.
    with LiveServer(env=env, start_timeout=240) as server:
        page = open_chat_as(chromium, server, owner.username, password, 90_000)
        page.goto(server.url + "/papers/2510.00003/")
        page.click("[data-role=ask-about-paper]")
        page.wait_for_selector("#scope-chip")
        chip = " ".join(page.inner_text("#scope-chip").split())
        assert chip == "About: Fast sampling for diffusion models with consistency distillation"
        assert "Full text: read, 3 pages" in page.inner_text("[data-role=fulltext-status]")

        page.wait_for_function("() => !document.querySelector('#question').disabled")
        page.fill("#question", "What learning rate and batch size does the student train with?")
        page.keyboard.press("Enter")
        page.wait_for_function(
            "() => document.querySelectorAll('.msg-assistant[data-status=complete]').length == 1"
        )

        def check(answer):
            assert "learning rate of 3e-4" in answer.locator(".answer").inner_text()
            assert check_folded(answer) > 0  # the chunks it does not quote are folded
            card = answer.locator(".sources .source", has=page.locator("mark.quote")).first
            assert card.locator(".fulltext-cite .pages").inner_text() == "p. 3"
            assert card.locator("mark.quote").inner_text().startswith(
                "We train the student with a learning rate of 3e-4"
            )
            assert TRAINING in card.locator("blockquote.passage-quote").inner_text()
            link = card.locator("a.pdf-link")
            assert link.get_attribute("href") == "https://arxiv.org/pdf/2510.00003v1#page=3"

        check(page.locator(".msg-assistant").first)  # as it streamed
        page.reload()
        check(page.locator(".msg-assistant").first)  # as the server renders it


OPT = "2205.01068"
OPT_175B_ROW = "175B 96 96 12288 1.2e−4 2M"


@pytest.fixture
def opt_read(pdf_server, shared_papers):  # noqa: F811
    from papers.fulltext.read import read_paper as read_fulltext
    from papers.indexing.vectors import embed_missing

    embed_missing()
    assert read_fulltext(shared_papers[OPT]).status == "ok"
    return shared_papers[OPT]


def test_a_table_answer_marks_the_quoted_row_in_the_card(
    opt_read, owner, password, chromium  # noqa: F811
):
    env = {"EMBEDDING_BACKEND": "hashing", "LLM_BACKEND": "extractive", "LLM_FALLBACK": "extractive"}
    with LiveServer(env=env, start_timeout=240) as server:
        page = open_chat_as(chromium, server, owner.username, password, 90_000)
        page.goto(server.url + f"/papers/{OPT}/")
        page.click("[data-role=ask-about-paper]")
        page.wait_for_selector("#scope-chip")
        page.wait_for_function("() => !document.querySelector('#question').disabled")
        page.fill("#question", "What peak learning rate and batch size did OPT-175B use?")
        page.keyboard.press("Enter")
        page.wait_for_function(
            "() => document.querySelectorAll('.msg-assistant[data-status=complete]').length == 1"
        )

        def check(answer):
            # The answer quotes the row said with its header and caption…
            assert "Table 1: Model 175B" in answer.locator(".answer").inner_text()
            card = answer.locator(".sources .source", has=page.locator("mark.quote")).first
            # …and the card marks that row among the table's lines, on the table's page.
            assert card.locator("mark.quote").inner_text() == OPT_175B_ROW
            quote = card.locator("blockquote.passage-quote").inner_text()
            assert "Model #L #H dmodel LR Batch" in quote and OPT_175B_ROW in quote
            # Table 1 is printed on page 2 (the chunk may start on page 1).
            assert card.locator(".fulltext-cite .pages").inner_text() in ("p. 2", "pp. 1-2")

        check(page.locator(".msg-assistant").first)  # as it streamed
        page.reload()
        check(page.locator(".msg-assistant").first)  # as the server renders it

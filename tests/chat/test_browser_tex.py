"""TeX in real headless Chromium (#15.1): a source card's title and a streamed answer show
`$\\Psi$PO`, `$\\sim$12,000` and `$\\neq$` rendered by the vendored KaTeX once the answer is
complete, and again after a reload; the page source still holds the TeX; a model's `<script>`
stays text. Screenshot: test-artifacts/tex-answer.png."""

import pytest

from papers.indexing.vectors import embed_missing
from papers.ingest.upsert import upsert_papers
from tests.chat.conftest import _record
from tests.chat.test_browser import ARTIFACTS, chromium, open_chat_as  # noqa: F401 (the fixture)
from tests.fakes.openai_chat import FakeOpenAI, Reply
from tests.live_server import LiveServer

TEX_TITLE = r"$\Psi$PO: diffusion transformers with attention over $\sim$12,000 latent patches"
ANSWER = (
    r"$\Psi$PO trains diffusion transformers on $\sim$12,000 patches [1]; its loss $a_1 \neq b_2$ "
    "differs from the U-Net's. <script>window.__xss = 1</script> Costs are $5 and $10."
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def reply(body: dict) -> str:
    return "diffusion transformers attention" if not body.get("stream") else ANSWER


@pytest.fixture
def tex_catalogue(catalogue):
    upsert_papers([
        _record("2406.00042", TEX_TITLE,
                r"We show $\Psi$PO $\neq$ PPO: diffusion transformers with attention, "
                r"$\sim$12,000 patches and $O(n^2)$ cost.",
                ["Ada Lovelace"], ["cs.LG"], "2024-06-01")
    ])
    embed_missing()


def tex_sources(locator) -> list[str]:
    """The TeX each KaTeX rendering under `locator` was made from (its MathML annotation)."""
    return locator.locator(".katex annotation").all_text_contents()


def test_tex_rendered_in_card_and_streamed_answer(tex_catalogue, owner, password, chromium):  # noqa: F811
    with FakeOpenAI() as fake:
        fake.default = Reply(reply, tokens_per_second=200)
        with LiveServer(env=fake.server_env()) as server:
            page = open_chat_as(chromium, server, owner.username, password)
            page.fill("#new-chat-text", "diffusion transformers attention")
            page.keyboard.press("Enter")
            page.wait_for_selector('.msg-assistant[data-status="complete"]')
            answer = page.locator(".msg-assistant .answer")
            card = page.locator(".msg-assistant .source .card-title", has_text="PO: diffusion")

            def check():
                assert tex_sources(answer) == [r"\Psi", r"\sim", r"a_1 \neq b_2"]
                assert "$" not in answer.inner_text().split("Costs")[0]  # no raw TeX left
                assert "Costs are $5 and $10." in answer.inner_text()  # money is not math
                assert "<script>window.__xss = 1</script>" in answer.inner_text()
                assert tex_sources(card) == [r"\Psi", r"\sim"]
                assert page.evaluate("window.__xss") is None

            check()  # rendered live, once the stream completed
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "tex-answer.png"), full_page=True)
            page.reload()
            page.wait_for_selector(".msg-assistant .answer .katex")
            check()  # and server-rendered
            # The TeX source is what the page was sent: search and exports read that.
            html = page.evaluate("fetch(location.href).then(r => r.text())")
            assert r"$\Psi$PO trains" in html

            page.goto(server.url + "/papers/2406.00042/")
            assert r"O(n^2)" in tex_sources(page.locator(".abstract"))
            assert tex_sources(page.locator("h1")) == [r"\Psi", r"\sim"]
            page.screenshot(path=str(ARTIFACTS / "tex-paper.png"), full_page=True)

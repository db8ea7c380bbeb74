"""The chat in real headless Chromium against a real daphne serving this test run's database:
sign up, ask, watch tokens stream and sources appear, reload and find the saved thread. The
model (a local OpenAI-compatible fake at 30 tokens/s) and an abstract both carry `<script>`,
which must show as text and never run."""

import os
from pathlib import Path

import pytest

from tests.chat.conftest import SCRIPT_TITLE
from tests.fakes.openai_chat import FakeOpenAI, Reply
from tests.live_server import LiveServer

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parent.parent.parent / "test-artifacts"
LAUNCH_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
ANSWER = (
    "Diffusion transformers replace the U-Net with a transformer over latent patches [1]. "
    "<script>window.__xss = 1</script> Scaling them improves image quality [2]. "
    "An invented reference [42] is removed."
)



def model_reply(body: dict) -> str:
    """The fake model rewrites follow-ups (non-streamed) and answers (streamed)."""
    if not body.get("stream"):
        return "diffusion transformers since 2025"
    return ANSWER


pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def chromium():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"needs Debian's Chromium at {CHROMIUM} (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        yield browser
        browser.close()


def open_chat_as(chromium, server, username: str, password: str, timeout_ms: int = 30_000):
    """A new page, signed in through the log-in form, on the chat's start page."""
    page = chromium.new_page(viewport={"width": 1200, "height": 1000})
    page.set_default_timeout(timeout_ms)
    page.goto(server.url + "/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("form button[type=submit]")
    page.goto(server.url + "/chat/")
    return page


def test_sign_up_ask_stream_reload(catalogue, chromium, password):
    with FakeOpenAI() as fake:
        fake.default = Reply(model_reply, tokens_per_second=30)
        env = fake.server_env()
        with LiveServer(env=env) as server:
            page = chromium.new_page(viewport={"width": 1200, "height": 900})
            dialogs = []
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            # The Content-Security-Policy (no inline script) must cost the pages nothing.
            csp_errors = []
            page.on("console", lambda m: "Content Security Policy" in m.text
                    and csp_errors.append(m.text))
            page.set_default_timeout(20_000)

            page.goto(server.url + "/accounts/signup/")
            page.fill("#id_username", "newton")
            page.fill("#id_password1", password)
            page.fill("#id_password2", password)
            page.click("form button[type=submit]")
            page.wait_for_url("**/chat/")

            page.fill("#new-chat-text", "diffusion transformers attention")
            page.keyboard.press("Enter")  # Enter starts the chat
            page.wait_for_url("**/chat/*-*/")

            # Sources arrive before the text; the text then grows while the status says so.
            page.wait_for_selector(".msg-assistant .sources .source")
            page.wait_for_selector('.msg-assistant[data-status="streaming"] .answer:has-text("Diffusion")')
            partial = page.inner_text(".msg-assistant .answer")
            assert 0 < len(partial) < len(ANSWER)
            page.wait_for_selector('.msg-assistant[data-status="complete"]')
            final = page.inner_text(".msg-assistant .answer")
            assert len(final) > len(partial)
            assert "<script>window.__xss = 1</script>" in final  # shown as text
            assert "[42]" not in final
            assert page.locator(".msg-assistant a.cite").count() >= 2
            assert page.evaluate("window.__xss") is None
            assert page.locator(".followups .followup").count() > 0
            titles = page.locator(".msg-assistant .sources .card-title").all_inner_texts()
            assert SCRIPT_TITLE in titles  # the hostile abstract's title, as text

            # Shift+Enter is a new line, Enter sends (the follow-up is refused by nothing).
            page.fill("#question", "")
            page.type("#question", "and since 2025")
            page.keyboard.press("Shift+Enter")
            assert page.input_value("#question") == "and since 2025\n"
            page.keyboard.press("Enter")
            page.wait_for_function("() => document.querySelectorAll('.msg-assistant').length == 2")
            page.wait_for_function(
                "() => document.querySelectorAll('.msg-assistant[data-status=complete]').length == 2"
            )
            # The follow-up was rewritten with the thread's history; its window shows as a chip.
            second = page.locator(".msg-assistant").nth(1)
            assert second.locator(".chip-window .chip-label").inner_text() == "since 2025-01-01"
            assert "diffusion transformers since 2025" in second.locator(".query").inner_text()
            assert page.locator("#stop").is_hidden()

            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "chat-thread.png"), full_page=True)

            # Reload: the saved thread, server-rendered, with both answers and their sources.
            page.reload()
            assert page.locator(".msg-assistant").count() == 2
            assert "Diffusion transformers replace the U-Net" in page.inner_text(".messages")
            assert page.locator(".msg-assistant .sources .source").count() >= 2
            assert page.evaluate("window.__xss") is None
            page.goto(server.url + "/chat/")
            assert "diffusion transformers attention" in page.inner_text(".thread-list")
            assert dialogs == []

            # Deleting asks first (a data-confirm read by chat.js, not an inline handler);
            # dismissed, nothing is deleted.
            page.go_back()
            page.click(".thread-actions summary")
            page.click("button.danger")
            assert dialogs == ["Delete this chat?"]
            assert "/chat/" in page.url and page.locator(".msg-assistant").count() == 2
            for path in ("/search/?q=diffusion", "/papers/"):
                page.goto(server.url + path)
            page.goto(server.url + "/api/docs/")
            page.wait_for_selector(".swagger-ui .info")  # its script is a URL, not inline
            assert csp_errors == []

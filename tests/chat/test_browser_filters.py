"""The chat's progress and filter chips in real headless Chromium (the pattern of test_browser):
the stages show while the model is slow to start, every understood filter shows as a chip, and
editing or removing a chip re-asks the same question with the edited filters."""

import re

import pytest

from tests.chat.test_browser import ARTIFACTS, chromium  # noqa: F401 (a fixture)
from tests.fakes.openai_chat import FakeOpenAI, Reply
from tests.live_server import LiveServer

QUESTION = "diffusion models since 2023"
ANSWER = "Diffusion models now generate video [1] and high-resolution images [2]."

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def model_reply(body: dict) -> str:
    # Follow-up rewriting is not what this test is about: the question stands alone.
    return ANSWER if body.get("stream") else QUESTION


def answer_dates(answer) -> list[str]:
    return re.findall(r"\d{4}-\d{2}-\d{2}", " ".join(answer.locator(".source .meta").all_inner_texts()))


def test_stages_show_then_an_edited_chip_reasks_with_the_new_filters(
    catalogue, chromium, password  # noqa: F811
):
    with FakeOpenAI() as fake:
        # Two seconds before the first word: the page must say what it is doing meanwhile.
        fake.default = Reply(model_reply, tokens_per_second=40, first_token_delay=2.0)
        env = fake.server_env()
        with LiveServer(env=env) as server:
            page = chromium.new_page(viewport={"width": 1200, "height": 900})
            page.set_default_timeout(20_000)
            page.goto(server.url + "/accounts/signup/")
            page.fill("#id_username", "noether")
            page.fill("#id_password1", password)
            page.fill("#id_password2", password)
            page.click("form button[type=submit]")
            page.wait_for_url("**/chat/")
            page.fill("#new-chat-text", QUESTION)
            page.keyboard.press("Enter")
            page.wait_for_url("**/chat/*-*/")

            # While the model reads: the steps so far, the current one last.
            page.wait_for_selector('.stages li.current:has-text("Reading")')
            stages = page.locator(".stages li").all_inner_texts()
            assert stages[0] == "Understanding the question…"
            assert stages[1] == "Searching 8 papers…"  # the catalogue fixture's eight
            assert re.fullmatch(r"Reading \d+ papers?…", stages[2])
            first = page.locator(".msg-assistant").nth(0)
            assert first.locator(".chip-window .chip-label").inner_text() == "since 2023-01-01"
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "chat-stages-chips.png"), full_page=True)
            page.wait_for_selector('.msg-assistant[data-status="complete"]')
            assert page.locator(".stages").count() == 0  # progress gives way to the answer
            assert min(answer_dates(first)) >= "2023-01-01"

            # Change the window and add a category: the same question, asked again with them.
            first.locator(".chip-edit").click()
            form = first.locator(".filter-form")
            # Recency in words, the question's weight (0.3 for "since 2023") selected.
            recency = form.locator('select[name="recency_weight"]')
            assert "Newest first" in recency.locator("option").all_inner_texts()
            assert recency.input_value() == "0.3"
            assert recency.bounding_box()["width"] >= 120
            # Fixed slots: filling the fields moves none of them.
            boxes = [f.bounding_box() for f in form.locator("input, select").all()]
            form.locator('input[name="start"]').fill("2024-01-01")
            form.locator('input[name="categories"]').fill("cs.CV")
            form.locator('input[name="authors"]').fill("A Very Long Author Name, Another One")
            assert [f.bounding_box() for f in form.locator("input, select").all()] == boxes
            form.locator('input[name="authors"]').fill("")
            for width in (390, 1280):
                page.set_viewport_size({"width": width, "height": 900})
                form.scroll_into_view_if_needed()
                page.screenshot(path=str(ARTIFACTS / f"chat-chip-editor-{width}.png"))
            form.locator("button[type=submit]").click()
            page.wait_for_function(
                "() => document.querySelectorAll('.msg-assistant[data-status=complete]').length == 2"
            )
            second = page.locator(".msg-assistant").nth(1)
            assert page.locator(".msg-user .bubble").nth(1).inner_text() == QUESTION
            window = second.locator(".chip-window")
            assert window.locator(".chip-label").inner_text() == "since 2024-01-01"
            assert "chip-edited" in window.get_attribute("class")
            # Only what the user changed is marked (and sent): recency is still the question's.
            assert "chip-edited" not in second.locator(".chip-recency").get_attribute("class")
            assert second.locator(".chip-category .chip-label").inner_text() == "in cs.CV"
            assert answer_dates(second) and min(answer_dates(second)) >= "2024-01-01"
            assert "cs.CV" in second.locator(".sources").inner_text()

            # Remove the category chip: asked again without it, the window kept.
            second.locator(".chip-category .chip-remove").click()
            page.wait_for_function(
                "() => document.querySelectorAll('.msg-assistant[data-status=complete]').length == 3"
            )
            third = page.locator(".msg-assistant").nth(2)
            assert third.locator(".chip-category").count() == 0
            assert third.locator(".chip-window .chip-label").inner_text() == "since 2024-01-01"
            page.screenshot(path=str(ARTIFACTS / "chat-chips-edited.png"), full_page=True)

            # A reload renders the same chips from the saved answers.
            page.reload()
            answers = page.locator(".msg-assistant")
            assert answers.count() == 3
            assert answers.nth(0).locator(".chip-window").inner_text().startswith("since 2023-01-01")
            assert answers.nth(1).locator(".chip-category .chip-label").inner_text() == "in cs.CV"
            assert answers.nth(2).locator(".chip-category").count() == 0

            # A bad value is refused with the reason, and nothing is asked.
            answers.nth(2).locator(".chip-edit").click()
            answers.nth(2).locator('.filter-form input[name="arxiv_id"]').fill("not-a-paper")
            answers.nth(2).locator(".filter-form button[type=submit]").click()
            page.wait_for_selector("#chat-notice:has-text('not an arXiv id')")
            assert page.locator(".msg-assistant").count() == 3

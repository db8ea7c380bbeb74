"""What a reader is shown while an answer streams is what is saved and shown on reload.

Against a live daphne, with a real WebSocket client rebuilding the text from `token` offsets as
docs/WEBSOCKET.md tells clients to. The citation check used to run only once the answer was
complete: a model citing a source that does not exist ("[9]" of eight sources, or "[1]" when the
search found none) was shown the number while streaming and saved without it, which is why
`bench_chat concurrent --questions repeat` counted streamed = saved for 60 of 100 chats (its
windowed questions found no paper in the bench's catalogue, and the fake model cites [1]).
"""

import asyncio

import httpx
import pytest

from chat.models import Message
from tests.fakes.openai_chat import Reply
from tests.ops.client import Tab, login_cookie

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True), pytest.mark.timeout(90)]

# "[1, 9]" and "[12]" arrive split over chunks (the fake streams a word at a time: " [1," then
# " 9].") and point past the catalogue's eight papers.
INVENTED = (
    "Diffusion transformers replace the U-Net with a transformer [1, 9]. Distillation cuts "
    "sampling to four steps [12]. Scaling the transformer improves image quality [2]."
)
CHECKED = (
    "Diffusion transformers replace the U-Net with a transformer [1]. Distillation cuts "
    "sampling to four steps. Scaling the transformer improves image quality [2]."
)


def ask_over_a_socket(server, owner, password, thread, question: str):
    cookie = login_cookie(server.url, owner.username, password)

    async def scenario():
        tab = await Tab.open(server.ws_url, thread.pk, cookie, origin=server.url)
        await tab.ask(question)
        answer = await tab.answer()
        await tab.close()
        return answer

    answer = asyncio.run(scenario())
    row = Message.objects.get(pk=answer.message_id)
    shown = [e["text"] for e in answer.events if e["type"] == "token"]
    return answer, row, shown


def reloaded_page(server, owner, password, thread) -> str:
    cookie = login_cookie(server.url, owner.username, password)
    return httpx.get(f"{server.url}/chat/{thread.pk}/", headers={"Cookie": cookie}).text


def test_a_citation_of_no_source_is_never_shown_while_streaming(
    server, fake_llm, catalogue, owner, password, thread
):
    fake_llm.default = Reply(INVENTED, tokens_per_second=200)
    answer, row, shown = ask_over_a_socket(
        server, owner, password, thread, "diffusion transformers for images"
    )

    assert answer.final["type"] == "done" and answer.final["dropped_citations"] == [9, 12]
    assert answer.text == answer.final["content"] == row.content == CHECKED
    assert not any("9" in text or "12" in text for text in shown), shown
    page = reloaded_page(server, owner, password, thread)
    assert "four steps." in page and "[12]" not in page


def test_with_no_source_found_the_model_s_citation_is_not_streamed(
    server, fake_llm, catalogue, owner, password, thread
):
    # No paper of the catalogue is from before 1990: the model is asked with no sources.
    fake_llm.default = Reply(
        "Nothing in the catalogue covers this period [1].", tokens_per_second=200
    )
    answer, row, shown = ask_over_a_socket(
        server, owner, password, thread, "diffusion models before 1990"
    )

    assert answer.final["type"] == "done" and row.sources == []
    assert answer.text == row.content == "Nothing in the catalogue covers this period."
    assert "[1]" not in "".join(shown)


def test_an_answer_of_citation_numbers_only_is_not_shown_and_its_replacement_is(
    server, fake_llm, catalogue, owner, password, thread
):
    fake_llm.default = Reply("[1] [2] [3] [4]", tokens_per_second=200)
    answer, row, shown = ask_over_a_socket(
        server, owner, password, thread, "diffusion transformers for images"
    )

    assert row.backend == "extractive" and row.timings["fallback_code"] == "citations_only"
    assert answer.text == answer.final["content"] == row.content
    assert row.content.strip() and not row.content.startswith("[1] [2]")

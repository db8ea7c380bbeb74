"""Fault drills against the LLM server, over a real daphne process and real sockets.

The model (the fake OpenAI server) breaks in each way it does in production: an error event in
the middle of the stream (OpenAI's 500 after the response started), a dropped connection, a
stall longer than the timeout, a chunk that is not JSON, a 500 or a hang before any word. Each
drill checks what the user sees, what is saved, and that the same process answers the next
question normally.
"""

import asyncio

import httpx
import pytest

from chat.models import Message
from tests.fakes.openai_chat import BreakMidStream, Fail, Malformed, Reply, Slow, words
from tests.ops.client import Tab, login_cookie
from tests.ops.conftest import ANSWER, OPENAI_TIMEOUT, QUESTION

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]

PARTIAL_WORDS = 5
PARTIAL = "".join(words(ANSWER)[:PARTIAL_WORDS])


def drill(server, user, password, thread, then_normal: bool = True):
    """Ask once (the fake is scripted for this ask), then, on the same thread and socket, ask a
    normal question. Returns what the socket saw of both answers."""
    cookie = login_cookie(server.url, user.username, password)

    async def scenario():
        tab = await Tab.open(server.ws_url, thread.pk, cookie, origin=server.url)
        await tab.ask(QUESTION)
        faulty = await tab.answer()
        normal = None
        if then_normal:
            await tab.ask("And what about video generation with diffusion?")
            normal = await tab.answer()
        await tab.close()
        return faulty, normal

    return asyncio.run(scenario())


def assert_partial_text_kept(answer, code: str, partial: str = PARTIAL) -> Message:
    """The answer ended with an `error` naming `code`, the partial text is in the event and in
    the row, and the row is `failed` with the reason."""
    final = answer.final
    assert final["type"] == "error", (answer.kinds, answer.final)
    assert (final["code"], final["status"]) == (code, "failed")
    assert final["message"], "a sentence for the user"
    assert final["content"] == answer.text == partial
    row = Message.objects.get(pk=answer.message_id)
    assert (row.status, row.content) == (Message.Status.FAILED, partial)
    assert row.error == final["message"]
    return row


def assert_answered_normally(answer) -> None:
    assert answer.final["type"] == "done", (answer.kinds, answer.final)
    assert answer.final["status"] == "complete"
    assert answer.text == ANSWER
    row = Message.objects.get(pk=answer.message_id)
    assert (row.status, row.content, row.backend) == (Message.Status.COMPLETE, ANSWER, "openai")


@pytest.mark.parametrize(
    "how", ["error_event", "close"], ids=["500-error-event-mid-stream", "connection-dropped"]
)
def test_model_failing_mid_stream_keeps_the_partial_answer(
    server, fake_llm, catalogue, owner, password, thread, how
):
    fake_llm.script(BreakMidStream(ANSWER, after_chunks=PARTIAL_WORDS, how=how))
    faulty, normal = drill(server, owner, password, thread)
    assert_partial_text_kept(faulty, "llm_failed_mid_stream")
    assert_answered_normally(normal)


def test_model_stalling_mid_stream_times_out_and_keeps_the_partial_answer(
    server, fake_llm, catalogue, owner, password, thread
):
    # The first word comes at once, the second after longer than OPENAI_TIMEOUT.
    fake_llm.script(Reply(ANSWER, tokens_per_second=1 / (OPENAI_TIMEOUT + 1.5)))
    faulty, normal = drill(server, owner, password, thread)
    assert_partial_text_kept(faulty, "llm_failed_mid_stream", partial=words(ANSWER)[0])
    assert_answered_normally(normal)


def test_malformed_chunk_ends_the_answer_with_the_text_so_far(
    server, fake_llm, catalogue, owner, password, thread
):
    fake_llm.script(Malformed(text_before=PARTIAL, payload=b"data: {this is not json\n\n"))
    faulty, normal = drill(server, owner, password, thread)
    assert_partial_text_kept(faulty, "llm_bad_output")
    assert_answered_normally(normal)


@pytest.mark.parametrize(
    "failure, code",
    [(Fail(500), "llm_unavailable"), (Slow(seconds=OPENAI_TIMEOUT + 2), "llm_timeout")],
    ids=["500-before-first-token", "no-answer-within-timeout"],
)
def test_model_failing_before_the_first_word_is_replaced_by_the_extractive_fallback(
    server, fake_llm, catalogue, owner, password, thread, failure, code
):
    fake_llm.script(failure)
    fallback, normal = drill(server, owner, password, thread)
    final = fallback.final
    assert final["type"] == "done" and final["status"] == "complete", fallback.kinds
    assert (final["backend"], final["timings"]["fallback_from"]) == ("extractive", "openai")
    assert final["timings"]["fallback_code"] == code
    assert final["content"] and final["citations"], "the fallback quotes and cites the sources"
    row = Message.objects.get(pk=fallback.message_id)
    assert (row.status, row.backend, row.content) == ("complete", "extractive", final["content"])
    assert_answered_normally(normal)


def test_the_process_still_serves_pages_after_the_drills(server):
    assert httpx.get(server.url + "/healthz", timeout=10).status_code == 200

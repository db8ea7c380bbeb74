"""`bench_chat concurrent`: its fake answer is saved as an LLM answer, and its check compares what
each chat streamed, what `done` said and what the row holds."""

import pytest

from bench.chat_tally import fake_answer, tally
from chat.models import Message, Thread
from chat.pipeline.citations import only_citations
from tests.chat.conftest import catalogue, close_async_connections, fake_openai, slow_openai  # noqa: F401
from tests.chat.test_socket import events_until_end, open_socket
from tests.fakes.openai_chat import Reply

pytestmark = pytest.mark.django_db(transaction=True)


async def ask(owner, text):
    thread = await Thread.objects.acreate(owner=owner)
    comm = await open_socket(thread, owner)
    await comm.send_json_to({"type": "ask", "text": text})
    events = await events_until_end(comm)
    await comm.disconnect()
    answer = await Message.objects.aget(thread=thread, role="assistant")
    streamed = "".join(e["text"] for e in events if e["type"] == "token")
    result = {"thread": thread.pk, "text": streamed, "done_content": events[-1]["content"]}
    return result, answer


def test_the_old_bench_text_was_citations_only_and_the_new_one_is_an_answer():
    # "w0 w1 … [1]." has no word of two letters: the product replaced it by the composer's answer,
    # which is why the 100-chat run reported "saved complete 0/100".
    old = " ".join(f"w{i}" for i in range(59)) + " [1]."
    assert only_citations(old)
    text = fake_answer(60)
    assert not only_citations(text)
    assert len(text.split()) == 60 and text.endswith(" [1].")


@pytest.mark.asyncio
async def test_the_bench_answer_is_streamed_and_saved_as_the_llm_wrote_it(
    catalogue, owner, slow_openai  # noqa: F811
):
    text = fake_answer(20)
    slow_openai.default = Reply(text, tokens_per_second=400)
    result, answer = await ask(owner, "diffusion transformers")

    assert answer.backend == "openai" and "fallback_code" not in answer.timings
    assert answer.status == "complete" and answer.content == text
    assert result["text"] == result["done_content"] == text
    counts = tally([result], {result["thread"]: answer})
    assert (counts.done, counts.saved, counts.streamed) == (1, 1, 1)
    assert counts.by == {"openai": 1}


@pytest.mark.asyncio
async def test_tally_names_a_replaced_answer_and_counts_a_row_unlike_done_as_not_saved(
    catalogue, owner, slow_openai  # noqa: F811
):
    slow_openai.default = Reply("[1] [2] [3]", tokens_per_second=400)
    replaced, replaced_row = await ask(owner, "diffusion transformers")
    slow_openai.default = Reply(fake_answer(8), tokens_per_second=400)
    fine, fine_row = await ask(owner, "diffusion transformers")
    fine_row.content = "something else"  # as if the final save had not happened

    counts = tally(
        [replaced, fine, {"error": "no answer within 180 s"}],
        {replaced["thread"]: replaced_row, fine["thread"]: fine_row},
    )
    assert counts.chats == 3 and counts.done == 2
    # The composer's answer was saved as `done` sent it, and it is what was streamed: the
    # numbers alone were never shown (chat.pipeline.citations.CitationStream).
    assert counts.saved == 1 and counts.streamed == 1
    assert counts.by == {"extractive after citations_only": 1, "openai": 1, "no row": 1}

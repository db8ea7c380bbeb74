"""Every envelope the socket and the event stream send matches its schema in chat.events."""

import pytest

from chat import events
from chat.models import Message, Thread
from tests.chat.conftest import slow_reply
from tests.chat.test_socket import TIMEOUT, communicator, events_until_end

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def received(comm) -> list[dict]:
    """What the socket holds now, without waiting for more."""
    frames = []
    while not await comm.receive_nothing(timeout=0.2):
        frames.append(await comm.receive_json_from(timeout=TIMEOUT))
    return frames


async def test_every_envelope_of_an_answer_matches_its_schema(catalogue, owner, slow_openai):
    slow_openai.default = slow_reply(" ".join(f"part{i} [1]" for i in range(40)), 60)
    thread = await Thread.objects.acreate(owner=owner)
    first = await communicator(thread, owner)
    assert (await first.connect(timeout=TIMEOUT))[0]
    sent = [await first.receive_json_from(timeout=TIMEOUT)]  # ready
    for frame in ("{not json", '{"type": "dance"}', '{"type": "ask", "text": " "}',
                  '{"type": "ask", "text": "q", "filters": {"start": "May"}}',
                  '{"type": "stop"}', '{"type": "ping"}'):
        await first.send_to(text_data=frame)
        sent.append(await first.receive_json_from(timeout=TIMEOUT))

    await first.send_json_to(
        {"type": "ask", "text": "video diffusion", "filters": {"categories": ["cs.CV"]}}
    )
    while sent[-1]["type"] != "token":
        sent.append(await first.receive_json_from(timeout=TIMEOUT))
    await first.send_json_to({"type": "ask", "text": "and another"})  # busy
    late = await communicator(thread, owner)  # joins mid-answer: resume, ready, resume
    assert (await late.connect(timeout=TIMEOUT))[0]
    await first.send_json_to({"type": "stop"})
    sent += await events_until_end(first) + await events_until_end(late)
    sent += await received(first) + await received(late)
    await first.disconnect()
    await late.disconnect()

    # The answer ended once the stream's way, then as an error read back from its row.
    answer = await Message.objects.aget(thread=thread, role="assistant")
    sent.append(events.saved_final(answer))
    await Message.objects.filter(pk=answer.pk).aupdate(status="failed", error="Broken.")
    sent.append(events.saved_final(await Message.objects.aget(pk=answer.pk)))

    kinds = {event["type"] for event in sent}
    assert kinds == {"ready", "pong", "error", "start", "analysis", "stage", "sources", "token",
                     "resume", "done"}
    # The page shows the steps in order, as they happen.
    stages = [event["stage"] for event in sent if event["type"] == "stage"]
    assert stages[:4] == ["understanding", "searching", "reading", "writing"]
    analysis = next(event for event in sent if event["type"] == "analysis")
    assert analysis["filters"]["categories"] == ["cs.CV"]
    assert {"kind": "category", "label": "in cs.CV", "value": "cs.CV", "edited": True} in (
        analysis["chips"]
    )
    for event in sent:
        events.check(event)


async def test_a_stop_that_finds_a_dead_answer_says_interrupted(owner):
    thread = await Thread.objects.acreate(owner=owner)
    dead = await Message.objects.acreate(thread=thread, role="assistant", status="streaming")
    comm = await communicator(thread, owner)
    assert (await comm.connect(timeout=TIMEOUT))[0]
    sent = [await comm.receive_json_from(timeout=TIMEOUT) for _ in range(2)]  # resume, ready
    await Message.objects.filter(pk=dead.pk).aupdate(updated_at="2020-01-01T00:00:00Z")
    await comm.send_json_to({"type": "stop"})  # the answer's process is gone: failed, and said
    sent.append(await comm.receive_json_from(timeout=TIMEOUT))
    await comm.disconnect()
    assert [e["type"] for e in sent] == ["resume", "ready", "error"]
    assert sent[0]["user_message_id"] is None  # an answer without its question still resumes
    assert sent[-1] == {"type": "error", "code": "interrupted",
                        "message": "The answer was interrupted."}
    for event in sent:
        events.check(event)


@pytest.mark.parametrize(
    "event",
    [
        {"type": "pong", "extra": 1},
        {"type": "token", "message_id": "m", "offset": "0", "text": "x"},
        {"type": "start", "message_id": "m", "question": "q"},
        {"type": "whisper"},
        {"type": "error", "code": "internal_error", "message": "m", "message_id": "m"},
        {"type": "stage", "message_id": "m", "stage": "searching"},
        {"type": "analysis", "message_id": "m", "query": "q", "analysis": {}, "window": "",
         "filters": {"start": 2024}, "chips": []},
    ],
)
async def test_an_envelope_off_its_schema_is_caught(event):
    with pytest.raises(ValueError):
        events.check(event)


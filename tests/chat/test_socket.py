"""The thread socket over the real ASGI app (auth, origin check, routing, consumer, service,
pipeline, retrieval and the extractive backend), with the database really committed."""

import json

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from chat import service
from chat.events import check as check_event
from chat.lanes import SOCKET_LANES
from chat.models import Message, Thread
from flatuniverse.asgi import application
from tests.chat.conftest import session_cookie, slow_reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

TIMEOUT = 20


async def communicator(thread, user=None, origin=b"http://testserver"):
    headers = [(b"origin", origin)]
    if user is not None:
        headers.append((b"cookie", await sync_to_async(session_cookie)(user)))
    return WebsocketCommunicator(application, f"/ws/threads/{thread.pk}/", headers=headers)


async def open_socket(thread, user):
    comm = await communicator(thread, user)
    connected, _ = await comm.connect(timeout=TIMEOUT)
    assert connected
    ready = await comm.receive_json_from(timeout=TIMEOUT)
    assert ready["type"] == "ready"
    return comm


async def events_until_end(comm, message_id=None, timeout=TIMEOUT) -> list[dict]:
    """Every event up to and including the `done` or `error` that ends an answer (`timeout`:
    the longest wait for one event)."""
    events = []
    while True:
        event = await comm.receive_json_from(timeout=timeout)
        events.append(event)
        if event["type"] in ("done", "error") and event.get("message_id", message_id):
            return events


@pytest.fixture
def thread(owner):
    return Thread.objects.create(owner=owner)


async def test_ask_streams_analysis_sources_tokens_then_done_and_saves_rows(
    catalogue, owner, thread
):
    comm = await open_socket(thread, owner)
    await comm.send_json_to({"type": "ask", "text": "diffusion transformers since 2024"})
    events = await events_until_end(comm)
    await comm.disconnect()

    # Progress: the steps in order, each before what it leads to.
    kinds = [e["type"] if e["type"] != "stage" else e["stage"] for e in events]
    assert kinds[:7] == ["start", "understanding", "searching", "analysis", "sources", "reading",
                         "writing"]
    stages = [e for e in events if e["type"] == "stage"]
    assert stages[1]["detail"] == "Searching 8 papers…"
    assert stages[2]["detail"] == f"Reading {len(events[4]['sources'])} papers…"
    events = [e for e in events if e["type"] != "stage"]
    kinds = [e["type"] for e in events]
    assert kinds[:3] == ["start", "analysis", "sources"]
    assert kinds[-1] == "done" and set(kinds[3:-1]) == {"token"}
    start, analysis, sources, done = events[0], events[1], events[2], events[-1]
    assert start["question"] == "diffusion transformers since 2024"
    assert analysis["query"] and isinstance(analysis["analysis"], dict)
    assert analysis["window"] == "since 2024-01-01"  # worded by chat/window.py; chat.js shows it
    cards = sources["sources"]
    assert cards and cards[0]["number"] == 1
    assert {"title", "authors", "published", "primary_category", "url"} <= set(cards[0])
    # Tokens arrive in order and add up to the raw answer; done carries the checked text.
    text = ""
    for token in events[3:-1]:
        assert token["offset"] == len(text)
        text += token["text"]
    assert text.strip()
    assert done["status"] == "complete" and done["backend"] == "extractive"
    assert all(1 <= n <= len(cards) for n in done["citations"])
    assert done["timings"]["ttft_ms"] <= done["timings"]["total_ms"]

    rows = await sync(lambda: list(thread.messages.order_by("created_at")))
    assert [m.role for m in rows] == ["user", "assistant"]
    user_message, answer = rows
    assert user_message.content == "diffusion transformers since 2024"
    assert answer.status == "complete" and answer.content == done["content"]
    assert answer.sources == cards and answer.citations == done["citations"]
    assert answer.query == analysis["query"] and answer.analysis == analysis["analysis"]
    assert answer.time_to_first_token_ms is not None and answer.total_ms is not None
    assert answer.backend == "extractive" and answer.completion_tokens
    await sync(thread.refresh_from_db)
    assert thread.title == "diffusion transformers since 2024"


async def test_stranger_cannot_open_thread_socket(owner, stranger, thread):
    comm = await communicator(thread, stranger)
    connected, _ = await comm.connect(timeout=TIMEOUT)
    assert not connected
    assert await comm.receive_nothing()


async def test_anonymous_socket_is_refused(thread):
    comm = await communicator(thread)
    connected, _ = await comm.connect(timeout=TIMEOUT)
    assert not connected


async def test_foreign_origin_is_refused(owner, thread):
    comm = await communicator(thread, owner, origin=b"http://evil.example")
    connected, _ = await comm.connect(timeout=TIMEOUT)
    assert not connected


async def test_closing_the_socket_mid_answer_still_saves_the_full_answer(
    catalogue, owner, thread, slow_openai
):
    full = "Video diffusion models keep frames consistent with temporal attention [1]. " * 3
    slow_openai.default = slow_reply(full, tokens_per_second=60)
    comm = await open_socket(thread, owner)
    await comm.send_json_to({"type": "ask", "text": "video diffusion"})
    while (await comm.receive_json_from(timeout=TIMEOUT))["type"] != "token":
        pass
    await comm.disconnect()  # the tab is closed after the first token

    await service.wait_for_running_answers(timeout=TIMEOUT)
    answer = await Message.objects.aget(thread=thread, role="assistant")
    assert answer.status == "complete"
    assert answer.content == full.strip() or answer.content == full
    assert answer.backend == "openai"


async def test_stop_ends_the_answer_and_keeps_what_was_written(
    catalogue, owner, thread, slow_openai
):
    full = " ".join(f"word{i}" for i in range(200))
    slow_openai.default = slow_reply(full, tokens_per_second=40)
    comm = await open_socket(thread, owner)
    await comm.send_json_to({"type": "ask", "text": "video diffusion"})
    while (await comm.receive_json_from(timeout=TIMEOUT))["type"] != "token":
        pass
    await comm.send_json_to({"type": "stop"})
    events = await events_until_end(comm)
    await comm.disconnect()

    done = events[-1]
    assert done["type"] == "done" and done["status"] == "stopped"
    answer = await Message.objects.aget(thread=thread, role="assistant")
    assert answer.status == "stopped"
    assert answer.content.startswith("word0") and len(answer.content) < len(full)
    assert answer.content == done["content"]


async def test_second_socket_on_the_thread_sees_the_same_stream(catalogue, owner, thread):
    first = await open_socket(thread, owner)
    second = await open_socket(thread, owner)
    await first.send_json_to({"type": "ask", "text": "retrieval-augmented generation"})
    seen_first = await events_until_end(first)
    seen_second = await events_until_end(second)
    await first.disconnect()
    await second.disconnect()
    assert seen_first == seen_second
    kinds = [e["type"] for e in seen_second if e["type"] != "stage"]
    assert kinds[:3] == ["start", "analysis", "sources"]


async def test_socket_joining_mid_answer_resumes_with_the_text_so_far(
    catalogue, owner, thread, slow_openai
):
    full = " ".join(f"part{i}" for i in range(60))
    slow_openai.default = slow_reply(full, tokens_per_second=60)
    first = await open_socket(thread, owner)
    await first.send_json_to({"type": "ask", "text": "graph neural networks"})
    tokens = 0
    while tokens < 5:
        tokens += (await first.receive_json_from(timeout=TIMEOUT))["type"] == "token"

    late = await communicator(thread, owner)
    assert (await late.connect(timeout=TIMEOUT))[0]
    text = ""
    while True:
        event = await late.receive_json_from(timeout=TIMEOUT)
        if event["type"] == "resume":
            assert event["status"] == "streaming" and event["sources"]
            text = event["content"] if len(event["content"]) > len(text) else text
        elif event["type"] == "token":
            if event["offset"] <= len(text):
                text += event["text"][len(text) - event["offset"]:]
        elif event["type"] == "done":
            break
    await first.disconnect()
    await late.disconnect()
    assert text == full
    assert event["content"] == full


async def test_question_longer_than_the_limit_is_refused(owner, thread, settings):
    settings.CHAT_MAX_QUESTION_CHARS = 50
    comm = await open_socket(thread, owner)
    await comm.send_json_to({"type": "ask", "text": "x" * 51})
    error = await comm.receive_json_from(timeout=TIMEOUT)
    await comm.disconnect()
    assert error["type"] == "error" and error["code"] == "question_too_long"
    assert error["limit"] == 50
    assert not await Message.objects.filter(thread=thread).aexists()


async def test_second_ask_while_streaming_is_refused(catalogue, owner, thread, slow_openai):
    slow_openai.default = slow_reply("slow " * 40, tokens_per_second=40)
    comm = await open_socket(thread, owner)
    await comm.send_json_to({"type": "ask", "text": "video diffusion"})
    assert (await comm.receive_json_from(timeout=TIMEOUT))["type"] == "start"
    await comm.send_json_to({"type": "ask", "text": "and another one"})
    event = await comm.receive_json_from(timeout=TIMEOUT)
    while event["type"] != "error":
        event = await comm.receive_json_from(timeout=TIMEOUT)
    assert event["code"] == "busy" and "message_id" not in event
    await comm.send_json_to({"type": "stop"})
    await events_until_end(comm)
    await comm.disconnect()
    assert await Message.objects.filter(thread=thread, role="user").acount() == 1


async def test_rate_limit_counts_a_users_questions_across_threads(catalogue, owner, settings):
    settings.CHAT_RATE_LIMIT_PER_MINUTE = 2
    threads = [await Thread.objects.acreate(owner=owner) for _ in range(3)]
    for thread in threads[:2]:
        comm = await open_socket(thread, owner)
        await comm.send_json_to({"type": "ask", "text": "diffusion models"})
        assert (await events_until_end(comm))[-1]["type"] == "done"
        await comm.disconnect()

    comm = await open_socket(threads[2], owner)
    await comm.send_json_to({"type": "ask", "text": "diffusion models"})
    error = await comm.receive_json_from(timeout=TIMEOUT)
    await comm.disconnect()
    assert error["code"] == "rate_limited" and 1 <= error["retry_after"] <= 60
    assert not await Message.objects.filter(thread=threads[2]).aexists()


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ("{not json", "invalid_json"),
        ("[1, 2]", "invalid_message"),
        ('{"text": "no type"}', "invalid_message"),
        ('{"type": "dance"}', "unknown_type"),
        ('{"type": "ask", "text": 42}', "invalid_question"),
        ('{"type": "ask", "text": "   "}', "empty_question"),
        ('{"type": "stop"}', "not_streaming"),
    ],
)
async def test_bad_frames_get_a_clear_error_and_the_socket_stays_usable(
    owner, thread, frame, code
):
    comm = await open_socket(thread, owner)
    await comm.send_to(text_data=frame)
    error = await comm.receive_json_from(timeout=TIMEOUT)
    assert error["type"] == "error" and error["code"] == code and error["message"]
    await comm.send_json_to({"type": "ping"})
    assert await comm.receive_json_from(timeout=TIMEOUT) == {"type": "pong"}
    await comm.disconnect()


async def test_huge_and_binary_frames_are_refused(owner, thread, settings):
    settings.CHAT_MAX_QUESTION_CHARS = 100
    comm = await open_socket(thread, owner)
    await comm.send_to(text_data=json.dumps({"type": "ask", "text": "y" * 5000}))
    assert (await comm.receive_json_from(timeout=TIMEOUT))["code"] == "frame_too_large"
    await comm.send_to(bytes_data=b"\x00\x01")
    assert (await comm.receive_json_from(timeout=TIMEOUT))["code"] == "binary_not_supported"
    await comm.disconnect()


async def test_stale_streaming_answer_does_not_lock_the_thread(catalogue, owner, thread):
    dead = await Message.objects.acreate(thread=thread, role="assistant", status="streaming")
    await Message.objects.filter(pk=dead.pk).aupdate(updated_at="2020-01-01T00:00:00Z")
    comm = await open_socket(thread, owner)  # the stale row is resumed from the database...
    await comm.send_json_to({"type": "ask", "text": "diffusion models"})
    events = await events_until_end(comm)
    await comm.disconnect()
    assert events[-1]["type"] == "done"
    await sync(dead.refresh_from_db)
    assert dead.status == "failed" and "Interrupted" in dead.error


async def sync(fn):
    return await sync_to_async(fn)()


async def test_sync_reports_the_answer_in_progress_and_nothing_when_idle(
    catalogue, owner, thread, slow_openai
):
    slow_openai.default = slow_reply("slow " * 40, tokens_per_second=40)
    comm = await open_socket(thread, owner)
    await comm.send_json_to({"type": "sync"})
    assert await comm.receive_json_from(timeout=TIMEOUT) == {
        "type": "ready", "thread_id": str(thread.pk), "streaming": None,
    }
    await comm.send_json_to({"type": "ask", "text": "video diffusion"})
    start = await comm.receive_json_from(timeout=TIMEOUT)
    while (await comm.receive_json_from(timeout=TIMEOUT))["type"] != "token":
        pass
    await comm.send_json_to({"type": "sync"})
    seen = []
    while not seen or seen[-1]["type"] != "ready":
        seen.append(await comm.receive_json_from(timeout=TIMEOUT))
    resume = next(e for e in seen if e["type"] == "resume")
    assert resume["message_id"] == start["message_id"] and resume["question"] == "video diffusion"
    assert seen[-1]["streaming"] == start["message_id"]
    await comm.send_json_to({"type": "stop"})
    await events_until_end(comm)
    await comm.disconnect()


async def test_stop_before_the_first_token_keeps_an_empty_stopped_answer(
    catalogue, owner, thread, slow_openai
):
    from tests.fakes.openai_chat import Reply

    slow_openai.default = Reply("never shown", first_token_delay=5)
    comm = await open_socket(thread, owner)
    await comm.send_json_to({"type": "ask", "text": "video diffusion"})
    while (await comm.receive_json_from(timeout=TIMEOUT))["type"] != "sources":
        pass
    await comm.send_json_to({"type": "stop"})
    events = await events_until_end(comm)
    await comm.disconnect()

    # The model was still reading (the last step shown); it never started writing.
    assert [e.get("stage") or e["type"] for e in events] == ["reading", "done"]
    assert events[-1]["status"] == "stopped" and events[-1]["content"] == ""
    answer = await Message.objects.aget(thread=thread, role="assistant")
    assert answer.status == "stopped" and answer.content == "" and answer.sources


async def test_shutdown_saves_the_running_answer_as_stopped_with_all_its_text(
    catalogue, owner, thread, slow_openai
):
    slow_openai.default = slow_reply("word " * 200, tokens_per_second=40)
    comm = await open_socket(thread, owner)
    await comm.send_json_to({"type": "ask", "text": "video diffusion"})
    text = ""
    while len(text) < 30:  # a few tokens, well before the first periodic save
        event = await comm.receive_json_from(timeout=TIMEOUT)
        if event["type"] == "token":
            text = text[: event["offset"]] + event["text"]
    await service.stop_running_answers(timeout=TIMEOUT)
    await comm.disconnect()
    answer = await Message.objects.aget(thread=thread, role="assistant")
    assert answer.status == "stopped"
    assert len(answer.content) >= len(text.strip()) and answer.content.startswith(text.strip())


# --- Who is on the other end: sessions that end, too many sockets, floods (issue #13) ----------
async def open_with(thread, cookie: bytes):
    comm = WebsocketCommunicator(
        application, f"/ws/threads/{thread.pk}/",
        headers=[(b"origin", b"http://testserver"), (b"cookie", cookie)],
    )
    connected, _ = await comm.connect(timeout=TIMEOUT)
    assert connected
    assert (await comm.receive_json_from(timeout=TIMEOUT))["type"] == "ready"
    return comm


async def closed_signed_out(comm) -> None:
    """The socket's last frame says why, then it closes with 4401."""
    assert await comm.receive_json_from(timeout=TIMEOUT) == {
        "type": "error", "code": "signed_out",
        "message": "You are signed out; sign in again to go on with this chat.",
    }
    assert await comm.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4401}


def logged_in_django_client(user):
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client


def cookie_of(client) -> bytes:
    from django.conf import settings as django_settings

    name = django_settings.SESSION_COOKIE_NAME
    return f"{name}={client.cookies[name].value}".encode()


async def test_logging_out_closes_the_sockets_of_that_session_only(owner, thread):
    this_tab = await sync_to_async(logged_in_django_client)(owner)
    other_device = await sync_to_async(logged_in_django_client)(owner)
    comm = await open_with(thread, cookie_of(this_tab))
    elsewhere = await open_with(thread, cookie_of(other_device))
    response = await sync_to_async(this_tab.post)("/accounts/logout/")
    assert response.status_code == 302
    await closed_signed_out(comm)
    # The other device's session is still valid: its socket goes on.
    await elsewhere.send_json_to({"type": "ping"})
    assert await elsewhere.receive_json_from(timeout=TIMEOUT) == {"type": "pong"}
    await elsewhere.disconnect()


async def test_a_password_change_closes_the_sockets_of_other_sessions(owner, thread, password):
    changer = await sync_to_async(logged_in_django_client)(owner)
    comm = await open_socket(thread, owner)  # another session
    response = await sync_to_async(changer.post)(
        "/accounts/password_change/",
        {"old_password": password, "new_password1": "N3w-passw0rd!x", "new_password2": "N3w-passw0rd!x"},
    )
    assert response.status_code == 302
    await closed_signed_out(comm)


async def test_deactivating_the_user_closes_their_sockets(owner, thread):
    comm = await open_socket(thread, owner)
    owner.is_active = False
    await owner.asave()
    await closed_signed_out(comm)


async def test_an_ask_from_a_session_ended_without_notice_is_refused(owner, thread):
    """A change the socket was not told about (a bulk update, another process without a shared
    channel layer) is caught by the check before each ask."""
    comm = await open_socket(thread, owner)
    await type(owner).objects.filter(pk=owner.pk).aupdate(is_active=False)
    await comm.send_json_to({"type": "ask", "text": "diffusion models"})
    await closed_signed_out(comm)
    assert not await Message.objects.filter(thread=thread).aexists()


async def test_a_user_gets_at_most_their_share_of_sockets(owner, thread, settings):
    settings.WS_MAX_SOCKETS_PER_USER = 2
    first, second = await open_socket(thread, owner), await open_socket(thread, owner)
    third = await communicator(thread, owner)
    connected, _ = await third.connect(timeout=TIMEOUT)
    assert connected, "accepted only to be told why"
    refusal = await third.receive_json_from(timeout=TIMEOUT)
    assert refusal["code"] == "too_many_sockets" and refusal["limit"] == 2
    assert await third.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4429}
    await first.disconnect()
    again = await open_socket(thread, owner)  # a closed socket frees its place
    await again.disconnect()
    await second.disconnect()


async def test_control_frames_beyond_the_allowance_are_refused(owner, thread, settings):
    settings.WS_CONTROL_BURST = 3
    settings.WS_CONTROL_PER_SECOND = 0.01
    comm = await open_socket(thread, owner)
    for _ in range(3):
        await comm.send_json_to({"type": "sync"})
        assert (await comm.receive_json_from(timeout=TIMEOUT))["type"] == "ready"
    for kind in ("sync", "ping", "stop", "sync"):
        await comm.send_json_to({"type": kind})
        refusal = await comm.receive_json_from(timeout=TIMEOUT)
        assert refusal["code"] == "rate_limited" and refusal["retry_after"] >= 1
        check_event(refusal)
    await comm.disconnect()


async def test_token_frames_reach_the_socket_without_a_trip_to_the_database_thread(
    owner, thread, monkeypatch
):
    # Channels closes old database connections on its one sync thread before every handler; a
    # token frame's handler reads no database, and 100 streaming sockets made that round trip
    # ~20 times a second each (docs/BENCHMARKS.md, "Cutting the answer path's CPU").
    import uuid

    from channels import consumer as channels_consumer

    from chat import events

    trips = []
    close = channels_consumer.aclose_old_connections

    async def counted():
        trips.append(1)
        await close()

    monkeypatch.setattr(channels_consumer, "aclose_old_connections", counted)
    comm = await open_socket(thread, owner)
    before = len(trips)
    message_id = uuid.uuid4()
    for offset in range(30):
        await events.publish(thread.pk, events.token(message_id, offset, "w"))
    frames = [await comm.receive_json_from(timeout=TIMEOUT) for _ in range(30)]
    await comm.send_json_to({"type": "ping"})  # a frame from the client still gets one
    assert (await comm.receive_json_from(timeout=TIMEOUT))["type"] == "pong"
    after = len(trips)
    await comm.disconnect()

    assert [f["offset"] for f in frames] == list(range(30))
    assert after - before == 1



async def test_handshakes_find_the_user_on_one_kept_database_connection(owner, thread, monkeypatch):
    # Channels' AuthMiddleware looked the user up through database_sync_to_async, which closed
    # its connection after each call (CONN_MAX_AGE 0): every socket opened started a PostgreSQL
    # backend, 13% of the server's CPU in a burst of new chats (docs/BENCHMARKS.md, session 9).
    from django.contrib.auth.backends import ModelBackend
    from django.db import connection

    backends = []
    get_user = ModelBackend.get_user

    def recorded(self, user_id):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backends.append(cursor.fetchone()[0])
        return get_user(self, user_id)

    monkeypatch.setattr(ModelBackend, "get_user", recorded)
    for _ in range(6):
        comm = await open_socket(thread, owner)  # still the owner: authenticated as before
        await comm.disconnect()
    # Kept connections: at most one per socket lane, not one per handshake.
    assert len(backends) == 6 and len(set(backends)) <= SOCKET_LANES < 6


async def test_the_socket_never_waits_behind_an_answer_save(owner, thread):
    # The handshake's reads and the session check before each frame have lanes of their own:
    # on the write lane, in a burst of 100 new chats, the check before each ask waited behind
    # ~400 answers' saves (docs/BENCHMARKS.md, session 11). Here a save holds the write lane.
    import asyncio
    import threading

    from chat.lanes import write_lane

    holding, release = threading.Event(), threading.Event()

    def slow_save():
        holding.set()
        release.wait(30)

    save = asyncio.ensure_future(write_lane.run(slow_save))
    try:
        while not holding.is_set():
            await asyncio.sleep(0.01)
        comm = await communicator(thread, owner)
        connected, _ = await comm.connect(timeout=5)  # the user's look-up, ownership
        assert connected
        assert (await comm.receive_json_from(timeout=5))["type"] == "ready"  # the saved state
        await comm.send_json_to({"type": "sync"})  # the session check, then the state again
        assert (await comm.receive_json_from(timeout=5))["type"] == "ready"
        await comm.disconnect()
        assert not save.done()
    finally:
        release.set()
        await save


async def test_an_ask_is_checked_and_saved_without_waiting_for_a_socket_lane(
    catalogue, owner, thread
):
    # The session check before an ask runs with its turn, in one job on a search lane
    # (chat.turns.create_turn): an ask queued for a socket lane and then for a search lane
    # (docs/BENCHMARKS.md, session 13). Here every socket lane is held.
    import asyncio
    import threading

    from chat.lanes import socket_lanes

    comm = await open_socket(thread, owner)
    holding, release = threading.Semaphore(0), threading.Event()

    def slow_read():
        holding.release()
        release.wait(30)

    reads = [asyncio.ensure_future(socket_lanes.run(slow_read)) for _ in range(SOCKET_LANES)]
    try:
        for _ in range(SOCKET_LANES):
            while not holding.acquire(blocking=False):
                await asyncio.sleep(0.01)
        await comm.send_json_to({"type": "ask", "text": "diffusion transformers"})
        assert (await comm.receive_json_from(timeout=5))["type"] == "start"
        assert not any(read.done() for read in reads)
    finally:
        release.set()
        await asyncio.gather(*reads)
    assert (await events_until_end(comm))[-1]["type"] == "done"
    await comm.disconnect()

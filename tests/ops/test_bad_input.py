"""Bad input everywhere, against a live daphne: clear refusals, never a 500, nothing lost.

A 1 MB question, invalid UTF-8, JSON bombs (deep nesting, huge arrays), thread ids that are not
UUIDs, over the WebSocket, the API and the pages. After all of it the thread still holds exactly
what it held, the socket still answers, and the server log has no traceback.
"""

import asyncio
import json

import httpx
import pytest
from rest_framework.authtoken.models import Token
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from chat.models import Message, Thread
from tests.ops.client import Tab, logged_in_client, login_cookie
from tests.ops.conftest import ANSWER

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]

MEGABYTE_QUESTION = "why " * 250_000  # 1 MB; daphne itself drops frames over 1 MiB
DEEP_JSON = "[" * 12_000 + "]" * 12_000  # under the socket's frame limit, over any recursion limit
NOT_UUIDS = ["123", "not-a-uuid", "00000000-0000-0000-0000-00000000000g", "%00", "..%2F..%2Fetc"]


@pytest.fixture
def saved_turn(thread):
    """The thread already holds one answered question: bad input must leave it as it is."""
    Message.objects.create(thread=thread, role="user", content="A fine question?")
    Message.objects.create(
        thread=thread, role="assistant", status="complete", content=ANSWER, backend="openai"
    )
    return thread


def thread_contents(thread) -> list[tuple]:
    return list(
        Message.objects.filter(thread=thread)
        .order_by("created_at")
        .values_list("role", "status", "content")
    )


@pytest.fixture
def api(server, owner):
    token = Token.objects.create(user=owner)
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Token {token.key}"}, timeout=30
    ) as client:
        yield client


# --- The WebSocket ---------------------------------------------------------------------------
def test_socket_refuses_bad_frames_and_stays_usable(server, owner, password, saved_turn):
    before = thread_contents(saved_turn)
    cookie = login_cookie(server.url, owner.username, password)

    async def scenario():
        tab = await Tab.open(server.ws_url, saved_turn.pk, cookie, origin=server.url)
        codes = {}
        frames = {
            "megabyte_question": json.dumps({"type": "ask", "text": MEGABYTE_QUESTION}),
            "deep_json": DEEP_JSON,
            "deep_json_in_an_ask": '{"type": "ask", "text": ' + DEEP_JSON + "}",
            "huge_array": json.dumps({"type": "ask", "text": [0] * 3000}),
        "megabyte_of_anything": "[" + "0," * 500_000 + "0]",
            "not_an_object": json.dumps([1, 2, 3]),
        }
        for name, frame in frames.items():
            await tab.ws.send(frame)
            codes[name] = (await tab.refusal())["code"]
        await tab.ws.send(b"\x00\xff binary frame")
        codes["binary"] = (await tab.refusal())["code"]
        await tab.send({"type": "ping"})
        pong = await tab.next_event()
        await tab.close()
        return codes, pong

    codes, pong = asyncio.run(scenario())
    assert codes == {
        "megabyte_question": "frame_too_large",
        "deep_json": "invalid_json",
        "deep_json_in_an_ask": "invalid_json",
        "huge_array": "invalid_question",
        "megabyte_of_anything": "frame_too_large",
        "not_an_object": "invalid_message",
        "binary": "binary_not_supported",
    }
    assert pong == {"type": "pong"}, "the socket is still open and served"
    assert thread_contents(saved_turn) == before


@pytest.mark.parametrize(
    "frame",
    [b'{"type": "ask", "text": "\xff\xfe"}', b"x" * (1024 * 1024 + 1)],
    ids=["invalid-utf8-text-frame", "over-daphnes-1MiB-limit"],
)
def test_frames_the_protocol_forbids_fail_only_that_socket(
    server, owner, password, saved_turn, frame
):
    """A text frame must be UTF-8 (RFC 6455), and daphne takes at most 1 MiB a message: the
    server (autobahn) fails that connection before anything reaches the app. The next socket
    works and nothing changed."""
    before = thread_contents(saved_turn)
    cookie = login_cookie(server.url, owner.username, password)

    async def scenario():
        tab = await Tab.open(server.ws_url, saved_turn.pk, cookie, origin=server.url)
        await tab.ws.send(frame, text=True)
        with pytest.raises(ConnectionClosed):
            await tab.next_event()
        again = await Tab.open(server.ws_url, saved_turn.pk, cookie, origin=server.url)
        await again.send({"type": "ping"})
        pong = await again.next_event()
        await again.close()
        return pong

    assert asyncio.run(scenario()) == {"type": "pong"}
    assert thread_contents(saved_turn) == before


def test_socket_to_a_thread_id_that_is_not_a_uuid_is_refused(server, owner, password):
    cookie = login_cookie(server.url, owner.username, password)

    async def status(thread_id) -> int:
        with pytest.raises(InvalidStatus) as refused:
            await connect(
                f"{server.ws_url}/ws/threads/{thread_id}/", origin=server.url,
                additional_headers={"Cookie": cookie}, open_timeout=20,
            )
        return refused.value.response.status_code

    async def scenario():
        return {thread_id: await status(thread_id) for thread_id in NOT_UUIDS}

    assert asyncio.run(scenario()) == dict.fromkeys(NOT_UUIDS, 403), "refused like a stranger's"


# --- The API ---------------------------------------------------------------------------------
def test_api_refuses_a_megabyte_question_and_saves_nothing(api, saved_turn):
    before = thread_contents(saved_turn)
    response = api.post(
        f"/api/threads/{saved_turn.pk}/messages/", json={"text": MEGABYTE_QUESTION}
    )
    assert response.status_code == 400, response.text[:300]
    assert response.json()["error"]["code"] == "invalid"
    assert "text" in response.json()["error"]["fields"]
    assert thread_contents(saved_turn) == before


@pytest.mark.parametrize(
    "body",
    [
        b'{"text": "caf\xe9 au lait?"}',  # Latin-1, not UTF-8
        b'{"text": "\xff\xfe\xfd"}',
        b"\xef\xbb\xbf\xff",
    ],
    ids=["latin1", "garbage", "bom-then-garbage"],
)
def test_api_refuses_invalid_utf8_bodies(api, saved_turn, body):
    before = thread_contents(saved_turn)
    response = api.post(
        f"/api/threads/{saved_turn.pk}/messages/",
        content=body, headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text[:300]
    assert response.json()["error"]["code"] == "parse_error"
    assert thread_contents(saved_turn) == before


@pytest.mark.parametrize(
    "body", [DEEP_JSON, '{"text": ' + DEEP_JSON + "}", json.dumps({"text": [0] * 200_000})],
    ids=["deep-array", "deep-in-text", "huge-array"],
)
def test_api_refuses_json_bombs(api, saved_turn, body):
    before = thread_contents(saved_turn)
    response = api.post(
        f"/api/threads/{saved_turn.pk}/messages/",
        content=body.encode(), headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text[:300]
    assert response.json()["error"]["code"] in ("parse_error", "invalid")
    assert thread_contents(saved_turn) == before


def test_api_refuses_a_thread_title_that_is_a_json_bomb(api, owner):
    response = api.post(
        "/api/threads/", content=('{"title": ' + DEEP_JSON + "}").encode(),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert not Thread.objects.filter(owner=owner).exists()


def test_api_thread_id_that_is_not_a_uuid_is_a_json_404(api):
    answers = {}
    for thread_id in NOT_UUIDS:
        for method, suffix in [("GET", ""), ("GET", "messages/"), ("POST", "messages/"),
                               ("DELETE", "")]:
            response = api.request(
                method, f"/api/threads/{thread_id}/{suffix}", json={"text": "hello?"}
            )
            answers[(method, thread_id, suffix)] = (
                response.status_code, response.json()["error"]["code"]
            )
    assert set(answers.values()) == {(404, "not_found")}, answers


# --- The pages -------------------------------------------------------------------------------
def test_pages_with_a_thread_id_that_is_not_a_uuid_are_404(server, owner, password):
    with logged_in_client(server.url, owner.username, password) as http:
        statuses = {thread_id: http.get(f"/chat/{thread_id}/").status_code
                    for thread_id in NOT_UUIDS}
    assert statuses == dict.fromkeys(NOT_UUIDS, 404)


def test_new_chat_form_with_invalid_utf8_and_a_megabyte_question(server, owner, password):
    """The form decodes what it can (bad bytes become U+FFFD) and refuses an overlong question
    without creating a thread."""
    with logged_in_client(server.url, owner.username, password) as http:
        headers = {"Referer": server.url + "/chat/", "X-CSRFToken": http.cookies["csrftoken"],
                   "Content-Type": "application/x-www-form-urlencoded"}
        huge = http.post("/chat/new/", content=b"text=" + b"why+" * (1024 * 1024 // 4),
                         headers=headers)
        assert (huge.status_code, huge.headers["location"]) == (302, "/chat/")
        assert not Thread.objects.filter(owner=owner).exists()
        garbled = http.post("/chat/new/", content=b"text=caf\xe9+%FF%FE?", headers=headers)
    assert garbled.status_code == 302, garbled.status_code
    title = Thread.objects.get(owner=owner).title
    assert title.startswith("caf") and "\ufffd" in title, title


def test_the_socket_still_answers_after_all_of_it(server, owner, password, thread, catalogue):
    cookie = login_cookie(server.url, owner.username, password)

    async def scenario():
        tab = await Tab.open(server.ws_url, thread.pk, cookie, origin=server.url)
        await tab.ask("diffusion transformers for images")
        answer = await tab.answer()
        await tab.close()
        return answer

    answer = asyncio.run(scenario())
    assert answer.final["type"] == "done" and answer.text == ANSWER

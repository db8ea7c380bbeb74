"""Two daphne processes sharing Redis: a socket on one sees the answer another process runs, and
its `stop` reaches that process through the channel layer. Skips without REDIS_URL."""

import asyncio
import os
import uuid

import pytest
from django.conf import settings

from chat.models import Message, Thread
from tests.chat.conftest import session_cookie
from tests.fake_openai import FakeOpenAI, Reply
from tests.live_server import LiveServer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
TIMEOUT = 30


@pytest.fixture
def redis_url():
    url = os.environ.get("REDIS_URL")
    if not url:
        pytest.skip("needs REDIS_URL (a Redis shared by the two server processes)")
    return url


async def receive(ws):
    return await ws.receive_json(timeout=TIMEOUT)


async def until(ws, kind):
    events = []
    while True:
        event = await receive(ws)
        events.append(event)
        if event["type"] == kind:
            return events


async def scenario(first, second, thread, cookie):
    import aiohttp

    def headers(server):
        return {"Origin": server.url, "Cookie": cookie}

    path = f"/ws/threads/{thread.pk}/"
    async with aiohttp.ClientSession() as session:
        async with (
            session.ws_connect(first.ws_url + path, headers=headers(first)) as asker,
            session.ws_connect(second.ws_url + path, headers=headers(second)) as watcher,
        ):
            await until(asker, "ready")
            await until(watcher, "ready")
            await asker.send_json({"type": "ask", "text": "video diffusion"})
            seen = await until(watcher, "token")  # the answer runs on `first`
            assert [e["type"] for e in seen][:3] == ["start", "analysis", "sources"]
            await watcher.send_json({"type": "stop"})  # ...and is stopped from `second`
            done_watcher = (await until(watcher, "done"))[-1]
            done_asker = (await until(asker, "done"))[-1]
    return done_watcher, done_asker


def test_socket_on_another_process_sees_the_stream_and_can_stop_it(
    catalogue, owner, redis_url
):
    thread = Thread.objects.create(owner=owner)
    cookie = session_cookie(owner).decode()
    full = " ".join(f"w{i}" for i in range(300))
    with FakeOpenAI() as fake:
        fake.default = Reply(full, tokens_per_second=30)
        env = {
            "REDIS_URL": redis_url,
            "CHANNELS_PREFIX": f"fu-test-{uuid.uuid4().hex[:8]}",  # other runs share this Redis
            "EMBEDDING_BACKEND": "hashing",
            "LLM_BACKEND": "openai",
            "OPENAI_API_KEY": "test-key",
            "OPENAI_BASE_URL": fake.base_url,
            "LLM_MODEL": "fake-gpt",
        }
        with LiveServer(env=env) as first, LiveServer(env=env) as second:
            done_watcher, done_asker = asyncio.run(scenario(first, second, thread, cookie))

    assert done_watcher == done_asker
    assert done_watcher["status"] == "stopped"
    answer = Message.objects.get(thread=thread, role="assistant")
    assert answer.status == "stopped" and answer.content == done_watcher["content"]
    assert answer.content.startswith("w0") and len(answer.content) < len(full)
    assert settings.SESSION_COOKIE_NAME in cookie

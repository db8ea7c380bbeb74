"""Asking over real HTTP: a real daphne serves the app (ASGI, as in production) against this
test run's database, the LLM is the local fake OpenAI server streaming a few words a second, and
httpx reads the server-sent events as they come."""

import json
import time
import uuid

import httpx
import pytest
from rest_framework.authtoken.models import Token

from chat.models import Message, Thread
from tests.fakes.openai_chat import FakeOpenAI, Reply
from tests.live_server import LiveServer
from tests.ops.conftest import redis_url  # noqa: F401  (a fixture: a Redis db, or skip)

ANSWER = "Diffusion models now generate text [1]. Schrodinger bridges connect them to transport [2]."


@pytest.fixture(scope="module")
def fake_llm():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture(autouse=True)
def normal_speed(fake_llm):
    fake_llm.default = Reply(ANSWER, tokens_per_second=12)


def app_env(fake_llm) -> dict[str, str]:
    return {
        "EMBEDDING_BACKEND": "hashing",
        "LLM_BACKEND": "openai",
        "OPENAI_API_KEY": "test-key",
        "OPENAI_BASE_URL": fake_llm.base_url,
        "OPENAI_MAX_RETRIES": "0",
        "LLM_MODEL": "fake-gpt",
    }


@pytest.fixture(scope="module")
def server(fake_llm, django_db_setup):
    """One daphne for the module (starting one takes seconds); each test writes its own rows."""
    with LiveServer(env=app_env(fake_llm)) as live:
        yield live


@pytest.fixture
def thread(owner):
    return Thread.objects.create(owner=owner)


def auth(user) -> dict:
    return {"Authorization": f"Token {Token.objects.get_or_create(user=user)[0].key}"}


def read_events(response: httpx.Response, stop_after: str = "done"):
    """(seconds since the request, event type, data) for each event, as the bytes arrive."""
    started = time.monotonic()
    kind = None
    for line in response.iter_lines():
        if line.startswith("event: "):
            kind = line[len("event: "):]
        elif line.startswith("data: "):
            data = json.loads(line[len("data: "):])
            yield time.monotonic() - started, kind, data
            if kind in (stop_after, "error"):
                return


def ask_streaming(server, user, thread, text="diffusion models for text generation"):
    with httpx.Client(base_url=server.url, timeout=30) as http, http.stream(
        "POST", f"/api/threads/{thread.pk}/messages/", json={"text": text},
        headers={**auth(user), "Accept": "text/event-stream"},
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        return list(read_events(response))


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_event_stream_is_read_to_done_as_it_is_written(server, indexed_papers, owner, thread):
    events = ask_streaming(server, owner, thread)

    kinds = [kind for _, kind, _ in events]
    assert kinds[0] == "start" and kinds[-1] == "done", kinds
    assert kinds.index("analysis") < kinds.index("sources") < kinds.index("token")
    assert kinds.count("token") >= 2
    # Streamed, not buffered: the first words arrived well before the answer was finished.
    first_token = next(at for at, kind, _ in events if kind == "token")
    assert events[-1][0] - first_token > 0.3
    done = events[-1][2]
    assert done["status"] == "complete"
    assert "".join(d["text"] for _, kind, d in events if kind == "token").strip()
    saved = Message.objects.get(pk=done["message_id"])
    assert saved.status == "complete" and saved.content == done["content"]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_event_stream_over_the_redis_channel_layer(fake_llm, redis_url, indexed_papers, owner,  # noqa: F811
                                                   thread):
    """With REDIS_URL (several processes), the events travel through Redis groups."""
    env = {**app_env(fake_llm), "REDIS_URL": redis_url,
           "CHANNELS_PREFIX": f"api-sse-{uuid.uuid4().hex[:8]}"}
    with LiveServer(env=env) as live:
        events = ask_streaming(live, owner, thread)
    kinds = [kind for _, kind, _ in events]
    assert kinds[0] == "start" and kinds[-1] == "done", kinds
    assert "token" in kinds
    assert Message.objects.get(pk=events[-1][2]["message_id"]).status == "complete"


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_hanging_up_does_not_stop_the_answer(server, indexed_papers, owner, thread, fake_llm):
    fake_llm.default = Reply(ANSWER, tokens_per_second=6)
    with httpx.Client(base_url=server.url, timeout=30) as http, http.stream(
        "POST", f"/api/threads/{thread.pk}/messages/", json={"text": "diffusion models"},
        headers={**auth(owner), "Accept": "text/event-stream"},
    ) as response:
        first = next(read_events(response, stop_after="start"))
    message_id = first[2]["message_id"]

    deadline = time.monotonic() + 20
    while Message.objects.get(pk=message_id).status == "streaming":
        assert time.monotonic() < deadline, "the answer stopped with the connection"
        time.sleep(0.2)
    answer = Message.objects.get(pk=message_id)
    assert answer.status == "complete"
    assert answer.content


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_json_answer_over_asgi(server, indexed_papers, owner, thread):
    response = httpx.post(
        f"{server.url}/api/threads/{thread.pk}/messages/", json={"text": "diffusion models"},
        headers=auth(owner), timeout=30,
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["answer"]["status"] == "complete"
    assert body["answer"]["backend"] == "openai"
    assert body["answer"]["sources"]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_stranger_asking_for_a_stream_gets_a_json_404(server, stranger, thread):
    response = httpx.post(
        f"{server.url}/api/threads/{thread.pk}/messages/", json={"text": "hello"},
        headers={**auth(stranger), "Accept": "text/event-stream"}, timeout=30,
    )
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["error"]["code"] == "not_found"
    assert not Message.objects.filter(thread=thread).exists()

"""POST /api/threads/<id>/messages/: asking through chat.service, as JSON or as server-sent
events. Refusals are HTTP errors before anything is streamed."""

import json

import pytest
from django.test import override_settings
from django.utils import timezone

from chat.models import Ask, Message, Thread


@pytest.fixture
def thread(owner):
    return Thread.objects.create(owner=owner, title="")


def ask(client, thread, text, **headers):
    return client.post(f"/api/threads/{thread.pk}/messages/", {"text": text}, format="json",
                       **headers)


def parse_sse(body: bytes) -> list[tuple[str, dict]]:
    events = []
    for block in body.decode().split("\n\n"):
        lines = [line for line in block.splitlines() if line and not line.startswith(":")]
        if not lines:
            continue
        fields = dict(line.split(": ", 1) for line in lines)
        events.append((fields["event"], json.loads(fields["data"])))
    return events


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body, field",
    [({}, "text"), ({"text": ""}, "text"), ({"text": "   "}, "text"), ({"text": 42}, "text"),
     ({"text": ["a"]}, "text"), ({"text": "x" * 4001}, "text"), ({"text": "a\x00b"}, "text")],
)
def test_bad_questions_get_400_and_save_nothing(owner_api, thread, body, field):
    response = owner_api.post(f"/api/threads/{thread.pk}/messages/", body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["error"]["fields"]
    assert not Message.objects.exists()


@pytest.mark.django_db
def test_body_that_is_not_an_object_gets_400(owner_api, thread):
    response = owner_api.generic("POST", f"/api/threads/{thread.pk}/messages/", "[1, 2]",
                                 content_type="application/json")
    assert response.status_code == 400


@pytest.mark.django_db(transaction=True)
def test_ask_while_an_answer_is_streaming_gets_409(owner_api, thread):
    Message.objects.create(thread=thread, role="assistant", status="streaming")
    response = ask(owner_api, thread, "anything new?")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "busy"


@pytest.mark.django_db(transaction=True)
@override_settings(CHAT_RATE_LIMIT_PER_MINUTE=1)
def test_second_question_in_a_minute_gets_429_with_retry_after(owner_api, owner, thread):
    Ask.objects.create(user=owner, asked_at=timezone.now())  # a question a moment ago
    other = Thread.objects.create(owner=owner)  # the limit is per user, not per thread
    response = ask(owner_api, other, "second")
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(response["Retry-After"]) <= 60


@pytest.mark.django_db(transaction=True)
def test_json_ask_returns_question_and_finished_answer(owner_api, thread, indexed_papers):
    response = ask(owner_api, thread, "diffusion models for text")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["question"]["role"] == "user"
    assert body["question"]["content"] == "diffusion models for text"
    answer = body["answer"]
    assert answer["role"] == "assistant"
    assert answer["status"] == "complete", answer
    assert answer["content"]
    assert answer["sources"], "the papers fixture has diffusion papers to cite"
    # What the API returned is what the thread now holds.
    listed = owner_api.get(f"/api/threads/{thread.pk}/messages/").json()["results"]
    assert [m["id"] for m in listed] == [body["question"]["id"], answer["id"]]
    thread.refresh_from_db()
    assert thread.title == "diffusion models for text"


@pytest.mark.django_db(transaction=True)
def test_event_stream_ask_sends_the_websocket_events_in_order(owner_api, thread, indexed_papers):
    response = ask(owner_api, thread, "diffusion models for text", HTTP_ACCEPT="text/event-stream")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/event-stream")
    events = parse_sse(response.content)
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "start" and kinds[-1] == "done", kinds
    assert kinds.index("analysis") < kinds.index("sources") < kinds.index("token")
    assert all(data["type"] == kind for kind, data in events)
    done = events[-1][1]
    streamed = "".join(data["text"] for kind, data in events if kind == "token")
    assert streamed and done["status"] == "complete"
    saved = Message.objects.get(pk=done["message_id"])
    assert saved.content == done["content"]

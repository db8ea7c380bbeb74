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


# --- Filters: an edited chip re-asks with the same overrides as the socket -----------------------
@pytest.mark.django_db
@pytest.mark.parametrize(
    "filters, says",
    [
        ({"start": "last May"}, "start 'last May' is not an ISO date"),
        ({"start": "2025-01-01", "end": "2024-01-01"}, "starts (2025-01-01) after it ends"),
        ({"recency_weight": 3}, "recency weight must be a number from 0 to 1"),
        ({"categories": ["cs.NOPE"]}, "'cs.NOPE' is not an arXiv category"),
        ({"authors": "Hinton"}, "authors must be a list of names"),
        ({"arxiv_id": "not-an-id"}, "is not an arXiv id"),
        ({"colour": "blue"}, "unknown filter colour"),
        (["start"], "filters must be an object"),
    ],
)
def test_bad_filters_get_400_saying_what_is_wrong_and_save_nothing(owner_api, thread, filters, says):
    response = owner_api.post(
        f"/api/threads/{thread.pk}/messages/", {"text": "diffusion", "filters": filters},
        format="json",
    )
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert "filters" in error["fields"]
    assert says in error["message"], error["message"]
    assert not Message.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_filters_replace_what_the_question_says_and_are_kept_with_the_answer(
    owner_api, thread, indexed_papers
):
    def sources(body):
        return {s["arxiv_id"] for s in body["answer"]["sources"]}

    plain = ask(owner_api, thread, "diffusion models").json()
    assert "2305.00003" in sources(plain)  # a 2023 diffusion paper, without filters

    response = owner_api.post(
        f"/api/threads/{thread.pk}/messages/",
        {"text": "diffusion models", "filters": {"start": "2024-01-01", "categories": ["CS.cl"]}},
        format="json",
    )
    assert response.status_code == 201, response.content
    answer = response.json()["answer"]
    assert {s["arxiv_id"] for s in answer["sources"]} == {"2401.00001"}
    assert answer["analysis"]["filters"] == {"start": "2024-01-01", "categories": ["cs.CL"]}
    assert answer["analysis"]["start"].startswith("2024-01-01")
    assert answer["analysis"]["categories"] == ["cs.CL"]


@pytest.mark.django_db(transaction=True)
def test_event_stream_shows_the_stages_and_the_chips(owner_api, thread, indexed_papers):
    response = owner_api.post(
        f"/api/threads/{thread.pk}/messages/",
        {"text": "diffusion models since 2023", "filters": {"authors": ["Ada Lovelace"]}},
        format="json", HTTP_ACCEPT="text/event-stream",
    )
    events = parse_sse(response.content)
    stages = [data for kind, data in events if kind == "stage"]
    assert [s["stage"] for s in stages] == ["understanding", "searching", "reading", "writing"]
    assert stages[1]["detail"] == "Searching 5 papers…"
    analysis = next(data for kind, data in events if kind == "analysis")
    assert analysis["filters"]["authors"] == ["Ada Lovelace"]
    assert analysis["filters"]["start"] == "2023-01-01"
    labels = [(c["kind"], c["label"], c["edited"]) for c in analysis["chips"]]
    assert ("window", "since 2023-01-01", False) in labels
    assert ("author", "by Ada Lovelace", True) in labels


@pytest.mark.django_db
def test_the_schema_documents_filters_on_ask(owner_api):
    schema = json.loads(owner_api.get("/api/schema/?format=json").content)
    ask_body = schema["components"]["schemas"]["AskRequest"]["properties"]
    assert "filters" in ask_body
    filters = schema["components"]["schemas"]["FiltersRequest"]["properties"]
    assert set(filters) == {"start", "end", "recency_weight", "authors", "categories", "arxiv_id"}

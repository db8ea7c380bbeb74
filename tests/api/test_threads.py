"""Threads and messages: a user sees and changes only their own; a stranger gets 404 through
every verb, exactly as for an id that does not exist."""

import asyncio
import uuid

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from chat import events
from chat.models import Message, Thread


@pytest.fixture
def thread(owner):
    thread = Thread.objects.create(owner=owner, title="Diffusion")
    Message.objects.create(thread=thread, role="user", content="What is new in diffusion?")
    Message.objects.create(
        thread=thread, role="assistant", content="Two papers [1][2].",
        sources=[{"number": 1, "arxiv_id": "2401.00001", "title": "Diffusion",
                  "url": "https://arxiv.org/abs/2401.00001"}],
    )
    return thread


@pytest.mark.django_db
def test_owner_creates_thread_and_gets_its_id(owner_api, owner):
    response = owner_api.post("/api/threads/", {"title": "Retrieval"}, format="json")
    assert response.status_code == 201
    body = response.json()
    thread = Thread.objects.get(pk=body["id"])
    assert thread.owner == owner and thread.title == "Retrieval"
    assert body["message_count"] == 0


@pytest.mark.django_db
def test_thread_without_title_is_allowed(owner_api):
    response = owner_api.post("/api/threads/", {}, format="json")
    assert response.status_code == 201
    assert response.json()["title"] == ""


@pytest.mark.django_db
def test_owner_lists_only_own_threads(owner_api, thread, stranger):
    Thread.objects.create(owner=stranger, title="Not yours")
    body = owner_api.get("/api/threads/").json()
    assert [t["id"] for t in body["results"]] == [str(thread.pk)]
    assert body["results"][0]["message_count"] == 2


@pytest.mark.django_db
def test_owner_reads_renames_and_deletes_thread(owner_api, thread):
    url = f"/api/threads/{thread.pk}/"
    assert owner_api.get(url).json()["title"] == "Diffusion"
    response = owner_api.patch(url, {"title": "Renamed"}, format="json")
    assert response.status_code == 200 and response.json()["title"] == "Renamed"
    assert owner_api.delete(url).status_code == 204
    assert not Thread.objects.filter(pk=thread.pk).exists()
    assert not Message.objects.filter(thread_id=thread.pk).exists()


@pytest.mark.django_db
def test_deleting_a_thread_stops_its_answer_in_progress(owner_api, thread):
    """An answer still being written would go on writing into the deleted thread: the delete
    stops it first, through the control group the running answer listens on."""
    layer = get_channel_layer()
    answer_process = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(events.control_group_name(thread.pk), answer_process)
    assert owner_api.delete(f"/api/threads/{thread.pk}/").status_code == 204

    async def control_message():
        return await asyncio.wait_for(layer.receive(answer_process), timeout=5)

    assert async_to_sync(control_message)() == {"type": "chat.stop"}


@pytest.mark.django_db
def test_title_longer_than_200_is_rejected(owner_api, thread):
    response = owner_api.patch(f"/api/threads/{thread.pk}/", {"title": "x" * 201}, format="json")
    assert response.status_code == 400
    assert "title" in response.json()["error"]["fields"]


@pytest.mark.django_db
def test_put_is_not_offered(owner_api, thread):
    response = owner_api.put(f"/api/threads/{thread.pk}/", {"title": "x"}, format="json")
    assert response.status_code == 405


@pytest.mark.django_db
def test_owner_reads_messages_in_order_with_sources(owner_api, thread):
    body = owner_api.get(f"/api/threads/{thread.pk}/messages/").json()
    assert [m["role"] for m in body["results"]] == ["user", "assistant"]
    assert body["results"][1]["sources"][0]["arxiv_id"] == "2401.00001"


STRANGER_REQUESTS = [
    ("get", "/api/threads/{id}/", None),
    ("patch", "/api/threads/{id}/", {"title": "mine now"}),
    ("delete", "/api/threads/{id}/", None),
    ("get", "/api/threads/{id}/messages/", None),
    ("post", "/api/threads/{id}/messages/", {"text": "what did they ask?"}),
]


@pytest.mark.django_db
@pytest.mark.parametrize("method, path, body", STRANGER_REQUESTS)
def test_stranger_gets_404_on_someone_elses_thread(stranger_api, thread, method, path, body):
    response = getattr(stranger_api, method)(path.format(id=thread.pk), body, format="json")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    # Nothing changed: same title, same two messages.
    thread.refresh_from_db()
    assert thread.title == "Diffusion"
    assert thread.messages.count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize("method, path, body", STRANGER_REQUESTS)
def test_missing_thread_looks_the_same_as_a_strangers(owner_api, method, path, body):
    response = getattr(owner_api, method)(path.format(id=uuid.uuid4()), body, format="json")
    assert response.status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize("method, path, body", [
    *STRANGER_REQUESTS, ("get", "/api/threads/", None), ("post", "/api/threads/", {}),
])
def test_anonymous_gets_401_everywhere(anonymous_api, thread, method, path, body):
    response = getattr(anonymous_api, method)(path.format(id=thread.pk), body, format="json")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


@pytest.mark.django_db
def test_session_login_works_too(owner_client, thread):
    response = owner_client.get("/api/threads/")
    assert response.status_code == 200
    assert response.json()["results"][0]["id"] == str(thread.pk)


@pytest.mark.django_db
def test_session_post_needs_csrf_token(owner, password, thread):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(owner)
    response = browser.post("/api/threads/", {"title": "x"}, content_type="application/json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["error"]["message"]

"""Library API over token auth: collections and saved papers, scoped by owner, in the schema."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from library.models import Collection

pytestmark = pytest.mark.django_db


def api_client(user) -> APIClient:
    token, _ = Token.objects.get_or_create(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def owner_api(owner):
    return api_client(owner)


@pytest.fixture
def stranger_api(stranger):
    return api_client(stranger)


def test_create_list_rename_delete(owner_api, owner):
    created = owner_api.post("/api/collections/", {"name": " Video  diffusion "}, format="json")
    assert created.status_code == 201
    body = created.json()
    assert body["name"] == "Video diffusion" and body["paper_count"] == 0
    listed = owner_api.get("/api/collections/").json()["results"]
    assert [c["name"] for c in listed] == ["Video diffusion"]
    renamed = owner_api.patch(f"/api/collections/{body['id']}/", {"name": "Video"}, format="json")
    assert renamed.json()["name"] == "Video"
    assert owner_api.delete(f"/api/collections/{body['id']}/").status_code == 204
    assert not Collection.objects.filter(owner=owner).exists()


def test_save_note_remove(owner_api, collection, papers):
    url = f"/api/collections/{collection.pk}/papers/"
    saved = owner_api.post(url, {"arxiv_id": "2402.00002v2", "note": "RAG baseline"},
                           format="json")
    assert saved.status_code == 201 and saved.json()["arxiv_id"] == "2402.00002"
    again = owner_api.post(url, {"arxiv_id": "2402.00002"}, format="json")
    assert again.status_code == 200 and again.json()["note"] == "RAG baseline"
    rows = owner_api.get(url).json()["results"]
    assert [r["arxiv_id"] for r in rows] == ["2402.00002", "2401.00001"]
    edited = owner_api.patch(f"{url}2402.00002/", {"note": "read"}, format="json")
    assert edited.json()["note"] == "read"
    assert owner_api.delete(f"{url}2402.00002/").status_code == 204
    assert owner_api.get(f"/api/collections/{collection.pk}/").json()["paper_count"] == 1


@pytest.mark.parametrize("body, field", [
    ({"arxiv_id": "not an id"}, "arxiv_id"),
    ({"arxiv_id": "2401.00001", "note": "a\x00b"}, "note"),
])
def test_bad_input_is_a_clear_400(owner_api, collection, body, field):
    response = owner_api.post(f"/api/collections/{collection.pk}/papers/", body, format="json")
    assert response.status_code == 400
    assert field in str(response.json()["error"])
    assert collection.saved.count() == 1


def test_unknown_paper_is_404(owner_api, collection):
    response = owner_api.post(f"/api/collections/{collection.pk}/papers/",
                              {"arxiv_id": "2412.99999"}, format="json")
    assert response.status_code == 404 and "2412.99999" in response.json()["error"]["message"]


def test_stranger_gets_404_for_everything(stranger_api, collection):
    base = f"/api/collections/{collection.pk}/"
    assert stranger_api.get("/api/collections/").json()["results"] == []
    assert stranger_api.get(base).status_code == 404
    assert stranger_api.patch(base, {"name": "x"}, format="json").status_code == 404
    assert stranger_api.delete(base).status_code == 404
    assert stranger_api.get(base + "papers/").status_code == 404
    assert stranger_api.post(base + "papers/", {"arxiv_id": "2402.00002"},
                             format="json").status_code == 404
    assert stranger_api.patch(base + "papers/2401.00001/", {"note": "x"},
                              format="json").status_code == 404
    assert stranger_api.delete(base + "papers/2401.00001/").status_code == 404
    collection.refresh_from_db()
    assert collection.name == "Reading list" and collection.saved.get().note == "Read section 3"


def test_anonymous_is_401(client, collection):
    assert client.get("/api/collections/").status_code == 401


def test_in_the_openapi_schema(owner_api):
    schema = owner_api.get("/api/schema/?format=json").json()
    paths = schema["paths"]
    assert "/api/collections/" in paths
    assert "/api/collections/{collection_id}/papers/{arxiv_id}/" in paths
    assert paths["/api/collections/"]["post"]["tags"] == ["library"]

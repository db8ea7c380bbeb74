"""Token authentication: tokens from the settings page or `drf_create_token` work; revoked and
regenerated-away tokens are refused at once."""

import re

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient


def client_with(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


@pytest.mark.django_db
def test_token_from_the_management_command_works(owner, capsys):
    call_command("drf_create_token", owner.username)
    key = Token.objects.get(user=owner).key
    assert key in capsys.readouterr().out
    response = client_with(key).get("/api/threads/")
    assert response.status_code == 200


@pytest.mark.django_db
def test_settings_page_needs_login(anonymous):
    response = anonymous.get("/accounts/tokens/")
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


@pytest.mark.django_db
def test_owner_creates_token_sees_it_once_and_uses_it(owner_client, owner):
    response = owner_client.post("/accounts/tokens/", {"action": "create"}, follow=True)
    key = Token.objects.get(user=owner).key
    assert key in response.content.decode()
    # The next visit shows only the key's tail.
    page = owner_client.get("/accounts/tokens/").content.decode()
    assert key not in page and key[-4:] in page
    assert client_with(key).get("/api/threads/").status_code == 200


@pytest.mark.django_db
def test_regenerating_replaces_the_old_token(owner_client, owner):
    owner_client.post("/accounts/tokens/", {"action": "create"})
    old = Token.objects.get(user=owner).key
    owner_client.post("/accounts/tokens/", {"action": "create"})
    new = Token.objects.get(user=owner).key
    assert new != old
    assert client_with(old).get("/api/threads/").status_code == 401
    assert client_with(new).get("/api/threads/").status_code == 200


@pytest.mark.django_db
def test_revoked_token_is_refused(owner_client, owner):
    owner_client.post("/accounts/tokens/", {"action": "create"})
    key = Token.objects.get(user=owner).key
    response = owner_client.post("/accounts/tokens/", {"action": "revoke"}, follow=True)
    assert "revoked" in response.content.decode()
    assert not Token.objects.filter(user=owner).exists()
    refused = client_with(key).get("/api/threads/")
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "authentication_failed"


@pytest.mark.django_db
def test_token_page_refuses_unknown_actions(owner_client):
    assert owner_client.post("/accounts/tokens/", {"action": "steal"}).status_code == 400


@pytest.mark.django_db
def test_token_of_a_deactivated_user_is_refused(owner):
    key = Token.objects.create(user=owner).key
    owner.is_active = False
    owner.save()
    assert client_with(key).get("/api/threads/").status_code == 401


@pytest.mark.django_db
def test_password_change_page_links_to_tokens(owner_client):
    assert "/accounts/tokens/" in owner_client.get("/accounts/password_change/").content.decode()


@pytest.mark.django_db
def test_api_docs_and_schema_are_served(anonymous):
    schema = anonymous.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    assert {"/api/papers/", "/api/threads/{thread_id}/messages/"} <= set(paths)
    docs = anonymous.get("/api/docs/")
    assert docs.status_code == 200
    # Swagger UI comes from the sidecar package, served by the app itself (it runs offline).
    page = docs.content.decode()
    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', page)
    assert any(a.endswith("swagger-ui-bundle.js") for a in assets), page
    assert all(anonymous.get(asset).status_code == 200 for asset in assets)
    assert "cdn.jsdelivr" not in page

"""Every failure answers one JSON shape with the right status, whatever the input."""

import pytest


def assert_error(response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}, body
    assert body["error"]["message"]
    if code:
        assert body["error"]["code"] == code, body
    return body["error"]


@pytest.mark.django_db
def test_anonymous_gets_401_json_with_token_challenge(anonymous_api):
    response = anonymous_api.get("/api/threads/")
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Token"


@pytest.mark.django_db
def test_bad_token_gets_401(anonymous_api):
    anonymous_api.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert_error(anonymous_api.get("/api/papers/"), 401, "authentication_failed")


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/nope/", "/api/papers/not-an-id/", "/api/threads/123/"])
def test_unknown_api_urls_answer_json_404(owner_api, path):
    assert_error(owner_api.get(path), 404, "not_found")


@pytest.mark.django_db
def test_pages_outside_the_api_keep_html_404(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert not response["Content-Type"].startswith("application/json")


@pytest.mark.django_db
def test_wrong_method_gets_405(owner_api):
    assert_error(owner_api.put("/api/threads/", {}, format="json"), 405, "method_not_allowed")


@pytest.mark.django_db
def test_validation_error_names_the_field(owner_api):
    error = assert_error(owner_api.get("/api/papers/", {"from": "yesterday"}), 400, "invalid")
    assert "from" in error["fields"]
    assert error["message"].startswith("from:")


@pytest.mark.django_db
def test_malformed_json_body_gets_400(owner_api):
    response = owner_api.generic(
        "POST", "/api/threads/", "{not json", content_type="application/json"
    )
    assert_error(response, 400, "parse_error")


@pytest.mark.django_db
def test_non_json_body_gets_415(owner_api):
    response = owner_api.generic("POST", "/api/threads/", "title=x",
                                 content_type="application/x-www-form-urlencoded")
    assert_error(response, 415, "unsupported_media_type")


@pytest.mark.django_db
def test_forged_cursor_gets_400_not_500(owner_api, papers):
    import base64

    forged = base64.b64encode(b"p=not-a-date&o=0").decode()
    error = assert_error(owner_api.get("/api/papers/", {"cursor": forged}), 400, "invalid")
    assert "cursor" in error["fields"]


@pytest.mark.django_db
def test_oversized_body_gets_413(owner_api):
    body = '{"title": "' + "a" * (3 * 1024 * 1024) + '"}'
    response = owner_api.generic("POST", "/api/threads/", body, content_type="application/json")
    assert_error(response, 413, "too_large")


@pytest.mark.django_db
@pytest.mark.parametrize("body", ['"just text"', "[]", '{"title": null}', '{"title": "a\\u0000b"}',
                                  '{"title": "\\ud800"}'])
def test_odd_json_bodies_get_400(owner_api, body):
    response = owner_api.generic("POST", "/api/threads/", body, content_type="application/json")
    assert_error(response, 400, "invalid")

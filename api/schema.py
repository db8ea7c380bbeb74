"""OpenAPI pieces shared by every API view: the error envelope and the error responses.

`ApiAutoSchema` (REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]) documents the failures each operation
can answer, derived from the view itself (does it parse a body, need a login, throttle, take an
id in its path), so no view can forget to document its 401 or 429 and the schema stays true
for the fuzzing test that checks every response against it.
"""

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework import permissions, serializers


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(
        help_text="Stable machine-readable reason: not_found, invalid, not_authenticated, "
        "authentication_failed, permission_denied, method_not_allowed, throttled, "
        "unsupported_media_type, not_acceptable, parse_error, too_large, bad_request, "
        "server_error; asking also: busy, rate_limited."
    )
    message = serializers.CharField(help_text="One sentence for a human.")
    fields = serializers.DictField(
        required=False,
        help_text="Validation errors only: a list of messages per invalid field or parameter.",
    )


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer(help_text="What went wrong.")


def error_response(description: str) -> OpenApiResponse:
    return OpenApiResponse(response=ErrorSerializer, description=description)


RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "schema": {"type": "integer", "minimum": 1},
    }
}


class ApiAutoSchema(AutoSchema):
    def _error_responses(self) -> dict[str, str]:
        view = self.view
        errors = {
            "400": "Invalid input: a query parameter or body field failed validation "
            "(see `error.fields`).",
        }
        perms = [type(p) for p in view.get_permissions()]
        if permissions.AllowAny not in perms:
            errors["401"] = "No credentials, or an invalid or revoked token."
            errors["403"] = (
                "Authenticated but not allowed (staff-only endpoint, or a session request "
                "without its CSRF token)."
            )
        if "{" in self.path:
            errors["404"] = "Nothing with this id, or it belongs to another user."
        if self.method in ("POST", "PUT", "PATCH"):
            errors["413"] = "The body is larger than the server accepts (2.5 MB)."
            errors["415"] = "The body is not JSON (send `Content-Type: application/json`)."
        if view.get_throttles() or self.method in getattr(view, "rate_limited_methods", ()):
            errors["429"] = "Too many requests: wait `Retry-After` seconds."
        return errors

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        for code, description in self._error_responses().items():
            if code in responses:
                continue
            body = self._get_response_for_code(
                error_response(description), code, media_types=["application/json"],
                direction=direction,
            )
            if code == "429":
                body["headers"] = {**body.get("headers", {}), **RETRY_AFTER}
            responses[code] = body
        return responses


API_DESCRIPTION = """\
Search the arXiv catalogue with time-aware retrieval, and ask questions answered from papers
with citations — everything the web app does, for programs.

**Authentication.** Every endpoint needs a user. Programs send `Authorization: Token <key>`;
create or revoke your key on the [API tokens page](/accounts/tokens/) (or an administrator runs
`manage.py drf_create_token USERNAME`). A logged-in browser session works too (unsafe methods
then need the CSRF token).

**Errors.** Every failure answers JSON `{"error": {"code": "...", "message": "..."}}` with the
matching status: 400 invalid input (with `error.fields`), 401 missing or bad credentials, 403 not
allowed, 404 not found — also for another user's thread, 405 wrong method, 415 body not JSON,
429 too many requests (wait `Retry-After` seconds).

**Pagination.** Lists are cursor-paginated: follow `next` until it is null.

**Streaming.** `POST /api/threads/{thread_id}/messages/` answers JSON by default; send
`Accept: text/event-stream` to receive the answer as server-sent events while it is written,
with the same events as the web app's WebSocket: `analysis`, `sources`, `token`, then `done`
(or `error`).

**Limits.** Asking and searching are limited per user per minute (429 beyond).
"""


def describe_api(result, generator, request, public):
    """SPECTACULAR_SETTINGS postprocessing hook: the API's guide as the schema's description."""
    result["info"]["description"] = API_DESCRIPTION
    return result

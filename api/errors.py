"""One error shape for the whole API: `{"error": {"code": ..., "message": ...}}`.

DRF's own handler answers `{"detail": ...}` or a bare field dict, and Django answers unmatched
`/api/` URLs with an HTML page; API clients should only ever need to read one shape. Validation
errors keep the per-field messages under `error.fields` so a program can point at the bad input.
"""

import logging
import math
import sys

from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import JsonResponse
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from security.errors import (
    DATABASE_DOWN_CODE,
    DATABASE_DOWN_MESSAGE,
    RETRY_AFTER_SECONDS,
    database_unavailable_response,
    is_database_down,
    reason,
)

log = logging.getLogger("api")

API_PREFIX = "/api/"


def error_body(code: str, message: str, fields: dict | None = None) -> dict:
    body = {"code": code, "message": message}
    if fields:
        body["fields"] = fields
    return {"error": body}


def _first_message(detail) -> str:
    """The first human message in a DRF detail (a string, a list, or a dict of them)."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            message = _first_message(value)
            if key in ("non_field_errors", "detail"):
                return message
            return f"{key}: {message}"
        return "Invalid input."
    if isinstance(detail, list):
        return _first_message(detail[0]) if detail else "Invalid input."
    return str(detail)


def api_exception_handler(exc, context):
    """REST_FRAMEWORK["EXCEPTION_HANDLER"]: every failure in a DRF view becomes one JSON shape."""
    if isinstance(exc, RequestDataTooBig):
        return Response(
            error_body("too_large", "The request body is too large."),
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, SuspiciousOperation):  # malformed input Django refuses (e.g. too many fields)
        return Response(error_body("bad_request", str(exc) or "Malformed request."), status=400)
    if is_database_down(exc):  # not a bug: the documented 503, no traceback
        log.warning("database_unavailable view=%s: %s", type(context.get("view")).__name__,
                    reason(exc))
        set_rollback()
        return Response(
            error_body(DATABASE_DOWN_CODE, DATABASE_DOWN_MESSAGE),
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    response = drf_exception_handler(exc, context)
    if response is None:
        # A bug, not bad input: keep the traceback in the log, give the client the same shape.
        log.error("api.unhandled_error view=%s", type(context.get("view")).__name__, exc_info=exc)
        set_rollback()
        return Response(
            error_body("server_error", "Something went wrong on our side; it has been logged."),
            status=status.HTTP_500_INTERNAL_SERVER_ERROR,
        )

    if isinstance(exc, exceptions.ValidationError):
        detail = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        response.data = error_body("invalid", _first_message(detail), fields=detail)
    else:
        if not isinstance(exc, exceptions.APIException):  # Django's Http404 / PermissionDenied
            exc = (
                exceptions.NotFound(*exc.args)
                if response.status_code == 404
                else exceptions.PermissionDenied(*exc.args)
            )
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else exc.default_code
        response.data = error_body(code, _first_message(exc.detail))

    if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
        # DRF writes int(wait), which says "0" for half a second left: clients would retry at once.
        response.headers["Retry-After"] = str(max(1, math.ceil(exc.wait)))
    return response


def _is_api(request) -> bool:
    return request.path.startswith(API_PREFIX)


def page_not_found(request, exception=None):
    """handler404: JSON under /api/ (unknown URLs, malformed ids), Django's page elsewhere."""
    if _is_api(request):
        return JsonResponse(
            error_body("not_found", "No API endpoint or object at this URL."), status=404
        )
    # The site's own page (templates/404.html), for every 404 raised outside the API.
    return defaults.page_not_found(request, exception)


def server_error(request):
    """handler500: JSON under /api/, Django's page elsewhere (the traceback is already logged).
    The database down in a middleware (loading the session, say) is the documented 503."""
    exc = sys.exc_info()[1]
    if exc is not None and is_database_down(exc):
        return database_unavailable_response(request, exc)
    if _is_api(request):
        return JsonResponse(
            error_body("server_error", "Something went wrong on our side; it has been logged."),
            status=500,
        )
    return defaults.server_error(request)

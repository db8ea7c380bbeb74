"""The database down while a page or the API runs: the documented 503 `database_unavailable`,
never a 500 with a traceback (the socket and the ask path say the same through chat.turns).

DRF views are answered by api.errors' exception handler; this middleware answers every other
view (pages, the async ask view before its DRF part), and `api.errors.server_error` (handler500)
the rare failure raised from a middleware itself, such as loading the session.
"""

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils.deprecation import MiddlewareMixin

logger = logging.getLogger("flatuniverse.security")

# The database went away (restart, failover, network): not a bug, no traceback.
DATABASE_DOWN = (OperationalError, InterfaceError)
DATABASE_DOWN_CODE = "database_unavailable"
DATABASE_DOWN_MESSAGE = "The database cannot be reached right now; try again in a moment."
RETRY_AFTER_SECONDS = 5


# SQLSTATE classes that mean "the server is not there for us", not "this query is wrong":
# connection exceptions (08), the server shutting down or starting (57P01-57P03), out of
# connections or memory (53).
_DOWN_STATES = ("08", "57P01", "57P02", "57P03", "53")


def is_database_down(exc: BaseException) -> bool:
    """Whether `exc` says the database cannot be reached, as opposed to a query that failed (an
    OperationalError too, such as a statement too complex): that one is a bug, with a traceback."""
    if isinstance(exc, InterfaceError):
        return True
    if not isinstance(exc, OperationalError):
        return False
    state = getattr(exc.__cause__, "sqlstate", None)
    return state is None or state.startswith(_DOWN_STATES)


def reason(exc: BaseException) -> str:
    """The first line of a database error, for a log line without a traceback."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def database_unavailable_response(request, exc: BaseException) -> HttpResponse:
    """JSON under /api/ (the API's error shape), a plain page elsewhere. Rendered without the
    request: its context processors (the user in the header) would need the database."""
    logger.warning("database_unavailable path=%s: %s", request.path, reason(exc))
    if request.path.startswith("/api/"):
        body = {"error": {"code": DATABASE_DOWN_CODE, "message": DATABASE_DOWN_MESSAGE}}
        response = JsonResponse(body, status=503)
    else:
        html = render_to_string("503.html", {"message": DATABASE_DOWN_MESSAGE})
        response = HttpResponse(html, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class DatabaseUnavailableMiddleware(MiddlewareMixin):
    def process_exception(self, request, exception):
        if is_database_down(exception):
            return database_unavailable_response(request, exception)
        return None

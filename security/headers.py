"""The Content-Security-Policy every response carries (settings.CONTENT_SECURITY_POLICY).

Scripts only from our own origin: no inline <script>, no inline event handlers, no eval, so an
injected tag in a title or an answer could not run even if sanitising ever missed it. The pages
keep their JavaScript in static/js (a `confirm` on the delete button is a data attribute that
static/js/chat.js reads), and /api/docs/ is drf-spectacular's split Swagger view, whose script is
a URL of its own. Styles allow inline `style` attributes (the admin and Swagger UI use them); a
style cannot run code.
"""

from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.utils.decorators import sync_and_async_middleware

HEADER = "Content-Security-Policy"


def _add_header(response) -> None:
    policy = settings.CONTENT_SECURITY_POLICY
    if policy and HEADER not in response:
        response[HEADER] = policy


@sync_and_async_middleware
def ContentSecurityPolicyMiddleware(get_response):  # noqa: N802 (named like Django's classes)
    if iscoroutinefunction(get_response):

        async def middleware(request):
            response = await get_response(request)
            _add_header(response)
            return response

    else:

        def middleware(request):
            response = get_response(request)
            _add_header(response)
            return response

    return middleware

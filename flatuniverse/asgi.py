"""ASGI entry point: Django for HTTP, Channels for WebSockets (served by daphne)."""

import asyncio
import os
import sys

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "flatuniverse.settings")
# Django must be set up before the routing imports consumers (and through them, models).
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from chat.consumers import LaneAuthMiddlewareStack  # noqa: E402
from chat.routing import websocket_urlpatterns  # noqa: E402
from chat.service import stop_running_answers  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(
            LaneAuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)


def _stop_answers_before_daphne_exits() -> None:
    """Ctrl-C or SIGTERM (what `manage.py serve` sends) stops daphne's reactor; answers are tasks
    no connection owns, so daphne would drop them mid-sentence. Twisted waits for the Deferred
    returned by a "before shutdown" trigger: the answers are saved as stopped first."""
    from twisted.internet import defer, reactor

    def stop_answers():
        return defer.Deferred.fromFuture(asyncio.ensure_future(stop_running_answers()))

    reactor.addSystemEventTrigger("before", "shutdown", stop_answers)


if "daphne.server" in sys.modules:  # served by daphne: its module installed the asyncio reactor
    _stop_answers_before_daphne_exits()

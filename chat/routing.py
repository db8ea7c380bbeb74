"""WebSocket routes (see docs/WEBSOCKET.md for the protocol)."""

from django.urls import path, re_path

from chat.consumers import ThreadConsumer, UnknownSocketConsumer

websocket_urlpatterns: list = [
    path("ws/threads/<uuid:thread_id>/", ThreadConsumer.as_asgi()),
    re_path(r"", UnknownSocketConsumer.as_asgi()),  # last: everything else is refused
]

"""WebSocket routes (see docs/WEBSOCKET.md for the protocol)."""

from django.urls import path

from chat.consumers import ThreadConsumer

websocket_urlpatterns: list = [
    path("ws/threads/<uuid:thread_id>/", ThreadConsumer.as_asgi()),
]

"""WebSocket routes (see docs/WEBSOCKET.md for the protocol)."""

websocket_urlpatterns: list = []

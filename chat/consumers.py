"""The thread socket: ws/threads/<uuid>/ (protocol in docs/WEBSOCKET.md).

The consumer only relays: it checks who is asking, passes `ask` and `stop` to chat.service, and
forwards the events published to the thread's group (chat.events). Answers do not belong to the
socket: closing it mid-answer changes nothing for the answer.
"""

import json
import logging

from channels.generic.websocket import AsyncJsonWebsocketConsumer, AsyncWebsocketConsumer
from django.conf import settings

from chat import events, service
from chat.models import Thread

logger = logging.getLogger(__name__)

# Room for a maximal question after JSON escaping (every character as \uXXXX) plus the envelope.
ENVELOPE_BYTES = 1024


def max_frame_chars() -> int:
    return settings.CHAT_MAX_QUESTION_CHARS * 6 + ENVELOPE_BYTES


class ThreadConsumer(AsyncJsonWebsocketConsumer):
    thread_id = None
    user = None

    async def connect(self):
        # Strangers and anonymous visitors are refused before the handshake completes: they are
        # sent nothing at all, not even whether the thread exists.
        user = self.scope.get("user")
        thread_id = self.scope["url_route"]["kwargs"]["thread_id"]
        if user is None or not user.is_authenticated:
            await self.close()
            return
        owns = await Thread.objects.filter(pk=thread_id, owner=user).aexists()
        if not owns:
            await self.close()
            return
        self.user, self.thread_id = user, thread_id
        await self.channel_layer.group_add(events.group_name(thread_id), self.channel_name)
        await self.accept()
        await self.send_state()

    async def send_state(self):
        """`resume` for an answer in progress (another tab, this tab before a reload), then
        `ready` naming it, so a page can reload answers that ended while it was not listening."""
        snapshot = await service.request_snapshot(self.thread_id, self.channel_name)
        if snapshot is not None:
            await self.send_json(snapshot)
        streaming = snapshot["message_id"] if snapshot else None
        await self.send_json(events.ready(self.thread_id, streaming))

    async def disconnect(self, code):
        if self.thread_id is not None:
            await self.channel_layer.group_discard(
                events.group_name(self.thread_id), self.channel_name
            )

    async def receive(self, text_data=None, bytes_data=None):
        # Parsing is done here, not by the JSON consumer, so bad input becomes an error event
        # instead of an exception that would drop the connection.
        if text_data is None:
            await self.send_error("binary_not_supported", "Send JSON text frames only.")
            return
        if len(text_data) > max_frame_chars():
            await self.send_error(
                "frame_too_large",
                f"Messages are limited to {max_frame_chars()} characters.",
            )
            return
        try:
            content = json.loads(text_data)
        except (ValueError, RecursionError):  # RecursionError: "[[[[…" nested too deep
            await self.send_error("invalid_json", "The message is not valid JSON.")
            return
        if not isinstance(content, dict) or not isinstance(content.get("type"), str):
            await self.send_error("invalid_message", 'Messages are JSON objects with a "type".')
            return
        await self.receive_json(content)

    async def receive_json(self, content, **kwargs):
        kind = content["type"]
        try:
            if kind == "ask":
                await service.ask(
                    self.user, self.thread_id, content.get("text"), content.get("filters")
                )
            elif kind == "stop":
                await service.stop(self.user, self.thread_id)
            elif kind == "sync":  # a page that heard nothing for a while checks it missed nothing
                await self.send_state()
            elif kind == "ping":
                await self.send_json(events.pong())
            else:
                await self.send_error(
                    "unknown_type",
                    f'Unknown message type "{kind[:40]}"; use "ask", "stop", "sync" or "ping".',
                )
        except service.AskRefused as refusal:
            await self.send_json(refusal.event())

    async def send_error(self, code: str, message: str) -> None:
        await self.send_json(events.error(code, message))

    # Group messages published through chat.events.
    async def chat_event(self, message):
        await self.send_json(message["event"])


class UnknownSocketConsumer(AsyncWebsocketConsumer):
    """Any other socket path (a thread id that is not a UUID, a typo): refused at the handshake
    (403) like a stranger's thread. Without it the router raises, and daphne answers 500."""

    async def connect(self):
        await self.close()

"""Asking from HTTP: start an answer with the chat service and follow its events.

The answer itself is chat.service's (the same background task the WebSocket starts); this module
only subscribes to the thread's channel-layer group and reads this answer's events, so an API
client sees exactly what a browser tab sees: start, analysis, sources, token..., then done or
error. Both API modes use it: the event stream forwards the events as they come, the JSON mode
reads them to the end.
"""

import asyncio
import contextvars
import json
import logging
from collections.abc import AsyncIterator

from channels.layers import get_channel_layer

from chat import events, service
from chat.models import Message
from chat.runner import RunningAnswer

log = logging.getLogger("chat.api")

FINAL_EVENTS = ("done", "error")
# Events of other answers in the same thread, and a reconnecting tab's snapshots, are not ours.
FORWARDED_EVENTS = ("start", "analysis", "stage", "sources", "token", *FINAL_EVENTS)
# How often to look whether the answer task has ended without its final event reaching us.
POLL_SECONDS = 1.0
# A comment line this often keeps proxies from closing a quiet stream (a slow LLM's first token).
KEEPALIVE_SECONDS = 15.0


class AnswerStream:
    """One answer being followed: its subscription to the thread's group and its events."""

    def __init__(self, thread_id, channel: str, answer: RunningAnswer):
        self.thread_id = thread_id
        self.channel = channel
        self.answer = answer
        self.message_id = str(answer.message_id)
        self.user_message_id = str(answer.turn.user_message_id)
        self.final: dict | None = None

    @classmethod
    async def open(cls, user, thread_id, text: str, filters: dict | None = None) -> "AnswerStream":
        """Subscribe, then ask: subscribing first means not even the first event can be missed.
        Raises service.AskRefused (busy, rate limited, gone) before anything is streamed."""
        layer = get_channel_layer()
        channel = await layer.new_channel()
        group = events.group_name(thread_id)
        await layer.group_add(group, channel)
        try:
            answer = await _ask_outside_request(user, thread_id, text, filters)
        except BaseException:
            await layer.group_discard(group, channel)
            raise
        return cls(thread_id, channel, answer)

    async def events(self) -> AsyncIterator[dict | None]:
        """This answer's events, in order, ending with done or error. Yields None when nothing
        happened for KEEPALIVE_SECONDS. Unsubscribes when finished or abandoned (a client that
        disconnects cancels this; the answer itself goes on and is saved)."""
        layer = get_channel_layer()
        quiet = 0.0
        # One receive stays pending across polls instead of being cancelled at each timeout, so
        # no layer ever has to give back a message it was in the middle of handing over.
        receiving: asyncio.Future | None = None
        try:
            while True:
                if receiving is None:
                    receiving = asyncio.ensure_future(layer.receive(self.channel))
                done, _ = await asyncio.wait({receiving}, timeout=POLL_SECONDS)
                if not done:
                    if self.answer.done.is_set():
                        # The task ended but its final event never came (it failed to publish):
                        # tell the client what the database says rather than hang.
                        yield await self._final_from_database()
                        return
                    quiet += POLL_SECONDS
                    if quiet >= KEEPALIVE_SECONDS:
                        quiet = 0.0
                        yield None
                    continue
                message, receiving, quiet = receiving.result(), None, 0.0
                event = message.get("event") or {}
                if event.get("type") not in FORWARDED_EVENTS:
                    continue
                if event.get("message_id") != self.message_id:
                    continue
                yield event
                if event["type"] in FINAL_EVENTS:
                    self.final = event
                    return
        finally:
            if receiving is not None:
                receiving.cancel()
            await layer.group_discard(events.group_name(self.thread_id), self.channel)

    async def _final_from_database(self) -> dict:
        self.final = events.saved_final(await Message.objects.aget(pk=self.message_id))
        return self.final


async def _ask_outside_request(user, thread_id, text: str, filters=None) -> RunningAnswer:
    """service.ask() in an empty context.

    The answer task that ask() creates outlives this HTTP request. Started from the request's
    context it would inherit Django's per-request thread-sensitive executor, which is shut down
    when the response ends; in a fresh context its database calls go where a WebSocket-started
    answer's go. Shielded: once asked, a client hanging up must not leave half a turn behind.
    """
    task = asyncio.get_running_loop().create_task(
        service.ask(user, thread_id, text, filters), context=contextvars.Context()
    )
    return await asyncio.shield(task)


def sse_frame(event: dict | None) -> bytes:
    """One server-sent event: `event: <type>` and the JSON envelope as `data:`; None is a
    keep-alive comment that clients ignore."""
    if event is None:
        return b": keep-alive\n\n"
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"), default=str)
    # JSON never contains a raw newline, so one data line always holds the whole envelope.
    return f"event: {event['type']}\ndata: {data}\n\n".encode()

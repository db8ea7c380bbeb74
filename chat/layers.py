"""The channel layer of a single process (no REDIS_URL): Channels' in-memory layer, scanning for
expired messages at most once a second instead of at every send and receive, and copying each
message as the JSON it is instead of with `copy.deepcopy`.

Channels' `InMemoryChannelLayer` walks every channel queue and every group membership before
each `group_send` and each `receive`: with 100 sockets open (each in its thread's group, its
user's group, and a control group per running answer) that walk ran ~40 times per answer and
cost about 7% of the server's CPU in `bench_chat concurrent` (docs/BENCHMARKS.md, "Cutting the
answer path's CPU"). Messages expire after a minute and memberships after a day, so looking once
a second changes nothing a socket can see: a message is dropped at most a second later.

Each receiver gets its own copy (as with Channels: no receiver sees another's changes); our
messages are JSON-shaped (chat.events), which a plain walk copies several times faster than
`deepcopy` (4% of the server's CPU in the same profile); anything else still goes to `deepcopy`.

A send only puts the message on a queue, so `group_send` sends to each member in turn instead of
starting a task per member and waiting on them with `asyncio.as_completed`, and a send or receive
builds a channel's queue only when the channel has none (Channels builds one per call, as the
argument of `setdefault`, and throws it away): the same deliveries, in the same order, for about
a third of the CPU (docs/BENCHMARKS.md, session 13).
"""

import asyncio
import copy
import time

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer

# Seconds between two scans for expired messages and memberships.
CLEAN_EVERY = 1.0

_SCALARS = (str, int, float, bool, type(None))


def json_copy(value):
    """A deep copy of JSON-shaped data (dicts with str keys, lists, scalars); else deepcopy."""
    kind = type(value)
    if kind is dict:
        return {k: json_copy(v) for k, v in value.items()}
    if kind is list:
        return [json_copy(v) for v in value]
    if kind in _SCALARS:
        return value
    return copy.deepcopy(value)


class ThrottledInMemoryChannelLayer(InMemoryChannelLayer):
    _cleaned_at = float("-inf")

    def _clean_expired(self):
        now = time.monotonic()
        if now - self._cleaned_at < CLEAN_EVERY:
            return
        self._cleaned_at = now
        super()._clean_expired()

    def _queue(self, channel) -> asyncio.Queue:
        queue = self.channels.get(channel)
        if queue is None:
            queue = self.channels[channel] = asyncio.Queue(maxsize=self.get_capacity(channel))
        return queue

    async def send(self, channel, message):
        # Channels' own send, with json_copy for deepcopy.
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_channel_name(channel)
        assert "__asgi_channel__" not in message
        queue = self._queue(channel)
        try:
            queue.put_nowait((time.time() + self.expiry, json_copy(message)))
        except asyncio.QueueFull:
            raise ChannelFull(channel) from None

    async def group_send(self, group, message):
        # Channels' own group_send, each member's send awaited in turn (it never waits).
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        self._clean_expired()
        for channel in list(self.groups.get(group, ())):
            try:
                await self.send(channel, message)
            except ChannelFull:
                pass

    async def receive(self, channel):
        # Channels' own receive.
        self.require_valid_channel_name(channel)
        self._clean_expired()
        queue = self._queue(channel)
        try:
            _, message = await queue.get()
        finally:
            if queue.empty():
                self.channels.pop(channel, None)
        return message

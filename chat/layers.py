"""The channel layer of a single process (no REDIS_URL): Channels' in-memory layer, scanning for
expired messages at most once a second instead of at every send and receive.

Channels' `InMemoryChannelLayer` walks every channel queue and every group membership before
each `group_send` and each `receive`: with 100 sockets open (each in its thread's group, its
user's group, and a control group per running answer) that walk ran ~40 times per answer and
cost about 7% of the server's CPU in `bench_chat concurrent` (docs/BENCHMARKS.md, "Cutting the
answer path's CPU"). Messages expire after a minute and memberships after a day, so looking once
a second changes nothing a socket can see: a message is dropped at most a second later.
"""

import time

from channels.layers import InMemoryChannelLayer

# Seconds between two scans for expired messages and memberships.
CLEAN_EVERY = 1.0


class ThrottledInMemoryChannelLayer(InMemoryChannelLayer):
    _cleaned_at = float("-inf")

    def _clean_expired(self):
        now = time.monotonic()
        if now - self._cleaned_at < CLEAN_EVERY:
            return
        self._cleaned_at = now
        super()._clean_expired()

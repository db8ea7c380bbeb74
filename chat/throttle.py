"""A token bucket: `burst` actions at once, then `per_second` on average (one socket's control
frames, chat/consumers.py). In memory, per socket: it guards the server from one connection's
flood and needs no shared state."""

import math
import time
from collections.abc import Callable


class TokenBucket:
    def __init__(self, burst: int, per_second: float, clock: Callable[[], float] = time.monotonic):
        self.burst = max(1, burst)
        self.per_second = per_second
        self.clock = clock
        self.tokens = float(self.burst)
        self.filled_at = clock()

    def take(self) -> int:
        """Spend a token: 0 when there was one, else the whole seconds until there is."""
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.filled_at) * self.per_second)
        self.filled_at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0
        if self.per_second <= 0:
            return 60
        return max(1, math.ceil((1 - self.tokens) / self.per_second))

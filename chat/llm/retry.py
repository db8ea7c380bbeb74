"""When and how long to wait before trying an LLM request again.

We own the policy instead of the SDK's built-in retries because only we know whether text was
already streamed (a retry then would duplicate it), and because the total wait must be capped so
that a user is never left staring at a spinner for minutes.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass

from django.conf import settings


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3  # retries after the first attempt
    base_delay: float = 0.5  # seconds before the first retry, doubled each time
    max_delay: float = 8.0  # no single backoff longer than this
    max_total_wait: float = 30.0  # give up rather than wait longer than this in all

    @classmethod
    def from_settings(cls) -> RetryPolicy:
        return cls(
            max_retries=settings.OPENAI_MAX_RETRIES,
            max_total_wait=settings.LLM_RETRY_MAX_WAIT,
        )

    def backoff(self, retry_number: int, rng: random.Random | None = None) -> float:
        """Exponential backoff with jitter for the n-th retry (0-based).

        The jitter spreads the wait over the upper half of the exponential step, so that many
        clients rate-limited at the same moment do not come back in lockstep, while each still
        waits at least half the step.
        """
        step = min(self.max_delay, self.base_delay * (2**retry_number))
        return step * (0.5 + 0.5 * (rng or random).random())

    def next_wait(
        self, retry_number: int, waited: float, retry_after: float | None
    ) -> float | None:
        """Seconds to wait before retry `retry_number`, or None to give up.

        A server's Retry-After wins over our backoff (it knows when it will have room); we give
        up when retries are exhausted or waiting would exceed the total budget.
        """
        if retry_number >= self.max_retries:
            return None
        wait = retry_after if retry_after is not None else self.backoff(retry_number)
        if waited + wait > self.max_total_wait:
            return None
        return wait


def retry_after_seconds(
    headers: Mapping[str, str] | None, now: float | None = None
) -> float | None:
    """The wait a response asks for: `retry-after-ms`, else `Retry-After` (seconds or HTTP date).

    Returns None when absent or unreadable (then our own backoff applies).
    """
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, parsed.timestamp() - (time.time() if now is None else now))

"""The retry policy: how long to wait, and when to give up."""

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from chat.llm.retry import RetryPolicy, retry_after_seconds


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "100", "retry-after": "9"}, 0.1),  # the precise one wins
        ({"retry-after": "-4"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": ""}, None),
        ({}, None),
        (None, None),
    ],
)
def test_retry_after_header_is_read_in_seconds(headers, seconds):
    assert retry_after_seconds(headers) == seconds


def test_retry_after_as_http_date():
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    header = format_datetime(now + timedelta(seconds=7), usegmt=True)

    assert retry_after_seconds({"retry-after": header}, now=now.timestamp()) == 7.0


def test_backoff_grows_exponentially_with_jitter_in_the_upper_half():
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0)
    rng = random.Random(4)

    for retry, step in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0), (6, 8.0)]:
        waits = {policy.backoff(retry, rng) for _ in range(50)}
        assert all(step / 2 <= w <= step for w in waits)
        assert len(waits) > 1  # jittered, not the same every time


def test_server_retry_after_wins_over_backoff():
    assert RetryPolicy(base_delay=0.01).next_wait(0, waited=0.0, retry_after=2.5) == 2.5


def test_gives_up_after_max_retries():
    policy = RetryPolicy(max_retries=2, base_delay=0.01)

    assert policy.next_wait(1, waited=0.0, retry_after=None) is not None
    assert policy.next_wait(2, waited=0.0, retry_after=None) is None


def test_gives_up_rather_than_exceed_the_total_wait():
    policy = RetryPolicy(max_retries=5, max_total_wait=10.0)

    assert policy.next_wait(0, waited=9.0, retry_after=0.5) == 0.5
    assert policy.next_wait(0, waited=9.0, retry_after=2.0) is None

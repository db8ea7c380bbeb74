"""arXiv's terms, shared by every client that talks to arXiv (the API client, the PDF fetcher):
one request at a time and at least ARXIV_DELAY_SECONDS apart, across threads AND processes,
because arXiv counts all our machines together; and how long a 429/503 asks us to wait.

    with arxiv_turn(settings.ARXIV_DELAY_SECONDS):
        response = session.get(url, ...)

Within a process a lock and the monotonic time of the last request; across processes (a live
search in the web process, an ingest or a PDF read in a job worker) a PostgreSQL advisory lock
and the last request's time in the shared cache (PostgreSQL or Redis).
"""

import re
import threading
import time
from contextlib import contextmanager
from email.utils import parsedate_to_datetime

import requests
from django.conf import settings
from django.core.cache import cache
from django.db import connection

MAX_BACKOFF_SECONDS = 300
RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504})

_request_lock = threading.Lock()
_last_request_at = 0.0

_REQUEST_LOCK_KEY = 0x61727172  # "arqr"
_SHARED_LAST_REQUEST = "papers:arxiv-last-request-at"


def user_agent() -> str:
    """Names the site, so arXiv can tell who is asking (its robots policy asks for it)."""
    return f"{settings.SITE_NAME}/1.0 (reads arXiv papers for its catalogue)"


@contextmanager
def _shared_turn(delay_seconds: float):
    if delay_seconds <= 0:  # no spacing asked for (tests, a private mirror)
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [_REQUEST_LOCK_KEY])
    try:
        wait = (cache.get(_SHARED_LAST_REQUEST) or 0.0) + delay_seconds - time.time()
        if wait > 0:
            time.sleep(min(wait, delay_seconds))
        yield
    finally:
        try:
            cache.set(_SHARED_LAST_REQUEST, time.time(), timeout=3600)
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [_REQUEST_LOCK_KEY])


@contextmanager
def arxiv_turn(delay_seconds: float):
    """Hold the one arXiv request slot for the block, starting `delay_seconds` after the last
    request by anyone; the block's end counts as the time of the request."""
    global _last_request_at
    with _request_lock, _shared_turn(delay_seconds):
        wait = _last_request_at + delay_seconds - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        try:
            yield
        finally:
            _last_request_at = time.monotonic()


def backoff_seconds(attempt: int, delay_seconds: float, retry_after: float | None) -> float:
    """Exponential backoff from the polite delay, never shorter than the server's Retry-After."""
    pause = min(MAX_BACKOFF_SECONDS, max(delay_seconds, 0.05) * 2**attempt)
    if retry_after is not None:
        pause = max(pause, min(retry_after, MAX_BACKOFF_SECONDS))
    return pause


def retry_after_seconds(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def short_reason(error: BaseException) -> str:
    """One readable line for a network error: "[Errno 111] Connection refused", not a repr."""
    text = str(error)
    if match := re.search(r"\[Errno -?\d+\] [^'\")]+", text):
        return match.group(0).strip()
    if isinstance(error, requests.Timeout):
        return "timed out"
    if isinstance(error, requests.ConnectionError):
        return "connection failed"
    return text.splitlines()[0][:200] if text else type(error).__name__

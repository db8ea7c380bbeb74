"""The `arxiv` package's client, pointed at settings.ARXIV_API_URL and made polite.

arxiv.Client builds the query URLs and parses the Atom feeds; this subclass replaces only how a
page is fetched (`_parse_feed`, the package's own hook for it), to follow arXiv's API terms:
one request at a time (a process-wide lock), at least ARXIV_DELAY_SECONDS between requests,
exponential backoff on 429/503, 5xx and network errors (honouring Retry-After), at most
ARXIV_MAX_RETRIES retries. It also recognises arXiv's error feed, which the package would
otherwise parse as an empty result.
"""

import logging
import re
import threading
import time
from contextlib import contextmanager
from email.utils import parsedate_to_datetime

import arxiv
import requests
from arxiv import _feed
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from lxml import etree

logger = logging.getLogger("papers.ingest")

REQUEST_TIMEOUT_SECONDS = 30
MAX_BACKOFF_SECONDS = 300
RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504})

# One arXiv request at a time in this process, whichever client makes it.
_request_lock = threading.Lock()
_last_request_at = 0.0


class ArxivUnavailable(Exception):
    """arXiv (or the configured mirror) could not be reached after all retries."""

    def __init__(self, url: str, reason: str):
        self.url = url
        self.reason = reason
        super().__init__(f"{reason} ({url})")


class ArxivQueryError(Exception):
    """arXiv answered with its error feed: the query itself is wrong; retrying will not help."""

    def __init__(self, url: str, message: str):
        self.url = url
        self.message = message
        super().__init__(f"arXiv rejected the query: {message}")


_ATOM = "{http://www.w3.org/2005/Atom}"


def error_feed_message(content: bytes) -> str | None:
    """The message of arXiv's error feed (an entry whose id is .../api/errors#...), else None."""
    if b"/api/errors" not in content:
        return None
    try:
        root = etree.fromstring(
            content, parser=etree.XMLParser(resolve_entities=False, no_network=True)
        )
    except etree.XMLSyntaxError:
        return None
    for entry in root.iter(f"{_ATOM}entry"):
        entry_id = entry.findtext(f"{_ATOM}id") or ""
        if "/api/errors" in entry_id:
            return (entry.findtext(f"{_ATOM}summary") or entry_id).strip()
    return None


def is_complete_feed(content: bytes) -> bool:
    """Whether an Atom feed got to its end. A page cut off half-way (a proxy or arXiv giving up
    mid-response, with a Content-Length that matches what was sent) lacks its closing tag."""
    return content.rstrip().endswith(b"</feed>")


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


def _retry_after_seconds(response: requests.Response) -> float | None:
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


# Across processes (a live search in the web process, an ingest in a job worker): one request at
# a time, ARXIV_DELAY_SECONDS apart, by a PostgreSQL advisory lock and the last request's time in
# the shared cache (PostgreSQL or Redis).
_REQUEST_LOCK_KEY = 0x61727172  # "arqr"
_SHARED_LAST_REQUEST = "papers:arxiv-last-request-at"


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


class PoliteClient(arxiv.Client):
    def __init__(
        self,
        *,
        base_url: str | None = None,
        page_size: int | None = None,
        delay_seconds: float | None = None,
        max_retries: int | None = None,
    ):
        super().__init__(
            page_size=page_size or settings.ARXIV_PAGE_SIZE,
            delay_seconds=settings.ARXIV_DELAY_SECONDS if delay_seconds is None else delay_seconds,
            num_retries=settings.ARXIV_MAX_RETRIES if max_retries is None else max_retries,
        )
        self.base_url = base_url or settings.ARXIV_API_URL
        # An instance attribute shadows the class constant the package formats URLs with.
        self.query_url_format = self.base_url + "?{}"
        self.requests_made = 0

    def fetch_page(self, search: arxiv.Search, start: int, *, first_page: bool = True):
        """One page of results from `start` (a parsed feed: .results, .header.total_results)."""
        url = self._format_url(search, start, self.page_size)
        return self._parse_feed(url, first_page=first_page)

    def _parse_feed(self, url: str, first_page: bool = True, _try_index: int = 0):
        attempt = 0
        while True:
            retry_after = None
            try:
                response = self._get(url)
            except requests.RequestException as exc:
                failure = short_reason(exc)
            else:
                if response.status_code == 200:
                    if message := error_feed_message(response.content):
                        raise ArxivQueryError(url, message)
                    if not is_complete_feed(response.content):
                        # The parser would recover the entries before the cut and the cursor
                        # would move past the rest of the page for good: ask again instead.
                        failure = "truncated feed"
                    else:
                        feed = _feed.parse(response.content)
                        if feed.results or first_page:
                            return feed
                        # arXiv sometimes answers a page in the middle with nothing: ask again.
                        failure = "unexpectedly empty page"
                elif response.status_code in RETRYABLE_STATUSES:
                    failure = f"HTTP {response.status_code}"
                    retry_after = _retry_after_seconds(response)
                else:
                    # 400, 404...: the request is wrong, asking again will not fix it.
                    raise arxiv.HTTPError(url, attempt, response.status_code)
            if attempt >= self.num_retries:
                raise ArxivUnavailable(url, failure)
            pause = min(MAX_BACKOFF_SECONDS, max(self.delay_seconds, 0.05) * 2**attempt)
            if retry_after is not None:
                pause = max(pause, min(retry_after, MAX_BACKOFF_SECONDS))
            logger.debug("arXiv %s on %s; retry %d in %.1f s", failure, url, attempt + 1, pause)
            time.sleep(pause)
            attempt += 1

    def _get(self, url: str) -> requests.Response:
        global _last_request_at
        with _request_lock, _shared_turn(self.delay_seconds):
            wait = _last_request_at + self.delay_seconds - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            try:
                self.requests_made += 1
                return self._session.get(
                    url, headers={"user-agent": arxiv._USER_AGENT}, timeout=REQUEST_TIMEOUT_SECONDS
                )
            finally:
                _last_request_at = time.monotonic()

"""The `arxiv` package's client, pointed at settings.ARXIV_API_URL and made polite.

arxiv.Client builds the query URLs and parses the Atom feeds; this subclass replaces only how a
page is fetched (`_parse_feed`, the package's own hook for it), to follow arXiv's API terms:
one request at a time and at least ARXIV_DELAY_SECONDS apart across processes (politeness.py,
shared with the PDF fetcher),
exponential backoff on 429/503, 5xx and network errors (honouring Retry-After), at most
ARXIV_MAX_RETRIES retries. It also recognises arXiv's error feed, which the package would
otherwise parse as an empty result.
"""

import logging
import time

import arxiv
import requests
from arxiv import _feed
from django.conf import settings
from lxml import etree

from papers.ingest.politeness import (
    RETRYABLE_STATUSES,
    arxiv_turn,
    backoff_seconds,
    retry_after_seconds,
    short_reason,
)

logger = logging.getLogger("papers.ingest")

REQUEST_TIMEOUT_SECONDS = 30


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
                    retry_after = retry_after_seconds(response)
                else:
                    # 400, 404...: the request is wrong, asking again will not fix it.
                    raise arxiv.HTTPError(url, attempt, response.status_code)
            if attempt >= self.num_retries:
                raise ArxivUnavailable(url, failure)
            pause = backoff_seconds(attempt, self.delay_seconds, retry_after)
            logger.debug("arXiv %s on %s; retry %d in %.1f s", failure, url, attempt + 1, pause)
            time.sleep(pause)
            attempt += 1

    def _get(self, url: str) -> requests.Response:
        with arxiv_turn(self.delay_seconds):
            self.requests_made += 1
            return self._session.get(
                url, headers={"user-agent": arxiv._USER_AGENT}, timeout=REQUEST_TIMEOUT_SECONDS
            )

"""Download one paper's PDF from arXiv (settings.ARXIV_PDF_URL), politely and within caps.

Politeness is the API client's (papers/ingest/politeness.py): one request at a time across all
processes, ARXIV_DELAY_SECONDS apart, backoff on 429/5xx honouring Retry-After, at most
ARXIV_MAX_RETRIES retries. The body is read inside the turn, so two downloads never overlap.

Every way a download goes wrong ends in a FullTextError whose reason says which: withdrawn (404),
too large (FULLTEXT_MAX_BYTES, by Content-Length or while reading), an HTML page instead of a PDF
(arXiv's "PDF is being generated" and captcha pages), a truncated body, a stalled server
(no byte for FULLTEXT_TIMEOUT_SECONDS).
"""

import hashlib
import logging
import time
from dataclasses import dataclass

import requests
from django.conf import settings

from papers.fulltext import FullTextError
from papers.ingest.politeness import (
    RETRYABLE_STATUSES,
    arxiv_turn,
    backoff_seconds,
    retry_after_seconds,
    short_reason,
    user_agent,
)

log = logging.getLogger("papers.fulltext")

_READ_CHUNK = 64 * 1024
# A whole download may take this many stall timeouts (a server trickling a byte at a time).
_TOTAL_TIMEOUTS = 10


@dataclass(frozen=True)
class Download:
    url: str
    content: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()


def pdf_url(arxiv_id: str, version: int) -> str:
    return settings.ARXIV_PDF_URL.format(arxiv_id=arxiv_id, version=version)


def fetch_pdf(arxiv_id: str, version: int, *, session: requests.Session | None = None) -> Download:
    """The PDF of `arxiv_id` version `version`, or FullTextError with the reason."""
    url = pdf_url(arxiv_id, version)
    session = session or requests.Session()
    delay = settings.ARXIV_DELAY_SECONDS
    attempt = 0
    while True:
        retry_after = None
        try:
            with arxiv_turn(delay):
                return Download(url, _get(session, url))
        except _Retryable as exc:
            failure, retry_after = exc.reason, exc.retry_after
        if attempt >= settings.ARXIV_MAX_RETRIES:
            raise FullTextError(failure, retryable=True)
        pause = backoff_seconds(attempt, delay, retry_after)
        log.debug("PDF %s: %s; retry %d in %.1f s", url, failure, attempt + 1, pause)
        time.sleep(pause)
        attempt += 1


class _Retryable(Exception):
    def __init__(self, reason: str, retry_after: float | None = None):
        self.reason = reason
        self.retry_after = retry_after


def _get(session: requests.Session, url: str) -> bytes:
    timeout = settings.FULLTEXT_TIMEOUT_SECONDS
    max_bytes = settings.FULLTEXT_MAX_BYTES
    try:
        response = session.get(
            url, headers={"User-Agent": user_agent()}, timeout=(timeout, timeout), stream=True
        )
    except requests.Timeout as exc:
        raise _Retryable(f"arXiv did not answer within {timeout:g} s") from exc
    except requests.RequestException as exc:
        raise _Retryable(f"could not reach arXiv: {short_reason(exc)}") from exc
    with response:
        status = response.status_code
        if status in (404, 410):
            raise FullTextError(f"no PDF at arXiv (HTTP {status}): withdrawn or never posted")
        if status in RETRYABLE_STATUSES:
            raise _Retryable(f"arXiv busy (HTTP {status})", retry_after_seconds(response))
        if status != 200:
            raise FullTextError(f"arXiv refused the PDF (HTTP {status})")
        declared = _content_length(response)
        if declared is not None and declared > max_bytes:
            raise FullTextError(_too_large(declared, max_bytes))
        content = _read_body(response, timeout, max_bytes)
    if declared is not None and len(content) < declared:
        raise _Retryable(f"truncated download: {len(content):,} of {declared:,} bytes")
    if not content.lstrip()[:1024].startswith(b"%PDF-"):
        head = content[:2048].lower()
        kind = response.headers.get("Content-Type", "unknown type").split(";")[0]
        if b"<html" in head or b"<!doctype" in head or kind == "text/html":
            raise FullTextError("arXiv sent an HTML page instead of the PDF")
        raise FullTextError(f"not a PDF ({kind}, {len(content):,} bytes)")
    # A PDF ends with %%EOF (possibly followed by whitespace or an incremental update's junk).
    if b"%%EOF" not in content[-2048:]:
        raise _Retryable(f"truncated download: the PDF stops after {len(content):,} bytes")
    return content


def _content_length(response: requests.Response) -> int | None:
    try:
        return int(response.headers["Content-Length"])
    except (KeyError, ValueError):
        return None


def _too_large(size: int, cap: int) -> str:
    return f"PDF too large: {size / 1e6:.1f} MB (limit {cap / 1e6:.1f} MB)"


def _read_body(response: requests.Response, timeout: float, max_bytes: int) -> bytes:
    deadline = time.monotonic() + timeout * _TOTAL_TIMEOUTS
    parts, size = [], 0
    try:
        for part in response.iter_content(_READ_CHUNK):
            parts.append(part)
            size += len(part)
            if size > max_bytes:
                raise FullTextError(_too_large(size, max_bytes) + " (stopped reading)")
            if time.monotonic() > deadline:
                raise _Retryable(
                    f"download too slow: {size:,} bytes in {timeout * _TOTAL_TIMEOUTS:g} s"
                )
    except requests.exceptions.ConnectionError as exc:
        # urllib3 wraps a read timeout mid-body as a ConnectionError.
        if "timed out" in str(exc).lower() or "timeout" in type(exc.__context__).__name__.lower():
            raise _Retryable(
                f"arXiv stalled: no data for {timeout:g} s after {size:,} bytes"
            ) from exc
        raise _Retryable(f"truncated download: connection lost after {size:,} bytes") from exc
    except requests.exceptions.ChunkedEncodingError as exc:
        raise _Retryable(f"truncated download: connection lost after {size:,} bytes") from exc
    except requests.Timeout as exc:
        raise _Retryable(f"arXiv stalled: no data for {timeout:g} s after {size:,} bytes") from exc
    return b"".join(parts)

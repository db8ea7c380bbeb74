"""Live arXiv search: fetch what the catalogue lacks for one question, import it, index it first.

The query (arXiv's search syntax: `au:`, `cat:`, `ti:`, `abs:`, `submittedDate:[… TO …]`) is
built by the caller from its understanding of the question (chat.understanding.arxiv_query) and
checked here before it is sent. One request through the polite client (ARXIV_API_URL, its 3 s
rule shared across processes), by relevance; the papers found are upserted like any ingest,
marked `arrived_via="live_search"` when they are new, and indexed at once (BM25, then vectors
for those papers only), ahead of any backlog, so the re-asked question can find them.

Each search is an IngestRun (source "live_search") naming the user: the per-user limit
(ARXIV_LIVE_SEARCHES_PER_HOUR) counts those rows, so it holds across processes.
"""

import logging
import re
from dataclasses import dataclass, field
from datetime import timedelta

import arxiv
from django.conf import settings
from django.utils import timezone

from papers.indexing.lexical import index_papers
from papers.indexing.vectors import reembed
from papers.ingest.arxiv_api import _records
from papers.ingest.arxiv_client import ArxivQueryError, ArxivUnavailable, PoliteClient
from papers.ingest.runs import RunRecorder
from papers.ingest.upsert import upsert_papers
from papers.models import IngestRun, Paper, active_embedding_model

logger = logging.getLogger("papers.ingest.live")

MAX_QUERY_CHARS = 500
# Field prefixes the arXiv API knows; anything else is refused before a request is made.
_FIELDS = {"ti", "au", "abs", "cat", "all", "co", "jr", "rn", "id"}
_FIELD = re.compile(r"\b([a-zA-Z]+):")
_DATE_RANGE = re.compile(r"submittedDate:\[\d{8,12} TO \d{8,12}\]")


class InvalidLiveQuery(ValueError):
    """The query is not one we send to arXiv (empty, too long, unknown field, unbalanced)."""


@dataclass
class LiveSearchResult:
    status: str  # "succeeded", "failed", "limited"
    query: str
    run_id: int | None = None
    found: list[str] = field(default_factory=list)  # arXiv ids, in arXiv's relevance order
    new: int = 0
    updated: int = 0
    message: str = ""
    retry_after: int | None = None  # seconds, when limited

    def as_dict(self) -> dict:
        return {
            "status": self.status,
            "query": self.query,
            "run": self.run_id,
            "found": list(self.found),
            "new": self.new,
            "updated": self.updated,
            "message": self.message,
            "retry_after": self.retry_after,
        }


def validate_query(query: str) -> str:
    """The query, stripped; InvalidLiveQuery with a readable reason otherwise."""
    query = " ".join((query or "").split())
    if not query:
        raise InvalidLiveQuery("the arXiv query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidLiveQuery(f"the arXiv query is longer than {MAX_QUERY_CHARS} characters")
    without_dates = _DATE_RANGE.sub("", query)
    if "submittedDate" in without_dates:
        raise InvalidLiveQuery("submittedDate must be [YYYYMMDDhhmm TO YYYYMMDDhhmm]")
    unknown = {f for f in _FIELD.findall(without_dates) if f not in _FIELDS}
    if unknown:
        raise InvalidLiveQuery(f"unknown arXiv search field {', '.join(sorted(unknown))}")
    if not _FIELD.search(without_dates) and without_dates == query:
        raise InvalidLiveQuery("the arXiv query names no field (ti:, abs:, au:, cat:)")
    depth = 0
    for char in without_dates:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            break
    if depth != 0 or without_dates.count('"') % 2:
        raise InvalidLiveQuery("unbalanced parentheses or quotes in the arXiv query")
    return query


def searches_left(user_id: int) -> tuple[int, int | None]:
    """(searches this user may still make this hour, seconds until the next one frees up)."""
    since = timezone.now() - timedelta(hours=1)
    recent = list(
        IngestRun.objects.filter(
            source=IngestRun.Source.LIVE_SEARCH, params__user=user_id, started_at__gte=since
        )
        .order_by("started_at")
        .values_list("started_at", flat=True)
    )
    left = settings.ARXIV_LIVE_SEARCHES_PER_HOUR - len(recent)
    if left > 0:
        return left, None
    frees_at = recent[-left] + timedelta(hours=1) if recent else timezone.now()
    return 0, max(1, int((frees_at - timezone.now()).total_seconds()) + 1)


def live_search(
    query: str, *, user_id: int, client: PoliteClient | None = None
) -> LiveSearchResult:
    """Run one arXiv query for `user_id`, import and index what it finds. InvalidLiveQuery for a
    query we do not send; a "limited" result when the user's hourly searches are used up."""
    query = validate_query(query)
    left, retry_after = searches_left(user_id)
    if not left:
        return LiveSearchResult(
            status="limited",
            query=query,
            retry_after=retry_after,
            message=f"at most {settings.ARXIV_LIVE_SEARCHES_PER_HOUR} arXiv searches an hour; "
            f"the next is possible in {retry_after} s",
        )
    size = settings.ARXIV_LIVE_RESULTS
    client = client or PoliteClient(page_size=size)
    recorder = RunRecorder(
        IngestRun.Source.LIVE_SEARCH,
        params={"kind": "live", "query": query, "user": user_id, "url": client.base_url},
    )
    result = LiveSearchResult(status=IngestRun.Status.RUNNING, query=query, run_id=recorder.run.pk)
    search = arxiv.Search(query=query, max_results=size, sort_by=arxiv.SortCriterion.Relevance)
    try:
        feed = client.fetch_page(search, 0)
        records = _records(feed.results[:size], recorder)
        result.found = list(dict.fromkeys(r.arxiv_id for r in records))
        known = set(
            Paper.objects.filter(arxiv_id__in=result.found).values_list("arxiv_id", flat=True)
        )
        counts = upsert_papers(records)
        recorder.add(counts)
        Paper.objects.filter(arxiv_id__in=set(result.found) - known).update(
            arrived_via=Paper.Arrival.LIVE_SEARCH
        )
        _index_first(result.found)
    except (ArxivUnavailable, ArxivQueryError, arxiv.HTTPError) as exc:
        message = getattr(exc, "message", None) or getattr(exc, "reason", None) or str(exc)
        message = f"arXiv search failed: {message}"
        logger.warning("%s (query %r)", message, query)
        recorder.error(message)
        result.message = message
        result.status = recorder.finish(IngestRun.Status.FAILED).status
        return result
    result.new, result.updated = counts.new, counts.updated
    result.status = recorder.finish().status
    logger.info(
        "live arXiv search run #%s user=%s found=%d new=%d query=%r",
        result.run_id,
        user_id,
        len(result.found),
        result.new,
        query,
    )
    return result


def _index_first(arxiv_ids: list[str]) -> None:
    """BM25 and vectors for these papers now, whatever else waits for the indexing job."""
    papers = Paper.objects.filter(arxiv_id__in=arxiv_ids)
    index_papers(papers.values_list("pk", flat=True))
    model = active_embedding_model()
    if model:
        reembed(papers.not_embedded_with(model).values_list("pk", flat=True))

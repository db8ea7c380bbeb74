"""Live arXiv search against the recorded API replayed over HTTP: the query is checked, sent
once, what it finds is imported (marked as arriving by live search) and indexed at once; users
are limited per hour; the 3 s rule holds across processes."""

import time
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from papers.ingest.arxiv_client import PoliteClient
from papers.ingest.live_search import InvalidLiveQuery, live_search, validate_query
from papers.ingest.politeness import _SHARED_LAST_REQUEST
from papers.models import IngestRun, Paper

pytestmark = pytest.mark.django_db

QUERY = "(ti:software OR abs:software) AND (ti:testing OR abs:testing)"


@pytest.fixture
def live_arxiv(live_arxiv_replay):
    return live_arxiv_replay


def test_live_search_imports_marks_and_indexes_what_it_finds(live_arxiv, owner):
    result = live_search(QUERY, user_id=owner.pk)
    assert result.status == "succeeded" and (result.new, len(result.found)) == (10, 10)
    # One request, exactly the query given, by relevance.
    assert [r.params["search_query"] for r in live_arxiv.requests] == [QUERY]
    assert live_arxiv.requests[0].params["sortBy"] == "relevance"
    papers = Paper.objects.filter(arxiv_id__in=result.found)
    assert set(papers.values_list("arrived_via", flat=True)) == {"live_search"}
    # Indexed at once: BM25 entries and vectors for each, before any indexing job.
    assert papers.filter(lexicon__isnull=False).count() == 10
    assert papers.embedded_with("hashing-test").count() == 10
    run = IngestRun.objects.get(pk=result.run_id)
    assert (run.source, run.status, run.params["user"], run.new) == (
        "live_search",
        "succeeded",
        owner.pk,
        10,
    )


def test_papers_already_known_keep_how_they_arrived(live_arxiv, owner):
    first = live_search(QUERY, user_id=owner.pk)
    Paper.objects.filter(arxiv_id=first.found[0]).update(arrived_via="")
    again = live_search(QUERY, user_id=owner.pk)
    assert (again.new, again.updated) == (0, 0)
    assert Paper.objects.get(arxiv_id=first.found[0]).arrived_via == ""


def test_searches_are_limited_per_user(live_arxiv, owner, stranger):
    assert live_search(QUERY, user_id=owner.pk).status == "succeeded"
    assert live_search(QUERY, user_id=owner.pk).status == "succeeded"
    limited = live_search(QUERY, user_id=owner.pk)
    assert limited.status == "limited" and 3500 < limited.retry_after <= 3601
    assert len(live_arxiv.requests) == 2  # refused before asking arXiv
    assert live_search(QUERY, user_id=stranger.pk).status == "succeeded"  # per user
    # An hour later the oldest search no longer counts.
    IngestRun.objects.filter(params__user=owner.pk).update(
        started_at=timezone.now() - timedelta(hours=1, minutes=1)
    )
    assert live_search(QUERY, user_id=owner.pk).status == "succeeded"


def test_arxiv_down_fails_with_one_line(live_arxiv, owner):
    live_arxiv.fail_next(times=5, status=503)
    result = live_search(QUERY, user_id=owner.pk)
    assert result.status == "failed" and result.message.startswith("arXiv search failed")
    assert Paper.objects.count() == 0


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("", "empty"),
        ("x" * 501, "longer than 500"),
        ("evil:thing AND ti:x", "unknown arXiv search field evil"),
        ("(ti:x OR abs:y", "unbalanced"),
        ('au:"Ann', "unbalanced"),
        ("submittedDate:[2024 TO now]", "submittedDate must be"),
        ("just words", "names no field"),
    ],
)
def test_queries_we_do_not_send(query, reason):
    with pytest.raises(InvalidLiveQuery, match=reason):
        validate_query(query)


def test_the_3_second_rule_holds_across_processes(live_arxiv, settings):
    """Another process (the job worker) asked arXiv a moment ago: this one waits its turn."""
    settings.ARXIV_DELAY_SECONDS = 1.0
    cache.set(_SHARED_LAST_REQUEST, time.time())  # what the other process recorded
    client = PoliteClient(page_size=10)
    started = time.monotonic()
    client._get(live_arxiv.url + "?search_query=all:testing&start=0&max_results=10")
    assert time.monotonic() - started >= 0.9
    assert cache.get(_SHARED_LAST_REQUEST) >= time.time() - 1

"""POST /api/search/arxiv/ end to end against the recorded arXiv API replayed over HTTP: a
question outside the catalogue, "search arXiv for this", the papers imported, the re-asked
question answered from them."""

import pytest

from chat.models import Thread
from papers.models import Paper
from tests.api.test_ask import ask

QUESTION = "software testing techniques"


@pytest.fixture
def live_arxiv(live_arxiv_replay, settings):
    settings.ARXIV_LIVE_SEARCHES_PER_HOUR = 1
    settings.LLM_BACKEND = "extractive"
    return live_arxiv_replay


@pytest.mark.django_db(transaction=True)
def test_search_arxiv_then_the_answer_cites_what_it_imported(
    owner_api, owner, indexed_papers, live_arxiv
):
    thread = Thread.objects.create(owner=owner, title="")
    before = ask(owner_api, thread, QUESTION).json()["answer"]
    cited_before = {source["arxiv_id"] for source in before["sources"]}

    response = owner_api.post("/api/search/arxiv/", {"q": QUESTION}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["query"] == (
        "(ti:software OR abs:software) AND (ti:testing OR abs:testing) AND "
        "(ti:techniques OR abs:techniques)"
    )
    assert [r.params["search_query"] for r in live_arxiv.requests] == [body["query"]]
    assert body["new"] == 10 and len(body["papers"]) == 10
    imported = {paper["arxiv_id"] for paper in body["papers"]}
    assert not imported & cited_before

    after = ask(owner_api, thread, QUESTION).json()["answer"]
    cited = {source["arxiv_id"] for source in after["sources"]}
    assert cited & imported, after["sources"]
    assert after["status"] == "complete" and after["citations"]
    assert Paper.objects.filter(arrived_via="live_search").count() == 10


@pytest.mark.django_db
def test_limits_and_bad_requests(owner_api, anonymous_api, live_arxiv):
    assert (
        anonymous_api.post("/api/search/arxiv/", {"q": QUESTION}, format="json").status_code == 401
    )
    nothing = owner_api.post("/api/search/arxiv/", {"q": "what is new since 2024?"}, format="json")
    assert (
        nothing.status_code == 400
        and "Nothing to search arXiv for" in nothing.json()["error"]["message"]
    )
    assert owner_api.post("/api/search/arxiv/", {"q": QUESTION}, format="json").status_code == 200
    limited = owner_api.post("/api/search/arxiv/", {"q": QUESTION}, format="json")
    assert limited.status_code == 429 and int(limited["Retry-After"]) > 3000
    assert "arXiv searches an hour" in limited.json()["error"]["message"]
    assert len(live_arxiv.requests) == 1


@pytest.mark.django_db
def test_arxiv_down_is_a_502_with_the_reason(owner_api, live_arxiv):
    live_arxiv.fail_next(times=5, status=503)
    response = owner_api.post("/api/search/arxiv/", {"q": QUESTION}, format="json")
    assert response.status_code == 502
    assert response.json()["error"]["code"] == "arxiv_unavailable"

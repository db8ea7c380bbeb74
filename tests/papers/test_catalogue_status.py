"""The catalogue as people see it: coverage and indexing progress on the home page, /papers/,
/papers/catalogue/ (JSON), /healthz, search (BM25 alone while vectors are pending), the admin."""

from datetime import UTC, datetime

import pytest
from django.db import connections

from papers.indexing.run import run_indexing
from papers.ingest.runs import LOCK_KEYS
from papers.models import IngestRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def hashing(settings):
    settings.EMBEDDING_BACKEND = "hashing"


@pytest.fixture
def three_papers(add_paper, hashing):
    add_paper("2401.00001", primary_category="cs.CL", published=datetime(2023, 3, 1, tzinfo=UTC))
    add_paper("2401.00002", primary_category="cs.CL", published=datetime(2024, 5, 2, tzinfo=UTC))
    add_paper("2401.00003", primary_category="cs.LG", published=datetime(2025, 7, 3, tzinfo=UTC))


@pytest.fixture
def indexing_elsewhere(db):
    """A worker indexing in another process: it holds the lock and reports its progress."""
    other = connections.create_connection("default")
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [LOCK_KEYS["indexing"]])
    run = IngestRun.objects.create(
        source=IngestRun.Source.EMBED,
        progress={"stage": "vectors", "done": 1240, "total": 2998, "per_second": 4.6},
    )
    yield run
    other.close()


def test_home_shows_coverage_and_categories(anonymous, three_papers):
    IngestRun.objects.create(
        source=IngestRun.Source.SNAPSHOT,
        status="succeeded",
        finished_at=datetime(2026, 11, 20, 8, 0, tzinfo=UTC),
    )
    page = anonymous.get("/").content.decode()
    assert "3 papers</strong> in the catalogue, published 2023-03-01 to 2025-07-03" in page
    assert "Last ingest 2026-11-20 08:00 UTC" in page
    assert "cs.CL · 2" in page and "cs.LG · 1" in page
    # Nothing indexed yet and nothing running: said, without a progress figure.
    assert "3 papers not yet indexed for semantic search (waiting for indexing)" in page


def test_home_and_papers_show_indexing_progress(anonymous, three_papers, indexing_elsewhere):
    for url in ("/", "/papers/"):
        page = anonymous.get(url).content.decode()
        # 1,758 papers left at 4.6 papers/s: 382 s, about 6 minutes.
        assert "Indexing 1,240 of 2,998 papers, about 6 minutes left" in page, url


def test_catalogue_json_for_polling(anonymous, staff_client, three_papers, indexing_elsewhere):
    IngestRun.objects.create(
        source=IngestRun.Source.ARXIV_API,
        status="failed",
        finished_at=datetime(2026, 11, 22, tzinfo=UTC),
        errors=[
            {"error": "arXiv unreachable at http://x: refused; serving what the catalogue has"}
        ],
    )
    body = anonymous.get("/papers/catalogue/").json()
    assert (body["papers"], body["indexed"], body["pending_index"], body["indexing"]) == (
        3,
        0,
        3,
        True,
    )
    assert body["progress"]["text"] == "Indexing 1,240 of 2,998 papers, about 6 minutes left"
    assert body["newest_published"].startswith("2025-07-03")
    assert body["last_ingest"]["status"] == "failed" and "reason" not in body["last_ingest"]
    staff_body = staff_client.get("/papers/catalogue/").json()
    assert staff_body["last_ingest"]["reason"].startswith("arXiv unreachable")


def test_failed_ingest_reason_shown_to_staff_only(anonymous, staff_client, three_papers):
    IngestRun.objects.create(
        source=IngestRun.Source.ARXIV_API,
        status="failed",
        finished_at=datetime(2026, 11, 22, tzinfo=UTC),
        errors=[{"error": "arXiv refused a request with HTTP 403; stopping this run"}],
    )
    assert "HTTP 403" in staff_client.get("/").content.decode()
    assert "HTTP 403" not in anonymous.get("/").content.decode()


def test_healthz_catalogue_section_stays_200_while_vectors_pending(anonymous, three_papers):
    body = anonymous.get("/healthz")
    assert body.status_code == 200
    data = body.json()
    assert data["degraded"] == ["vectors pending"]
    catalogue = data["catalogue"]
    assert (catalogue["papers"], catalogue["indexed"], catalogue["pending_index"]) == (3, 0, 3)
    assert catalogue["indexing"] is False and catalogue["newest_published"].startswith("2025-07-03")
    assert catalogue["last_ingest"] is None

    run_indexing()
    data = anonymous.get("/healthz").json()
    assert data["degraded"] == [] and data["catalogue"]["pending_index"] == 0
    assert data["catalogue"]["indexed"] == 3


def test_search_says_when_vectors_are_pending(owner_client, three_papers):
    body = owner_client.get("/api/search/", {"q": "study of things"}).json()
    assert body["vectors_pending"] is True
    assert any("keyword match (BM25) alone" in notice for notice in body["notices"])
    page = owner_client.get("/search/", {"q": "study of things"}).content.decode()
    assert "keyword match (BM25) alone" in page

    run_indexing()
    body = owner_client.get("/api/search/", {"q": "study of things"}).json()
    assert body["vectors_pending"] is False and body["notices"] == []


def test_admin_ingest_runs_page_shows_live_progress(staff_client, indexing_elsewhere):
    page = staff_client.get("/admin/papers/ingestrun/").content.decode()
    assert "Indexing 1,240 of 2,998 papers, about 6 minutes left" in page
    assert '<meta http-equiv="refresh" content="5">' in page


def test_vectors_pending_speaks_of_the_papers_found_only(owner_client, three_papers, add_paper):
    """A search checks its own results (a catalogue-wide anti-join costs seconds at 1M papers):
    a paper still without vectors raises the notice where BM25 finds it, not elsewhere."""
    from papers.indexing.lexical import index_missing

    run_indexing()
    add_paper(
        "2401.00004",
        title="Volcanic ash plumes",
        abstract="Volcanic ash plumes drift over oceans.",
    )
    index_missing()  # BM25 knows it at once; its vector comes with the next indexing run
    elsewhere = owner_client.get("/api/search/", {"q": "study of things"}).json()
    assert elsewhere["vectors_pending"] is False and elsewhere["notices"] == []
    found = owner_client.get("/api/search/", {"q": "volcanic ash plumes"}).json()
    assert found["vectors_pending"] is True
    assert "2401.00004" in [r["arxiv_id"] for r in found["results"]]
    assert any("keyword match (BM25) alone" in notice for notice in found["notices"])


def test_vectors_pending_among_papers_counts_visible_papers_and_this_model_only(three_papers):
    from papers.catalogue import vectors_pending
    from papers.models import Paper

    run_indexing()
    papers = list(Paper.objects.order_by("arxiv_id"))
    ids = [p.pk for p in papers]
    assert vectors_pending("hashing-test", ids) is False
    assert vectors_pending("another-model", ids) is True  # vectors of another model do not count

    papers[0].passages.all().delete()
    assert vectors_pending("hashing-test", ids) is True
    assert vectors_pending("hashing-test", ids[1:]) is False  # not among these
    Paper.objects.filter(pk=papers[0].pk).update(hidden=True)
    assert vectors_pending("hashing-test", ids) is False  # hidden: never searched

"""Jobs are plain functions: called directly here, django-q2 only queues them."""

import pytest
from django_q.models import OrmQ

from papers.jobs import index_new_papers_job, ingest_recent_job, refresh_papers_job
from papers.models import Paper, Passage

pytestmark = pytest.mark.django_db


def _queued() -> list[str]:
    return [task.func() for task in OrmQ.objects.order_by("id")]


def test_ingest_recent_queues_indexing_only_when_something_changed(arxiv_api):
    first = ingest_recent_job(categories=["cs.AI"])
    assert first["status"] == "succeeded" and first["new"] == 60 and first["indexing_queued"]
    assert _queued() == ["papers.jobs.index_new_papers_job"]

    second = ingest_recent_job()  # the overlap re-reads the same papers: nothing new
    assert (second["new"], second["updated"], second["indexing_queued"]) == (0, 0, False)
    assert _queued() == ["papers.jobs.index_new_papers_job"]


def test_ingest_recent_queues_reading_full_text_only_with_fulltext_categories(
    arxiv_api, settings
):
    settings.FULLTEXT_CATEGORIES = ["cs.AI"]
    first = ingest_recent_job(categories=["cs.AI"])
    assert first["fulltext_queued"] is True
    assert _queued() == ["papers.jobs.index_new_papers_job", "papers.jobs.read_new_fulltext_job"]

    settings.FULLTEXT_CATEGORIES = []
    Paper.objects.all().delete()
    assert ingest_recent_job(categories=["cs.AI"])["fulltext_queued"] is False
    assert _queued()[-1] == "papers.jobs.index_new_papers_job"


def test_ingest_recent_with_arxiv_down_fails_quietly(db, settings):
    settings.ARXIV_API_URL = "http://127.0.0.1:9/api/query"
    settings.ARXIV_DELAY_SECONDS = 0
    settings.ARXIV_MAX_RETRIES = 0
    result = ingest_recent_job(categories=["cs.AI"])
    assert result["status"] == "failed" and "serving what the catalogue has" in result["message"]
    assert _queued() == []


def test_refresh_job(arxiv_api, settings):
    settings.ARXIV_PAGE_SIZE = 100
    result = refresh_papers_job(["astro-ph/0601001"])
    assert (result["status"], result["new"]) == ("succeeded", 1)
    assert _queued() == ["papers.jobs.index_new_papers_job"]


def test_index_new_papers_embeds_and_indexes_what_is_missing(add_paper, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    add_paper("2401.00001")
    add_paper("2401.00002")
    outcome = index_new_papers_job()
    assert (outcome["status"], outcome["lexical"], outcome["embedded"]) == ("succeeded", 2, 2)
    assert set(Passage.objects.values_list("model", flat=True)) == {"hashing-test"}
    assert Paper.objects.embedded_with("hashing-test").count() == 2
    again = index_new_papers_job()
    assert again["lexical"] == 0 and again["embedded"] == 0 and again["runs"] == []


def test_index_new_papers_gives_a_year_with_enough_abstracts_its_own_index(add_paper, settings):
    from django.db import connection

    settings.EMBEDDING_BACKEND = "hashing"
    settings.DENSE_YEAR_INDEX_MIN = 2
    add_paper("2401.00001")
    add_paper("2401.00002")
    index_new_papers_job()

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname LIKE 'papers_passage_hnsw_y%'"
        )
        definitions = [row[0] for row in cursor.fetchall()]
    assert len(definitions) == 1
    year = Paper.objects.get(arxiv_id="2401.00001").published.year
    assert f"'{year}-01-01 00:00:00+00'" in definitions[0] and "hnsw" in definitions[0]

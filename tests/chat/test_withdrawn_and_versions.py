"""Withdrawn papers stay in the catalogue, flagged, but are not offered as sources; answers cite
the version they read, and the paper page says when a newer one exists."""

from datetime import UTC, datetime

from asgiref.sync import sync_to_async

from chat.pipeline.answer import answer_events
from chat.retrieval.search import search
from papers.indexing.run import run_indexing
from papers.ingest.upsert import PaperRecord, upsert_papers
from papers.models import Paper
from tests.chat.conftest import NOW


def _new_version(arxiv_id: str, version: int, **changes) -> PaperRecord:
    paper = Paper.objects.get(arxiv_id=arxiv_id)
    values = dict(
        arxiv_id=arxiv_id,
        version=version,
        title=paper.title,
        abstract=paper.abstract,
        authors=paper.authors_text.split(", ") if paper.authors_text else [],
        primary_category=paper.primary_category,
        categories=paper.categories,
        published=paper.published,
        updated=datetime(2025, 12, 1, tzinfo=UTC),
    )
    values.update(changes)
    return PaperRecord(**values)


def _revise_catalogue():
    """arXiv's news: 2405.00002 has a v2; 2301.00001's v2 is a withdrawal notice."""
    upsert_papers(
        [
            _new_version("2405.00002", 2),
            _new_version(
                "2301.00001",
                2,
                comments="This paper has been withdrawn by the author due to an error",
            ),
        ]
    )
    run_indexing()


async def test_answers_skip_withdrawn_papers_and_cite_the_version_read(catalogue, settings):
    settings.LLM_BACKEND = "extractive"
    await sync_to_async(_revise_catalogue)()
    withdrawn = await Paper.objects.aget(arxiv_id="2301.00001")
    assert withdrawn.withdrawn and withdrawn.version == 2  # kept, flagged

    events = [e async for e in answer_events("diffusion models for video and images", now=NOW)]
    cards = next(e for e in events if e["type"] == "sources")["sources"]
    assert "2301.00001" not in {card["arxiv_id"] for card in cards}
    card = next(card for card in cards if card["arxiv_id"] == "2405.00002")
    assert card["cited_as"] == "2405.00002v2"
    assert card["url"] == "https://arxiv.org/abs/2405.00002v2"

    # Search leaves it out by default, finds it when asked to include withdrawn papers.
    default = await search("denoising diffusion video generation", k=10, now=NOW)
    assert "2301.00001" not in [hit.arxiv_id for hit in default.hits]
    everything = await search(
        "denoising diffusion video generation", k=10, now=NOW, include_withdrawn=True
    )
    assert "2301.00001" in [hit.arxiv_id for hit in everything.hits]


def test_paper_pages_show_withdrawal_and_newer_versions(catalogue, client):
    _revise_catalogue()
    page = client.get("/papers/2301.00001/").content.decode()
    assert "This paper was withdrawn by its authors (v2" in page
    assert "not offered as a source" in page

    # A source card links the version it read; the page says a newer one exists.
    response = client.get("/papers/2405.00002v1/", follow=True)
    body = response.content.decode()
    assert response.redirect_chain[-1][0] == "/papers/2405.00002/?version=1"
    assert "You followed a link to v1; a newer version exists: v2 of 2025-12-01" in body
    current = client.get("/papers/2405.00002v2/", follow=True).content.decode()
    assert "a newer version exists" not in current

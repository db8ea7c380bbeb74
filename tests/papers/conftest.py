"""Fixtures for the catalogue tests: a replayed arXiv API, small paper factories."""

from datetime import UTC, datetime

import pytest

from papers.ingest.upsert import PaperRecord, upsert_papers
from tests.fakes.arxiv_replay import ReplayArxiv


@pytest.fixture
def arxiv_api(shared_data, settings):
    """A local arXiv API replaying ../shared/data/arxiv-api, wired into the settings.

    cs.AI answers with the recorded "testing" pages (6 pages of 10), cs.CL with the recorded
    empty result, cs.ZZ with arXiv's error feed."""
    replay = ReplayArxiv(
        data_dir=shared_data / "arxiv-api",
        categories={
            "cs.AI": "q_testing",
            "cs.LG": "q_testing",
            "cs.CL": "id_0000.0000",
            "cs.ZZ": "id_abc",
        },
        total_results=60,
    ).start()
    settings.ARXIV_API_URL = replay.url
    settings.ARXIV_DELAY_SECONDS = 0
    settings.ARXIV_PAGE_SIZE = 10
    settings.ARXIV_MAX_RETRIES = 2
    settings.ARXIV_CATEGORIES = ["cs.AI"]
    yield replay
    replay.stop()


def make_record(arxiv_id="2401.00001", version=1, **overrides) -> PaperRecord:
    values = dict(
        arxiv_id=arxiv_id,
        version=version,
        title=f"A study of things, version {version}",
        abstract="We study things carefully and report what we find.",
        authors=["Ada Lovelace", "Alan Turing"],
        primary_category="cs.LG",
        categories=["cs.LG", "stat.ML"],
        published=datetime(2024, 1, 2, 12, 0, tzinfo=UTC),
        updated=datetime(2024, 1, 2 + version, 12, 0, tzinfo=UTC),
    )
    values.update(overrides)
    return PaperRecord(**values)


@pytest.fixture
def add_paper(db):
    """Insert a paper through the real upsert; returns the Paper."""
    from papers.models import Paper

    def add(arxiv_id="2401.00001", **overrides):
        upsert_papers([make_record(arxiv_id, **overrides)])
        return Paper.objects.get(arxiv_id=arxiv_id)

    return add

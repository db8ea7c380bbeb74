"""Upsert rules: keyed by arXiv id, newer version updates, older/equal writes nothing."""

import numpy as np
import pytest
from django.conf import settings
from django.db import connection

from papers.ingest.upsert import looks_withdrawn, upsert_papers
from papers.models import Author, Authorship, Paper, Passage

from .conftest import make_record

pytestmark = pytest.mark.django_db


def _matches(query: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT arxiv_id FROM papers_paper"
            " WHERE search_vector @@ websearch_to_tsquery('english', %s) ORDER BY arxiv_id",
            [query],
        )
        return [row[0] for row in cursor.fetchall()]


def test_new_papers_are_inserted_with_ordered_authors_and_search_vector():
    counts = upsert_papers(
        [
            make_record("2401.00001", authors=["Ada Lovelace", r"Erwin Schr\"odinger"]),
            make_record(
                "hep-th/9901001", title=r"On the $\alpha$-expansion of Schr\"odinger operators"
            ),
        ]
    )
    assert (counts.new, counts.updated, counts.unchanged, counts.skipped) == (2, 0, 0, 0)
    paper = Paper.objects.get(arxiv_id="2401.00001")
    assert paper.authors_text == r"Ada Lovelace, Erwin Schr\"odinger"
    assert [a.author.key for a in paper.authorships.order_by("position")] == [
        "ada lovelace",
        "erwin schrodinger",
    ]
    assert paper.categories == ["cs.LG", "stat.ML"]
    # TeX is kept for display and normalised for search, in titles and author names alike.
    assert Paper.objects.get(arxiv_id="hep-th/9901001").title.startswith(r"On the $\alpha$")
    assert _matches("schrodinger") == ["2401.00001", "hep-th/9901001"]
    assert _matches("alpha expansion") == ["hep-th/9901001"]


def test_authors_are_shared_between_papers_by_folded_name():
    upsert_papers(
        [
            make_record("2401.00001", authors=["Ada Lovelace"]),
            make_record("2401.00002", authors=["ada  LOVELACE", "Grace Hopper"]),
        ]
    )
    assert Author.objects.count() == 2
    assert Author.objects.get(key="ada lovelace").papers.count() == 2


def test_newer_version_updates_older_or_equal_changes_nothing():
    upsert_papers([make_record("2401.00001", version=2, authors=["Ada Lovelace"])])
    paper = Paper.objects.get()
    Paper.objects.filter(pk=paper.pk).update(hidden=True)
    Passage.objects.create(
        paper=paper,
        model="m",
        published=paper.published,
        embedding=np.ones(settings.EMBEDDING_DIMENSIONS, dtype=np.float32),
    )
    before = Paper.objects.get().modified_at

    older = upsert_papers([make_record("2401.00001", version=1, title="Old title")])
    equal = upsert_papers([make_record("2401.00001", version=2, title="Same version, other title")])
    assert (older.unchanged, older.written, equal.unchanged, equal.written) == (1, 0, 1, 0)
    paper = Paper.objects.get()
    assert paper.title == "A study of things, version 2" and paper.modified_at == before

    newer = upsert_papers(
        [
            make_record(
                "2401.00001", version=3, title="New title", authors=["Grace Hopper", "Ada Lovelace"]
            )
        ]
    )
    assert (newer.updated, newer.new) == (1, 0)
    paper = Paper.objects.get()
    assert (paper.version, paper.title) == (3, "New title")
    assert [a.author.name for a in paper.authorships.order_by("position")] == [
        "Grace Hopper",
        "Ada Lovelace",
    ]
    assert paper.hidden, "curation survives a new version"
    assert not paper.passages.exists(), "vectors of the old text are dropped for re-embedding"
    assert _matches("new title") == ["2401.00001"]


def test_same_input_twice_writes_nothing_the_second_time():
    records = [make_record(f"2401.{n:05d}") for n in range(1, 30)]
    first = upsert_papers(records, batch_size=7)
    state = (
        list(Paper.objects.values_list("arxiv_id", "modified_at").order_by("arxiv_id")),
        Author.objects.count(),
        list(Authorship.objects.values_list("id", flat=True).order_by("id")),
    )
    second = upsert_papers(records, batch_size=7)
    assert (first.new, second.new, second.updated, second.unchanged) == (29, 0, 0, 29)
    assert state == (
        list(Paper.objects.values_list("arxiv_id", "modified_at").order_by("arxiv_id")),
        Author.objects.count(),
        list(Authorship.objects.values_list("id", flat=True).order_by("id")),
    )


def test_one_id_twice_in_a_batch_keeps_the_newest_version():
    counts = upsert_papers(
        [
            make_record("2401.00001", version=2, title="v2"),
            make_record("2401.00001", version=1, title="v1"),
        ]
    )
    assert (counts.new, counts.unchanged) == (1, 1)
    assert Paper.objects.get().title == "v2"


def test_records_without_id_or_title_are_skipped():
    counts = upsert_papers([make_record(""), make_record("2401.00002", title="  ")])
    assert counts.skipped == 2 and not Paper.objects.exists()


def test_overlong_fields_and_nul_characters_do_not_fail_the_batch():
    counts = upsert_papers(
        [
            make_record(
                "2401.00001",
                abstract="before\x00after",
                doi="10.1/" + "x" * 500,
                authors=["A" * 400],
            ),
            make_record("2401.00002"),
        ]
    )
    assert counts.new == 2
    paper = Paper.objects.get(arxiv_id="2401.00001")
    assert paper.abstract == "beforeafter" and len(paper.doi) == 200


@pytest.mark.parametrize(
    ("comments", "abstract", "withdrawn"),
    [
        ("This paper has been withdrawn by the author due to an error", "A real abstract.", True),
        ("Withdrawn.", "", True),
        (None, "This paper has been withdrawn due to a crucial error in equation 2.", True),
        (None, "  withdrawn", True),
        ("12 pages, 3 figures", "We prove a theorem about groups.", False),
        (
            None,
            "We revisit a claim whose original proof was withdrawn. " + "Long text. " * 80,
            False,
        ),
    ],
)
def test_looks_withdrawn(comments, abstract, withdrawn):
    assert looks_withdrawn(comments, abstract) is withdrawn


def test_withdrawn_papers_are_kept_and_marked():
    upsert_papers(
        [
            make_record(
                "2401.00001", version=2, withdrawn=True, abstract="This paper has been withdrawn."
            )
        ]
    )
    assert Paper.objects.get().withdrawn


def test_a_newer_version_of_a_read_paper_is_queued_to_be_read_again(
    django_capture_on_commit_callbacks,
):
    # A snapshot holding OPT v2 dropped the chunks of OPT v1's read body with the abstract's
    # vectors, while its full text still said "read": answered from the abstract alone.
    from django_q.models import OrmQ

    from papers.models import FullText

    upsert_papers([make_record("2401.00001", version=1), make_record("2401.00002", version=1)])
    read, unread = Paper.objects.order_by("arxiv_id")
    FullText.objects.create(paper=read, version=1, status=FullText.Status.OK, text="Body.")
    FullText.objects.create(paper=unread, version=1, status=FullText.Status.FAILED, reason="404")
    with django_capture_on_commit_callbacks(execute=True):
        upsert_papers([make_record("2401.00001", version=2), make_record("2401.00002", version=2)])
    statuses = dict(FullText.objects.values_list("paper__arxiv_id", "status"))
    assert statuses == {"2401.00001": FullText.Status.QUEUED, "2401.00002": FullText.Status.FAILED}
    assert OrmQ.objects.count() == 1  # one read queued: the paper that had been read

"""Migration 0020: papers imported from snapshot records that listed only their latest version
were dated by that revision; the rows the old import left are dated by their identifier's month,
beside their vectors and BM25 entries, and no other row changes."""

import importlib
import json
from datetime import UTC, datetime

import pytest
from django.apps import apps
from django.db.models import F

from papers.identifiers import submission_month
from papers.indexing.lexical import index_missing
from papers.indexing.vectors import embed_missing
from papers.ingest.snapshot import parse_snapshot_record
from papers.ingest.upsert import upsert_papers
from papers.models import Paper, PaperLexicon, Passage

pytestmark = pytest.mark.django_db

migration = importlib.import_module("papers.migrations.0020_dates_of_records_without_v1")


def test_rows_of_records_without_v1_get_their_identifiers_month(shared_data, add_paper, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    # The shared PDFs' records list only the version in the file (the Transformer's v7, 2023):
    # imported as the import did before it knew, published = that version's date.
    lines = (shared_data / "arxiv-pdf" / "metadata.jsonl").read_text().splitlines()
    upsert_papers([parse_snapshot_record(json.loads(line)) for line in lines if line.strip()])
    Paper.objects.filter(version__gt=1).update(published=F("updated"))
    # A record listing v1, dated (as daily listings are) two days past its identifier's month,
    # and one with v1 and v3 whose v1 date is right.
    listed = add_paper("2506.00001", published=datetime(2025, 7, 2, tzinfo=UTC))
    revised = add_paper(
        "2301.00002",
        version=3,
        published=datetime(2023, 1, 5, tzinfo=UTC),
        updated=datetime(2024, 2, 1, tzinfo=UTC),
    )
    embed_missing()
    index_missing()
    transformer = Paper.objects.get(arxiv_id="1706.03762")
    assert transformer.published == datetime(2023, 8, 2, tzinfo=UTC)
    stale = set(
        Paper.objects.filter(version__gt=1, published=F("updated")).values_list("pk", flat=True)
    )
    untouched = dict(Paper.objects.exclude(pk__in=stale).values_list("pk", "published"))

    migration.redate(apps, None)

    transformer.refresh_from_db()
    assert transformer.published == datetime(2017, 6, 1, tzinfo=UTC)
    assert transformer.updated == datetime(2023, 8, 2, tzinfo=UTC) and transformer.version == 7
    # Its vector and its BM25 entry carry the new date (date windows find it in 2017).
    assert set(Passage.objects.filter(paper=transformer).values_list("published", flat=True)) == {
        datetime(2017, 6, 1, tzinfo=UTC)
    }
    assert PaperLexicon.objects.get(paper=transformer).published == transformer.published
    for paper in Paper.objects.filter(pk__in=stale):  # none dated past its identifier's month
        month = submission_month(paper.arxiv_id)
        assert paper.published < month.replace(
            month=month.month % 12 + 1, year=month.year + (month.month == 12)
        )
    assert dict(Paper.objects.exclude(pk__in=stale).values_list("pk", "published")) == untouched
    assert listed.pk in untouched and revised.pk in untouched

    # Running it again changes nothing.
    before = dict(Paper.objects.values_list("pk", "published"))
    migration.redate(apps, None)
    assert dict(Paper.objects.values_list("pk", "published")) == before

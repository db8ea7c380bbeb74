"""Publication dates of papers imported from snapshot records that listed only their latest
version (vN, N > 1): the import dated them by that revision (the Transformer, 1706.03762v7, by
2023-08-02); since papers.ingest.snapshot.not_after_first_month it dates them by the month of
their identifier, as here for the rows already imported.

Which rows: what such a record leaves is told apart by what is stored: version > 1 with
`published` equal to `updated` (v1's date is before vN's in every record that lists v1), and
`published` past the identifier's month. Rows of records with only `update_date` (version 1)
cannot be told apart from records listing only v1, whose v1 date may lie a few days past the
month (daily listings): they are left as they are. A re-import does not fix either (an
unchanged version is not written again)."""

from collections import defaultdict

from django.db import migrations
from django.db.models import F
from django.utils import timezone

BATCH = 2000


def redate(apps, schema_editor):
    from papers.identifiers import InvalidArxivId
    from papers.indexing.lexical import index_papers
    from papers.ingest.snapshot import not_after_first_month

    Paper = apps.get_model("papers", "Paper")
    Passage = apps.get_model("papers", "Passage")
    by_date = defaultdict(list)
    rows = Paper.objects.filter(version__gt=1, published=F("updated")).values_list(
        "pk", "arxiv_id", "published"
    )
    for pk, arxiv_id, published in rows.iterator(chunk_size=BATCH):
        try:
            redated = not_after_first_month(published, arxiv_id)
        except InvalidArxivId:
            continue
        if redated != published:
            by_date[redated].append(pk)
    now = timezone.now()
    fixed = []
    for date, ids in by_date.items():
        for start in range(0, len(ids), BATCH):
            batch = ids[start : start + BATCH]
            Paper.objects.filter(pk__in=batch).update(published=date, modified_at=now)
            # Copied beside each vector for filtered searches.
            Passage.objects.filter(paper_id__in=batch).update(published=date)
            fixed += batch
    # The BM25 entries carry the date too (windows, champion years): indexed again, as an edit.
    if fixed:
        index_papers(fixed)


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0019_fulltext_chunker"),
    ]

    operations = [
        migrations.RunPython(redate, migrations.RunPython.noop),
    ]

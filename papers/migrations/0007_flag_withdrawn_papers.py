"""Flag papers whose text says they were withdrawn but whose row is not marked (rows written
before a source's withdrawal notice was read). Withdrawn papers stay; search and answers skip them."""

from django.db import migrations


def flag_withdrawn(apps, schema_editor):
    from papers.ingest.upsert import looks_withdrawn

    Paper = apps.get_model("papers", "Paper")
    candidates = Paper.objects.filter(withdrawn=False).filter(
        # A cheap superset first (one scan); the exact rule is the ingest's own.
        comments__icontains="withdrawn"
    ) | Paper.objects.filter(withdrawn=False, abstract__icontains="withdrawn")
    ids = [
        pk
        for pk, comments, abstract in candidates.values_list("pk", "comments", "abstract")
        if looks_withdrawn(comments, abstract)
    ]
    Paper.objects.filter(pk__in=ids).update(withdrawn=True)


class Migration(migrations.Migration):
    dependencies = [("papers", "0006_ingestrun_progress")]

    operations = [migrations.RunPython(flag_withdrawn, migrations.RunPython.noop)]

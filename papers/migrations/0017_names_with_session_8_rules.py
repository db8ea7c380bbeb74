"""Names again for every paper: the rules of papers.indexing.names changed after 0015 named the
catalogue (short or made-up title heads only, coined acronyms, acronym long forms read back from
the bracket). A later change of the rules adds a migration like this one (~0.2 ms a paper)."""

from django.db import migrations


def rename_every_paper(apps, schema_editor):
    from papers.indexing.names import name_papers

    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT id FROM papers_paper ORDER BY id")
        ids = [row[0] for row in cursor.fetchall()]
    for start in range(0, len(ids), 2000):
        name_papers(ids[start : start + 2000])


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0016_lexical_year_floors"),
    ]

    operations = [
        migrations.RunPython(rename_every_paper, migrations.RunPython.noop),
    ]

"""Names again for every paper: the rules of papers.indexing.names changed after 0015 named the
catalogue (short or made-up title heads only, coined acronyms, acronym long forms read back from
the bracket). A later change of the rules adds a migration like this one (~0.2 ms a paper)."""

from django.db import migrations


def rename_every_paper(apps, schema_editor):
    from papers.indexing.names import name_every_paper

    name_every_paper()


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0016_lexical_year_floors"),
    ]

    operations = [
        migrations.RunPython(rename_every_paper, migrations.RunPython.noop),
    ]

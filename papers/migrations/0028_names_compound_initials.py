"""Names again for every paper: a hyphenated name of three or more words ("Fusion-in-Decoder")
names its paper by its initials too ("FiD"), as readers write it (papers.indexing.names
.compound_initials; ~0.2 ms a paper, as 0017)."""

from django.db import migrations


def rename_every_paper(apps, schema_editor):
    from papers.indexing.names import name_every_paper

    name_every_paper()


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0027_passage_sentences"),
    ]

    operations = [
        migrations.RunPython(rename_every_paper, migrations.RunPython.noop),
    ]

"""Names again for every paper: a body's coined acronym whose long form has a word of the title
("residual nets (ResNets)" in "Deep Residual Learning for Image Recognition") now names its
paper (papers.indexing.names)."""

from django.db import migrations


def rename_every_paper(apps, schema_editor):
    from papers.indexing.names import name_every_paper

    name_every_paper()


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0017_names_with_session_8_rules"),
    ]

    operations = [
        migrations.RunPython(rename_every_paper, migrations.RunPython.noop),
    ]

"""Names again for every paper: "we propose operating GANs on …" no longer makes GANs the
paper's name (a gerund after "we propose" does something with the name), and "a conditional GAN
(FC-GAN)" names FC-GAN (papers.indexing.names; ~0.2 ms a paper, as 0017)."""

from django.db import migrations


def rename_every_paper(apps, schema_editor):
    from papers.indexing.names import name_every_paper

    name_every_paper()


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0021_fulltext_chunker_db_default"),
    ]

    operations = [
        migrations.RunPython(rename_every_paper, migrations.RunPython.noop),
    ]

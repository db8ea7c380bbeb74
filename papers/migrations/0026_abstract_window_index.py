"""A B-tree of the abstracts' (model, published) alone, for the exact scan of a window's abstracts.

papers_passage_model_pub_idx holds every passage, so with full text read the exact scan of a
window fetched each chunk of the window only to drop it for its kind (~19x the rows at 1M chunks).
Built concurrently: reading papers and answering go on while it builds.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("papers", "0025_index_read_bodies"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="passage",
            index=models.Index(
                condition=models.Q(("kind", "abstract")),
                fields=["model", "published"],
                name="papers_abstract_pub_idx",
            ),
        ),
    ]

"""The papers read before the bodies' BM25 index existed, indexed into it (a paper read from now
on is indexed as it is read: papers.fulltext.read.index_words). A migration of its own: the
tables' indexes exist only once 0024 has ended, and the bulk rebuild drops and recreates them."""

from django.db import migrations


def index_read_bodies(apps, schema_editor):
    # In bulk (a pass for the frequencies, floors from a sample, a pass writing the papers): an
    # install with many papers read would otherwise give thousands of common words their lists
    # one GIN read at a time.
    from papers.indexing.lexical import BODIES, rebuild

    rebuild(lexicon=BODIES)


class Migration(migrations.Migration):
    dependencies = [("papers", "0024_body_lexicon")]

    operations = [migrations.RunPython(index_read_bodies, migrations.RunPython.noop)]

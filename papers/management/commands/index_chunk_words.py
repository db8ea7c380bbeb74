from django.core.management.base import BaseCommand

from papers.indexing import chunkwords


class Command(BaseCommand):
    help = (
        "Rebuild the champion lists of the full-text chunks' common words (papers.indexing."
        "chunkwords): which words are common, their floors, and every chunk at or above them. "
        "Papers read afterwards join the lists as they are read; run it again after a bulk load "
        "and now and then as full text grows (a word that became common since has no list, and "
        "the chunk word search reads it level by level until then)."
    )

    def handle(self, *args, **options):
        info = chunkwords.rebuild(say=lambda line: self.stdout.write(line))
        self.stdout.write(
            f"{info.get('words', 0)} common words, {info.get('postings', 0)} postings"
            f" over {info.get('chunks', 0)} chunks in {info.get('seconds', 0)} s"
        )

from django.core.management.base import BaseCommand

from papers.indexing import chunkwords, lexical


class Command(BaseCommand):
    help = (
        "Rebuild the full text's word indexes: the champion lists of the chunks' common words "
        "(papers.indexing.chunkwords: which words are common, their floors, and every chunk at or "
        "above them) and the bodies' BM25 index (papers.indexing.lexical.BODIES: each read "
        "paper's text as one document, fresh document frequencies, floors and champions). Papers "
        "read afterwards join both as they are read; run it again after a bulk load and now and "
        "then as full text grows (a word that became common since has no list, and is read "
        "whole or level by level until then)."
    )

    def handle(self, *args, **options):
        info = chunkwords.rebuild(say=lambda line: self.stdout.write(line))
        self.stdout.write(
            f"{info.get('words', 0)} common words, {info.get('postings', 0)} postings"
            f" over {info.get('chunks', 0)} chunks in {info.get('seconds', 0)} s"
        )
        bodies = lexical.rebuild(lexicon=lexical.BODIES)
        self.stdout.write(f"bodies' BM25 index: {bodies} papers")

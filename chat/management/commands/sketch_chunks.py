"""Make the sentence sketches of read papers that lack a current one (chat.retrieval.sentence_sketch).

    manage.py sketch_chunks

Reading a paper sketches its chunks, and the nightly indexing job queues the same work for
sketches made by older code; this does it at once (after an upgrade, or for a catalogue read
before sketches existed), with a progress bar. A paper without a current sketch is still
searched, only its first search is slower.
"""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand
from tqdm import tqdm

from chat.retrieval.sentence_sketch import sketch_stale


class Command(BaseCommand):
    help = "Sketch the sentences of read papers' chunks that lack a current sketch."

    def handle(self, *args, **options):
        bar = None

        def progress(done: int, total: int) -> None:
            nonlocal bar
            if bar is None:
                bar = tqdm(total=total, unit="paper", desc="sketching sentences",
                           file=sys.stderr, disable=options["verbosity"] == 0)  # fmt: skip
            bar.update(done - bar.n)

        result = sketch_stale(progress)
        if bar is not None:
            bar.close()
        self.stdout.write(
            f"{result['sketched']} papers sketched ({result['stale']} lacked a current sketch)"
        )

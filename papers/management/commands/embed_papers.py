import time

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from papers.embeddings import BACKENDS, EmbeddingError, get_embedder
from papers.indexing.run import run_indexing
from papers.indexing.vectors import embed_missing, reembed_all
from papers.ingest.runs import RunBusy, exclusive
from papers.management.arguments import positive_int
from papers.models import IngestRun

# How often --wait looks whether the active run has finished.
WAIT_POLL_SECONDS = 2.0


def _shard(text: str) -> tuple[int, int]:
    index, _, count = text.partition("/")
    index, count = int(index), int(count)
    if count < 1 or not 0 <= index < count:
        raise ValueError(text)
    return index, count


class Command(BaseCommand):
    help = (
        "Index papers that lack BM25 entries or vectors for the active embedding model "
        "(resumable: each batch commits). One indexing run at a time: while another is active "
        "this names it and exits (--wait waits for it). --reembed-all recomputes every paper's "
        "passages for that model."
    )

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=positive_int, help="embed at most N papers")
        parser.add_argument("--batch-size", type=positive_int, help="papers per batch and commit")
        parser.add_argument(
            "--backend", choices=BACKENDS, help="embedding backend (default EMBEDDING_BACKEND)"
        )
        parser.add_argument(
            "--shard",
            type=_shard,
            metavar="I/N",
            help="only papers whose id is I modulo N: run N of these (on N machines) to share a "
            "backfill (shards never overlap, so they do not take the one-run lock)",
        )
        parser.add_argument(
            "--reembed-all",
            action="store_true",
            dest="replace_all",
            help="replace the passages of every paper for this model (e.g. after a splitter change)",
        )
        parser.add_argument(
            "--wait",
            action="store_true",
            help="if another indexing run is active, wait for it to finish, then index what is left",
        )

    def handle(self, *args, limit, batch_size, backend, replace_all, shard, wait, **options):
        if shard and replace_all:
            raise CommandError(
                "--shard shares a backfill of missing vectors; not with --reembed-all"
            )
        announced = False
        while True:
            busy = self._embed(limit, batch_size, backend, replace_all, shard, options)
            if busy is None:
                return
            if not announced:
                then = "waiting for it…" if wait else "leaving the work to it (--wait waits)"
                self.stdout.write(f"{busy}; {then}")
                announced = True
            if not wait:
                return  # exit status 0: the work is being done
            time.sleep(WAIT_POLL_SECONDS)

    def _embed(self, limit, batch_size, backend, replace_all, shard, options) -> str | None:
        """Index; None when done, else the line naming the active run that kept us from it."""
        progress = options["verbosity"] > 0
        try:
            embedder = get_embedder(backend)
            if shard:
                result = embed_missing(
                    shard=shard,
                    embedder=embedder,
                    batch_size=batch_size,
                    limit=limit,
                    progress=progress,
                )
            elif replace_all or limit:
                with exclusive("indexing", IngestRun.Source.EMBED):
                    run = reembed_all if replace_all else embed_missing
                    result = run(
                        embedder=embedder, batch_size=batch_size, limit=limit, progress=progress
                    )
            else:
                outcome = run_indexing(embedder=embedder, batch_size=batch_size, progress=progress)
                if outcome.status == "busy":
                    return outcome.message
                runs = ", ".join(f"#{pk}" for pk in outcome.run_ids)
                self.stdout.write(
                    f"{outcome.model}: {outcome.embedded} papers, {outcome.passages} passages, "
                    f"{outcome.lexical} into BM25, in {outcome.seconds:.1f} s (indexing run {runs})"
                )
                return None
        except RunBusy as exc:
            return str(exc)
        except (EmbeddingError, ImproperlyConfigured) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"{result.model}: {result.papers} papers, {result.passages} passages, "
            f"{result.skipped} without text, in {result.seconds:.1f} s "
            f"({result.papers_per_second:.1f} papers/s)"
        )
        return None

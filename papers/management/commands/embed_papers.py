from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from papers.embeddings import BACKENDS, EmbeddingError, get_embedder
from papers.indexing.vectors import embed_missing, reembed_all


def _shard(text: str) -> tuple[int, int]:
    index, _, count = text.partition("/")
    index, count = int(index), int(count)
    if count < 1 or not 0 <= index < count:
        raise ValueError(text)
    return index, count


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


class Command(BaseCommand):
    help = (
        "Embed papers that lack passages for the active embedding model (resumable: each batch "
        "commits). --reembed-all recomputes every paper's passages for that model."
    )

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=_positive, help="embed at most N papers")
        parser.add_argument("--batch-size", type=_positive, help="papers per batch and commit")
        parser.add_argument(
            "--backend", choices=BACKENDS, help="embedding backend (default EMBEDDING_BACKEND)"
        )
        parser.add_argument(
            "--shard",
            type=_shard,
            metavar="I/N",
            help="only papers whose id is I modulo N: run N of these (on N machines) to share a backfill",
        )
        parser.add_argument(
            "--reembed-all",
            action="store_true",
            dest="replace_all",
            help="replace the passages of every paper for this model (e.g. after a splitter change)",
        )

    def handle(self, *args, limit, batch_size, backend, replace_all: bool, shard, **options):
        if shard and replace_all:
            raise CommandError("--shard shares a backfill of missing vectors; not with --reembed-all")
        try:
            embedder = get_embedder(backend)
            kwargs = {"batch_size": batch_size, "limit": limit,
                      "progress": options["verbosity"] > 0, "embedder": embedder}
            if replace_all:
                result = reembed_all(**kwargs)
            else:
                result = embed_missing(shard=shard, **kwargs)
        except (EmbeddingError, ImproperlyConfigured) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"{result.model}: {result.papers} papers, {result.passages} passages, "
            f"{result.skipped} without text, in {result.seconds:.1f} s "
            f"({result.papers_per_second:.1f} papers/s)"
        )

"""Embed papers into Passage rows: what lacks vectors for the active model, or a chosen set again.

Work goes in keyset batches of papers (by primary key): fetch a batch, split each paper into
passages, embed them, then insert them in one short transaction. Every batch commits on its own,
so a killed run keeps what it finished and the next run carries on with what is still missing.
Inference happens outside any transaction, so no lock is held while the model thinks.

Hidden papers are embedded too: unhiding one makes it searchable at once.
"""

import logging
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from tqdm import tqdm

from papers.embeddings import Embedder, get_embedder
from papers.indexing.passages import document_text, sentence_spans, split_passages
from papers.models import Paper, Passage

log = logging.getLogger("papers.indexing.vectors")


@dataclass
class EmbedResult:
    model: str
    papers: int = 0  # papers that got passages
    passages: int = 0
    skipped: int = 0  # papers with no text at all (nothing to embed)
    batches: int = 0
    seconds: float = 0.0
    # Wall-clock seconds per stage: fetch (database read), split, embed (model), write.
    timings: dict[str, float] = field(
        default_factory=lambda: {"fetch": 0.0, "split": 0.0, "embed": 0.0, "write": 0.0}
    )

    @property
    def papers_per_second(self) -> float:
        return self.papers / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict:
        return {
            "model": self.model,
            "papers": self.papers,
            "passages": self.passages,
            "skipped": self.skipped,
            "batches": self.batches,
            "seconds": round(self.seconds, 3),
            "timings": {k: round(v, 3) for k, v in self.timings.items()},
        }


def embed_missing(
    *,
    batch_size: int | None = None,
    limit: int | None = None,
    progress: bool = False,
    embedder: Embedder | None = None,
    shard: tuple[int, int] | None = None,
    on_batch: Callable[[EmbedResult], None] | None = None,
    kind: str = Passage.Kind.ABSTRACT,
) -> EmbedResult:
    """Embed every paper lacking passages for the embedder's model (at most `limit` papers);
    with kind "sentence", each sentence of every paper whose abstract is embedded and whose
    sentences are not (settings.SENTENCE_VECTORS).

    `shard=(i, n)` takes only papers whose id is i modulo n, so n runs on n machines share a
    backfill without claiming rows (the embedding itself runs outside any transaction).
    `on_batch(result so far)` is called after each committed batch (progress reports).
    """
    embedder = embedder or get_embedder()
    sentences = kind == Passage.Kind.SENTENCE
    if sentences:
        candidates = Paper.objects.without_sentences(embedder.name)
    else:
        candidates = Paper.objects.not_embedded_with(embedder.name)  # hidden ones too
    if shard is not None:
        index, count = shard
        if count < 1 or not 0 <= index < count:
            raise ValueError(f"shard must be i/n with 0 <= i < n, not {index}/{count}")
        candidates = candidates.alias(shard_key=F("pk") % count).filter(shard_key=index)
    return _embed_in_batches(
        candidates,
        embedder=embedder,
        batch_size=batch_size,
        limit=limit,
        progress=progress,
        replace=False,
        action="embed_sentences" if sentences else "embed_missing",
        on_batch=on_batch,
        kind=kind,
    )


def embed_sentences(**options) -> EmbedResult:
    """`embed_missing` for the sentences (Passage kind "sentence")."""
    return embed_missing(kind=Passage.Kind.SENTENCE, **options)


def reembed(paper_ids: Iterable[int], embedder: Embedder | None = None) -> EmbedResult:
    """Replace the passages of these papers for the embedder's model (after a text change, or
    from the admin). Ids of papers that do not exist are ignored."""
    ids = sorted({int(pk) for pk in paper_ids})
    embedder = embedder or get_embedder()
    return _embed_in_batches(
        Paper.objects.filter(pk__in=ids),
        embedder=embedder,
        replace=True,
        action="reembed",
    )


def reembed_all(
    *,
    batch_size: int | None = None,
    limit: int | None = None,
    progress: bool = False,
    embedder: Embedder | None = None,
) -> EmbedResult:
    """Recompute the passages of every paper for the embedder's model, batch by batch, so search
    keeps working on the old vectors of papers not reached yet."""
    embedder = embedder or get_embedder()
    return _embed_in_batches(
        Paper.objects.all(),
        embedder=embedder,
        batch_size=batch_size,
        limit=limit,
        progress=progress,
        replace=True,
        action="reembed_all",
    )


def _embed_in_batches(
    candidates: QuerySet,
    *,
    embedder: Embedder,
    batch_size: int | None = None,
    limit: int | None = None,
    progress: bool = False,
    replace: bool,
    action: str,
    on_batch: Callable[[EmbedResult], None] | None = None,
    kind: str = Passage.Kind.ABSTRACT,
) -> EmbedResult:
    batch_size = settings.EMBEDDING_BATCH_SIZE if batch_size is None else batch_size
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be 0 or more, not {limit}")

    result = EmbedResult(model=embedder.name)
    started = time.perf_counter()
    total = candidates.count() if progress else None
    if total is not None and limit is not None:
        total = min(total, limit)
    rows = candidates.order_by("pk").values_list("pk", "title", "abstract", "published")
    bar = tqdm(
        total=total,
        unit="paper",
        desc=f"embedding ({embedder.name})",
        file=sys.stderr,
        disable=not progress,
        dynamic_ncols=True,
        smoothing=0.05,
    )
    last_pk = 0
    with bar:
        while True:
            take = batch_size if limit is None else min(batch_size, limit - result.papers)
            if take <= 0:
                break
            t0 = time.perf_counter()
            # Keyset, not offset: embedded papers leave `candidates`, and a paper that yields no
            # passage must not be fetched again forever.
            batch = list(rows.filter(pk__gt=last_pk)[:take])
            result.timings["fetch"] += time.perf_counter() - t0
            if not batch:
                break
            last_pk = batch[-1][0]
            _embed_batch(batch, embedder, replace, result, kind)
            bar.update(len(batch))
            bar.set_postfix(passages=result.passages, refresh=False)
            if on_batch is not None:
                result.seconds = time.perf_counter() - started
                on_batch(result)

    result.seconds = time.perf_counter() - started
    t = result.timings
    log.info(
        "%s finished model=%s papers=%d passages=%d skipped=%d batches=%d seconds=%.2f "
        "rate=%.1f/s fetch=%.2f split=%.2f embed=%.2f write=%.2f",
        action,
        result.model,
        result.papers,
        result.passages,
        result.skipped,
        result.batches,
        result.seconds,
        result.papers_per_second,
        t["fetch"],
        t["split"],
        t["embed"],
        t["write"],
    )
    return result


def _embed_batch(
    batch: list[tuple],
    embedder: Embedder,
    replace: bool,
    result: EmbedResult,
    kind: str = Passage.Kind.ABSTRACT,
):
    """Split (into passages, or sentences for kind "sentence"), embed and store one batch of
    (pk, title, abstract, published) rows."""
    split = split_passages if kind == Passage.Kind.ABSTRACT else sentence_spans
    t0 = time.perf_counter()
    texts: list[str] = []
    owners: list[tuple] = []  # (paper pk, published, span) per text
    for pk, title, abstract, published in batch:
        document = document_text(title, abstract)
        spans = split(document, embedder.count_tokens, embedder.max_tokens)
        if not spans:
            result.skipped += 1
        for span in spans:
            texts.append(span.text(document))
            owners.append((pk, published, span))
    t1 = time.perf_counter()
    vectors = embedder.embed_documents(texts)
    t2 = time.perf_counter()
    passages = [
        Passage(
            paper_id=pk,
            model=embedder.name,
            kind=kind,
            position=span.position,
            start=span.start,
            end=span.end,
            published=published,
            embedding=vector,
        )
        for (pk, published, span), vector in zip(owners, vectors, strict=True)
    ]
    with transaction.atomic():
        if replace:
            # New abstract passages: its sentences go too, the next embed_sentences embeds them
            # from the new text.
            kinds = {kind, Passage.Kind.SENTENCE} if kind == Passage.Kind.ABSTRACT else {kind}
            Passage.objects.filter(
                paper_id__in=[row[0] for row in batch], model=embedder.name, kind__in=kinds
            ).delete()
        # A concurrent run may have embedded the same paper meanwhile (same model, same text):
        # keep its rows rather than fail the batch.
        Passage.objects.bulk_create(passages, ignore_conflicts=True)
    t3 = time.perf_counter()
    result.timings["split"] += t1 - t0
    result.timings["embed"] += t2 - t1
    result.timings["write"] += t3 - t2
    result.papers += len({pk for pk, _, _ in owners})
    result.passages += len(passages)
    result.batches += 1

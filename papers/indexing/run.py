"""One indexing run at a time: the BM25 entries and vectors of whatever papers lack them.

Every import and ingest queues an indexing job; two of them used to run side by side on the
cluster's two workers and embed the same papers twice. Now a run holds the "indexing" lock
(papers.ingest.runs.exclusive) and a second one returns at once, naming the active run. The
active run picks up papers that arrive while it works (it keeps going until a pass finds nothing
missing) and checks once more after letting go of the lock: a job that found the lock taken just
before it was released has left its papers to us.

Each run is an IngestRun (source "embed": `new` counts the papers it embedded) whose `progress`
is updated batch by batch: what the home page, /papers/, /healthz and the admin show as
"Indexing N of M papers".
"""

import logging
import time
from dataclasses import dataclass, field

from django.conf import settings

from papers.embeddings import Embedder, get_embedder
from papers.indexing.lexical import has_stale, index_missing
from papers.indexing.vectors import EmbedResult, embed_missing, embed_sentences
from papers.ingest.runs import RunBusy, RunRecorder, exclusive
from papers.models import IngestRun, Paper

log = logging.getLogger("papers.indexing")
# Papers whose sentences (settings.SENTENCE_VECTORS) one pass embeds before the abstracts of
# papers that arrived meanwhile get theirs: about a minute of embedding.
SENTENCE_PASS_PAPERS = 1000


@dataclass
class IndexingResult:
    status: str  # "succeeded", "failed" or "busy"
    model: str = ""
    run_ids: list[int] = field(default_factory=list)
    lexical: int = 0  # papers (re)entered into the BM25 index
    embedded: int = 0  # papers that got vectors
    passages: int = 0
    seconds: float = 0.0
    message: str = ""

    def as_dict(self) -> dict:
        return {
            "status": self.status,
            "model": self.model,
            "runs": self.run_ids,
            "lexical": self.lexical,
            "embedded": self.embedded,
            "passages": self.passages,
            "seconds": round(self.seconds, 3),
            "message": self.message,
        }


def pending_papers(model: str):
    """Papers still without vectors of `model` (hidden ones too: unhiding must be instant)."""
    return Paper.objects.not_embedded_with(model)


def run_indexing(
    *, embedder: Embedder | None = None, batch_size: int | None = None, progress: bool = False
) -> IndexingResult:
    """Index what is missing, unless another run is at it (then status "busy", at once)."""
    embedder = embedder or get_embedder()
    result = IndexingResult(status=IngestRun.Status.SUCCEEDED, model=embedder.name)
    started = time.perf_counter()
    while True:
        try:
            with exclusive("indexing", IngestRun.Source.EMBED):
                if not _anything_missing(embedder):
                    break  # no run row for a run with nothing to do
                embedded = _one_run(embedder, batch_size, progress, result)
        except RunBusy as exc:
            if not result.run_ids:
                result.status = "busy"
                result.message = str(exc)
                log.info("indexing skipped: %s", exc)
            break  # after our own run: whoever holds the lock now does what is left
        # Papers committed between our last pass and the unlock (their job may have given up on
        # seeing our lock): one more run for them. Nothing embedded means nothing embeddable.
        if not embedded or not _anything_missing(embedder):
            break
    result.seconds = time.perf_counter() - started
    return result


def _anything_missing(embedder: Embedder) -> bool:
    return pending_papers(embedder.name).exists() or has_stale()


def _one_run(embedder: Embedder, batch_size, progress: bool, result: IndexingResult) -> int:
    """One IngestRun: BM25, then vectors, again while papers keep arriving. Returns papers
    embedded."""
    missing = pending_papers(embedder.name).count()
    recorder = RunRecorder(
        IngestRun.Source.EMBED,
        params={"model": embedder.name},
        progress={"stage": "bm25", "done": 0, "total": missing},
    )
    result.run_ids.append(recorder.run.pk)
    done = passages = 0
    try:
        while True:
            # BM25 first: seconds for thousands of papers, and it makes them findable at once.
            result.lexical += index_missing()
            base, total = done, done + missing
            recorder.save_progress(progress={"stage": "vectors", "done": done, "total": total})
            pass_started = time.perf_counter()

            def on_batch(partial: EmbedResult, base=base, pass_started=pass_started) -> None:
                nonlocal total
                so_far = base + partial.papers
                # Recounted each batch (milliseconds against seconds of embedding): papers
                # imported meanwhile join the total at once.
                total = so_far + pending_papers(embedder.name).count()
                elapsed = time.perf_counter() - pass_started
                recorder.counts.new = so_far
                recorder.save_progress(
                    progress={
                        "stage": "vectors",
                        "done": so_far,
                        "total": max(total, so_far),
                        "per_second": round(partial.papers / elapsed, 3) if elapsed else 0.0,
                    }
                )

            part = embed_missing(
                embedder=embedder, batch_size=batch_size, progress=progress, on_batch=on_batch
            )
            done += part.papers
            passages += part.passages
            recorder.counts.new = done
            recorder.counts.skipped += part.skipped
            more_sentences = False
            if settings.SENTENCE_VECTORS:
                # After each pass of abstracts (they make papers findable) and bounded: papers
                # arriving meanwhile come first, a backfill of a large catalogue goes on behind.
                sentences = embed_sentences(
                    embedder=embedder, batch_size=batch_size, limit=SENTENCE_PASS_PAPERS
                )
                passages += sentences.passages
                more_sentences = sentences.papers >= SENTENCE_PASS_PAPERS
            missing = pending_papers(embedder.name).count()
            # Papers that arrived during this pass get another pass, still under our lock.
            if not more_sentences and (part.papers == 0 or not (missing or has_stale())):
                break
    except BaseException as exc:
        recorder.error(f"{type(exc).__name__}: {exc}")
        recorder.save_progress(progress={"stage": "failed", "done": done, "total": done + missing})
        recorder.finish(IngestRun.Status.FAILED)
        result.status = IngestRun.Status.FAILED
        result.message = f"{type(exc).__name__}: {exc}"
        raise
    recorder.save_progress(
        progress={"stage": "done", "done": done, "total": done, "passages": passages}
    )
    recorder.finish()
    result.embedded += done
    result.passages += passages
    log.info(
        "indexing run #%s embedded=%d passages=%d lexical=%d",
        recorder.run.pk,
        done,
        passages,
        result.lexical,
    )
    return done

"""Re-cut papers' chunks from their stored text when the chunker changed: what an upgraded
installation runs so that papers read before the upgrade answer as well as papers read after it.
No PDF is fetched.

A paper is stale when its FullText.chunker (chunk.chunker_signature: CHUNKER_VERSION and the
chunk size) is not the current one; rows cut before the signature was recorded have "".

What a re-cut from the stored text recovers, and what it cannot:
- recovered: chunk boundaries, tables kept whole with caption and header, table rows said as
  sentences (papers.fulltext.tables reads the text's lines, not the PDF's layout: PDFium gives a
  table row as one line and the cleaned text keeps every line), section headings
  (parse.sections_of reads the same lines), pages (FullText.page_starts), and the names the body
  introduces (papers.indexing.names, run again for the paper);
- not recovered: a change in how the PDF's text is cleaned (parse.clean_pages: line-end hyphens,
  running heads, where the references end and an appendix starts): the stored text is the old
  cleaning's output. Such papers need their PDF again: `fetch_fulltext --reread ARXIV_ID ...`
  goes through the polite fetch path (papers.fulltext.read).

Vectors: a new chunk whose text equals an old chunk's (same model) keeps that vector, so only
changed chunks are embedded; a paper whose chunks come out identical only gets its new signature.
A paper that fails keeps its old chunks; the signature and the reason are kept on its row
(recut_failed, recut_reason) and the nightly batches do not try it again under that signature.

One re-cut run at a time (the "rechunk" advisory lock), recorded as an IngestRun (source
"rechunk"): `updated` papers re-cut, `unchanged` papers whose chunks came out the same,
`skipped` papers read again by someone else meanwhile. The catalogue's status shows it.
"""

import logging
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.db.models import QuerySet
from tqdm import tqdm

from papers.embeddings import Embedder, EmbeddingError, get_embedder
from papers.fulltext.chunk import chunk_text, chunker_signature
from papers.fulltext.parse import ParsedPdf, sections_of
from papers.fulltext.read import chunk_passages, index_words
from papers.identifiers import InvalidArxivId, parse_arxiv_id
from papers.indexing.names import name_papers
from papers.ingest.runs import RunRecorder, exclusive
from papers.ingest.upsert import UpsertCounts
from papers.models import FullText, IngestRun, Passage

log = logging.getLogger("papers.fulltext")

# States whose text is settled: a queued or fetching paper gets new chunks from its re-read.
_SETTLED = (FullText.Status.OK, FullText.Status.FAILED)


def stale_fulltexts(embedder: Embedder | None = None, *, retry_failed: bool = False) -> QuerySet:
    """Rows with stored text whose chunks were cut by another chunker, oldest read first. Rows
    whose re-cut failed under the current signature are left out unless `retry_failed`."""
    signature = chunker_signature(embedder or get_embedder())
    rows = FullText.objects.filter(status__in=_SETTLED).exclude(text="").exclude(chunker=signature)
    if not retry_failed:
        rows = rows.exclude(recut_failed=signature)
    return rows.order_by("fetched_at", "pk")


def stale_count(*, retry_failed: bool = False) -> int:
    """How many papers wait for a re-cut; 0 where no embedder loads (none can be re-cut)."""
    try:
        return stale_fulltexts(retry_failed=retry_failed).count()
    except (ImproperlyConfigured, EmbeddingError, OSError):
        return 0


@dataclass
class Recut:
    outcome: str  # "recut", "unchanged", "skipped" (read again meanwhile) or "failed"
    chunks: int = 0
    embedded: int = 0  # chunks whose text is new, embedded now
    reason: str = ""


def recut_paper(fulltext: FullText, embedder: Embedder, timings: dict | None = None) -> Recut:
    """Re-cut one paper's chunks from `fulltext.text` (see the module docstring); never raises
    for a paper's own failure."""
    timings = timings if timings is not None else {}
    signature = chunker_signature(embedder)
    text = fulltext.text
    paper_id = fulltext.paper_id
    t0 = time.perf_counter()
    try:
        parsed = ParsedPdf(
            text=text,
            page_starts=list(fulltext.page_starts),
            sections=sections_of(text),
            pages=fulltext.pages,
            parser=fulltext.parser,
        )
        chunks = chunk_text(parsed, embedder)
        if not chunks:
            return _failed(fulltext, signature, "no chunks cut from the stored text")
        old = list(
            Passage.objects.chunks()
            .filter(paper_id=paper_id, model=embedder.name)
            .order_by("position")
            .values_list("start", "end", "page", "page_end", "section", "embedding")
        )
        t1 = time.perf_counter()
        if [o[:5] for o in old] == [
            (c.start, c.end, c.page, c.page_end, c.section) for c in chunks
        ]:
            return _keep(fulltext, signature, parsed, len(chunks))
        kept = {text[o[0] : o[1]]: o[5] for o in old}
        texts = [c.text(text) for c in chunks]
        new_texts = [t for t in dict.fromkeys(texts) if t not in kept]
        if new_texts:
            kept.update(zip(new_texts, embedder.embed_documents(new_texts), strict=True))
        t2 = time.perf_counter()
    except EmbeddingError as exc:
        return _failed(fulltext, signature, f"the embedder failed ({exc})")
    except Exception as exc:  # one paper's text must not stop the next paper
        log.exception("re-cutting the chunks of paper %s failed", paper_id)
        return _failed(fulltext, signature, f"unexpected error: {type(exc).__name__}: {exc}")
    timings["chunk"] = timings.get("chunk", 0.0) + t1 - t0
    timings["embed"] = timings.get("embed", 0.0) + t2 - t1

    passages = chunk_passages(
        paper_id, fulltext.paper.published, chunks, [kept[t] for t in texts], embedder.name
    )
    with transaction.atomic():
        row = _locked_if_unchanged(fulltext, signature)
        if row is None:
            return Recut("skipped")
        # Every model's chunks index the old cut: none of them is valid any more.
        Passage.objects.chunks().filter(paper_id=paper_id).delete()
        Passage.objects.bulk_create(passages)
        index_words(fulltext.paper, text, new_text=False)  # (the body's entry stands)
        row.chunker = signature
        row.sections = parsed.sections
        row.recut_failed = row.recut_reason = ""
        row.save(update_fields=["chunker", "sections", "recut_failed", "recut_reason"])
        name_papers([paper_id])
    timings["write"] = timings.get("write", 0.0) + time.perf_counter() - t2
    return Recut("recut", chunks=len(passages), embedded=len(new_texts))


def _locked_if_unchanged(fulltext: FullText, signature: str) -> FullText | None:
    """The row, locked, unless it was read again (or re-cut) since `fulltext` was loaded."""
    row = FullText.objects.select_for_update().get(pk=fulltext.pk)
    if (
        row.status not in _SETTLED
        or row.chunker == signature
        or (row.version, row.fetched_at, row.sha256)
        != (
            fulltext.version,
            fulltext.fetched_at,
            fulltext.sha256,
        )
    ):
        return None
    return row


def _keep(fulltext: FullText, signature: str, parsed: ParsedPdf, chunks: int) -> Recut:
    """The chunks came out as they were: only the signature (and the headings) change."""
    with transaction.atomic():
        row = _locked_if_unchanged(fulltext, signature)
        if row is None:
            return Recut("skipped")
        row.chunker = signature
        row.sections = parsed.sections
        row.recut_failed = row.recut_reason = ""
        row.save(update_fields=["chunker", "sections", "recut_failed", "recut_reason"])
    return Recut("unchanged", chunks=chunks)


def _failed(fulltext: FullText, signature: str, reason: str) -> Recut:
    log.info("chunks of paper %s not re-cut: %s", fulltext.paper_id, reason)
    FullText.objects.filter(pk=fulltext.pk).update(
        recut_failed=signature, recut_reason=reason[:1000]
    )
    return Recut("failed", reason=reason)


def select_stale(
    arxiv_ids: Iterable[str] = (),
    *,
    limit: int | None = None,
    embedder: Embedder | None = None,
) -> tuple[list[FullText], list[str]]:
    """The stale rows to re-cut (named papers are retried even when their last re-cut failed)
    and the ids asked for that have no stale text (unknown, never read, or already current)."""
    ids, unknown = [], []
    for text in arxiv_ids:
        try:
            ids.append(parse_arxiv_id(text)[0])
        except InvalidArxivId:
            unknown.append(text)
    rows = stale_fulltexts(embedder, retry_failed=bool(ids)).select_related("paper")
    if ids:
        rows = rows.filter(paper__arxiv_id__in=ids)
    if limit is not None:
        rows = rows[:limit]
    found = list(rows)
    have = {row.paper.arxiv_id for row in found}
    return found, unknown + [i for i in ids if i not in have]


def recut_papers(
    fulltexts: list[FullText],
    *,
    params: dict | None = None,
    progress: bool = False,
    embedder: Embedder | None = None,
) -> IngestRun:
    """Re-cut `fulltexts` as one recorded run (raises papers.ingest.runs.RunBusy when another
    re-cut run is active)."""
    embedder = embedder or get_embedder()
    with exclusive("rechunk", IngestRun.Source.RECHUNK):
        total = len(fulltexts)
        recorder = RunRecorder(
            IngestRun.Source.RECHUNK,
            {"chunker": chunker_signature(embedder), **(params or {})},
            progress={"stage": "re-cutting", "done": 0, "total": total},
        )
        timings: dict[str, float] = {}
        chunks = embedded = 0
        bar = tqdm(
            fulltexts,
            total=total,
            unit="paper",
            desc="re-cutting full text",
            file=sys.stderr,
            disable=not progress,
            dynamic_ncols=True,
        )
        started = time.monotonic()
        for done, fulltext in enumerate(bar, start=1):
            result = recut_paper(fulltext, embedder, timings)
            if result.outcome == "recut":
                recorder.add(UpsertCounts(updated=1))
            elif result.outcome == "unchanged":
                recorder.add(UpsertCounts(unchanged=1))
            elif result.outcome == "skipped":
                recorder.add(UpsertCounts(skipped=1))
            else:
                recorder.error(result.reason, arxiv_id=fulltext.paper.arxiv_id)
            chunks += result.chunks
            embedded += result.embedded
            elapsed = time.monotonic() - started
            bar.set_postfix(
                recut=recorder.counts.updated, failed=recorder.error_count, refresh=False
            )
            recorder.save_progress(
                progress={
                    "stage": "re-cutting",
                    "done": done,
                    "total": total,
                    "per_second": round(done / elapsed, 3) if elapsed else 0,
                    "chunks": chunks,
                    "embedded": embedded,
                }
            )
        bar.close()
        return recorder.finish(**{k: round(v, 3) for k, v in timings.items()})

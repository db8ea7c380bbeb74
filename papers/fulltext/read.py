"""read_paper(paper): fetch its PDF, parse, chunk, embed, and store the chunks as passages.

Recorded on the paper's FullText row (queued -> fetching -> ok | failed with a reason). Idempotent
per version: a paper whose current version is read (with chunks for the active model) is left
alone; a newer version replaces the text and every chunk in one transaction; a failure keeps what
an older version left (its text and chunks stay searchable) and says why on the row. The abstract
passages are never touched.

The text is indexed twice for words: each chunk's (Passage.lexemes, for the best chunks of a
paper and the chunk word search) and the whole body as one BM25 document of the bodies' index
(papers.indexing.lexical.BODIES), beside the abstracts' one.
"""

import logging
import time
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from papers.embeddings import Embedder, EmbeddingError, get_embedder
from papers.fulltext import FullTextError
from papers.fulltext.chunk import chunk_text, chunker_signature
from papers.fulltext.fetch import fetch_pdf
from papers.fulltext.parse import parse_pdf
from papers.indexing.chunkwords import index_chunk_words
from papers.indexing.lexical import BODIES, index_papers
from papers.indexing.names import name_papers
from papers.models import FullText, Paper, Passage
from papers.signals import fulltext_indexed

log = logging.getLogger("papers.fulltext")

# A row left "fetching" longer than this belongs to a process that died: read it again.
STALE_FETCHING = timedelta(minutes=30)


@dataclass
class ReadTimings:
    """Seconds per stage of the last read_paper call in this process (for runs and benches)."""

    stages: dict[str, float] = field(default_factory=dict)

    def add(self, stage: str, seconds: float) -> None:
        self.stages[stage] = self.stages.get(stage, 0.0) + seconds


def is_read(fulltext: FullText, paper: Paper, model: str) -> bool:
    """The paper's current version is read and has chunks for `model`."""
    return (
        fulltext.status == FullText.Status.OK
        and fulltext.version >= paper.version
        and Passage.objects.chunks().filter(paper=paper, model=model).exists()
    )


def read_paper(
    paper: Paper,
    force: bool = False,
    *,
    embedder: Embedder | None = None,
    timings: ReadTimings | None = None,
) -> FullText:
    """Read `paper`'s full text (see the module docstring); never raises for a bad PDF."""
    embedder = embedder or get_embedder()
    timings = timings if timings is not None else ReadTimings()
    fulltext, _ = FullText.objects.get_or_create(paper=paper, defaults={"version": paper.version})
    if not force and is_read(fulltext, paper, embedder.name):
        return fulltext
    if (
        not force
        and fulltext.status == FullText.Status.FETCHING
        and fulltext.updated_at > timezone.now() - STALE_FETCHING
    ):
        return fulltext  # another worker is reading it right now
    fulltext.status = FullText.Status.FETCHING
    fulltext.reason = ""
    fulltext.save(update_fields=["status", "reason", "updated_at"])
    version = paper.version
    try:
        t0 = time.perf_counter()
        download = fetch_pdf(paper.arxiv_id, version)
        t1 = time.perf_counter()
        parsed = parse_pdf(download.content)
        chunks = chunk_text(parsed, embedder)
        if not chunks:
            raise FullTextError("no text left after removing headers and references")
        t2 = time.perf_counter()
        vectors = embedder.embed_documents([c.text(parsed.text) for c in chunks])
        t3 = time.perf_counter()
    except FullTextError as exc:
        return _failed(fulltext, f"v{version}: {exc.reason}")
    except EmbeddingError as exc:
        return _failed(fulltext, f"v{version}: the embedder failed ({exc})")
    except Exception as exc:  # a PDF that crashes the parser must not stop the next paper
        log.exception("reading %s v%d failed", paper.arxiv_id, version)
        return _failed(fulltext, f"v{version}: unexpected error: {type(exc).__name__}: {exc}")
    timings.add("fetch", t1 - t0)
    timings.add("parse", t2 - t1)
    timings.add("embed", t3 - t2)

    passages = chunk_passages(paper.pk, paper.published, chunks, vectors, embedder.name)
    with transaction.atomic():
        # Every model's chunks index the old text: none of them is valid any more.
        Passage.objects.chunks().filter(paper=paper).delete()
        Passage.objects.bulk_create(passages)
        fulltext.version = version
        fulltext.status = FullText.Status.OK
        fulltext.reason = ""
        fulltext.text = parsed.text
        fulltext.page_starts = parsed.page_starts
        fulltext.sections = parsed.sections
        fulltext.sha256 = download.sha256
        fulltext.pages = parsed.pages
        fulltext.bytes = len(download.content)
        fulltext.parser = parsed.parser
        fulltext.chunker = chunker_signature(embedder)
        fulltext.recut_failed = fulltext.recut_reason = ""
        fulltext.fetched_at = timezone.now()
        fulltext.save()
        index_words(paper, parsed.text)  # (the body's index reads the text just saved)
        name_papers([paper.pk])  # names its body introduces ("we refer to it as …")
    timings.add("write", time.perf_counter() - t3)
    log.info(
        "read %s v%d: %d pages, %d chunks (%s)",
        paper.arxiv_id,
        version,
        parsed.pages,
        len(passages),
        ", ".join(f"{k} {v:.2f}s" for k, v in timings.stages.items()),
    )
    return fulltext


# Each chunk's words, tokenised in PostgreSQL as the catalogue's BM25 index is (the same
# to_tsvector('english')), for the lexical chunk search (chat.retrieval.chunks).
_INDEX_WORDS = """
UPDATE papers_passage
SET lexemes = to_tsvector('english', substr(%(text)s, start + 1, "end" - start))
WHERE paper_id = %(paper)s AND kind = 'fulltext'
"""


def index_words(paper: Paper, text: str, *, new_text: bool = True) -> None:
    """Each of `paper`'s chunks gets the words of its span of `text` (its saved FullText.text),
    the paper's postings in the common words' champion lists (papers.indexing.chunkwords), and,
    when the text is `new_text` (not a re-cut of the same text), its body its entry in the bodies'
    BM25 index (papers.indexing.lexical.BODIES)."""
    with connection.cursor() as cursor:
        cursor.execute(_INDEX_WORDS, {"text": text, "paper": paper.pk})
    index_chunk_words([paper.pk])
    if new_text:
        index_papers([paper.pk], BODIES)
    fulltext_indexed.send(sender=index_words, paper_ids=[paper.pk])


def _failed(fulltext: FullText, reason: str) -> FullText:
    log.info("full text of %s not read: %s", fulltext.paper_id, reason)
    fulltext.status = FullText.Status.FAILED
    fulltext.reason = reason[:1000]
    fulltext.save(update_fields=["status", "reason", "updated_at"])
    return fulltext


def chunk_passages(paper_id: int, published, chunks, vectors, model: str) -> list[Passage]:
    """A paper's full-text passages: each chunk with its vector (in the chunks' order) from
    `model`, dated `published` as every passage is for filtered searches."""
    return [
        Passage(
            paper_id=paper_id,
            model=model,
            kind=Passage.Kind.FULLTEXT,
            position=chunk.position,
            start=chunk.start,
            end=chunk.end,
            page=chunk.page,
            page_end=chunk.page_end,
            section=chunk.section,
            published=published,
            embedding=vector,
        )
        for chunk, vector in zip(chunks, vectors, strict=True)
    ]

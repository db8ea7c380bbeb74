"""A chunk's sentences, analysed once: in this process (`analysed_sentences`) and in the database
(ChunkSketch), so that a first search need not analyse every chunk it weighs.

The best chunks of a page's papers are ranked by their sentences (chat.retrieval.chunks
._by_sentences): a chunk is only split into sentences and stemmed (~0.3-1 ms) while it could
still be among the kept ones, judged by the most its sentences could score. That bound used to
come from the chunk's text as a whole (every word it holds, stemmed: ~50 µs a chunk, ~124 chunks
a cold page at 1M chunks), and a bound from all of a chunk's words is loose: the query's words
spread over a chunk's sentences count as if one sentence held them all, so many chunks had to be
split before the kept ones were certain.

The sketch is the bound at the sentence level, computed when a chunk gets its words
(papers.signals.fulltext_indexed) and kept per paper: for each sentence of each chunk, a Bloom
filter of the terms it holds (SKETCH_BITS bits, two a term). A Bloom filter may say a term is
there when it is not, never the reverse, so the bound stays a bound: the same chunks are kept,
in the same order, only fewer are read to be sure of it (tests/chat/retrieval).

A sketch is only used for a chunk whose span and text it was made from (each chunk's CRC-32 is
kept beside its sentences) and by the code that made it: SIGNATURE changes with the source of
the sentence analysis, and a chunk without a current sketch is bounded as before. The nightly
indexing job's signal queues `sketch_stale` (and `manage.py sketch_chunks` does it at once), so
sketches made by older code are remade.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import struct
import sys
import zlib
from collections.abc import Iterable
from functools import lru_cache

from django.db import connection, transaction

from chat.llm import sentences as sentence_module
from chat.llm.sentences import passage_sentences, term_set

log = logging.getLogger("chat.retrieval.sentence_sketch")

SKETCH_BITS = 128
_POSITION = SKETCH_BITS - 1
_SENTENCE_BYTES = SKETCH_BITS // 8
# A chunk in a paper's sketch: its start, end, the CRC-32 of its text, its length as BM25 counts it
# (chunks.LENGTH_SQL) and its sentences' count, then each sentence's filter.
_CHUNK = struct.Struct("<IIIIH")
# Papers sketched a transaction by sketch_stale.
SKETCH_BATCH = 200


# Chunks whose sentences are kept analysed (`analysed_sentences`): ~10 kB each.
SENTENCE_CACHE = 2048


@lru_cache(maxsize=SENTENCE_CACHE)
def analysed_sentences(text: str) -> tuple[tuple[str, frozenset], ...]:
    """What the sentence evidence needs of a chunk's text whatever the question: its sentences
    (passage_sentences), each with the terms it holds. Splitting and stemming a chunk costs ~1
    ms, most of the best-chunk stage at 1M chunks (docs/BENCHMARKS.md); a chunk meets searches
    again (a follow-up, a thread about one paper, the next question on a topic), so it is done
    once per process, keyed by the text itself (a re-cut chunk is another key), for the last
    SENTENCE_CACHE chunks."""
    return tuple((s, frozenset(term_set(s))) for s in passage_sentences(text))


def signature_sources() -> list:
    """The modules whose source the sketches depend on: the splitter, its tables and headings,
    the spelling, and this module (what a sketch holds and how it is laid out)."""
    from papers import text as spelling
    from papers.fulltext import parse, tables

    return [sentence_module, tables, parse, spelling, sys.modules[__name__]]


def _signature() -> str:
    """What the sketches were made by: the source of `signature_sources` and the stemmer's
    version. (A change to any of them makes every sketch stale: remade, never misread.)"""
    from importlib.metadata import version

    digest = hashlib.sha256()
    for module in signature_sources():
        digest.update(inspect.getsource(module).encode())
    digest.update(f"{SKETCH_BITS}:{version('PyStemmer')}".encode())
    return digest.hexdigest()[:16]


SIGNATURE = _signature()


@lru_cache(maxsize=65_536)
def term_mask(term: str) -> int:
    """The two bits of a term in a sentence's filter."""
    h = zlib.crc32(term.encode())
    return (1 << (h & _POSITION)) | (1 << ((h >> 7) & _POSITION))


def sentence_filters(text: str) -> tuple[int, ...]:
    """A chunk's sentences (analysed_sentences), each as the filter of the terms it holds."""
    filters = []
    for _, terms in analysed_sentences(text):
        bits = 0
        for term in terms:
            bits |= term_mask(term)
        filters.append(bits)
    return tuple(filters)


def bound(filters: tuple[int, ...], weighted: list[tuple[int, float]]) -> float:
    """The most any sentence of a chunk can hold of the query: over its sentences' `filters`, the
    largest sum of the weights of the (term_mask, weight) pairs of `weighted` whose bits it has."""
    best = 0.0
    for bits in filters:
        held = 0.0
        for mask, weight in weighted:
            if bits & mask == mask:
                held += weight
        if held > best:
            best = held
    return best


def text_check(text: str) -> int:
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def pack(chunks: Iterable[tuple[int, int, str, int]]) -> bytes:
    """A paper's sketch: each chunk (start, end, its text, its length) with its sentences'
    filters."""
    parts = []
    for start, end, text, length in chunks:
        filters = sentence_filters(text)
        parts.append(_CHUNK.pack(start, end, text_check(text), length, len(filters)))
        parts.extend(bits.to_bytes(_SENTENCE_BYTES, "little") for bits in filters)
    return b"".join(parts)


class Sketch:
    """A paper's sketch (pack) as read back: each chunk's filters are decoded when asked for."""

    def __init__(self, data: bytes):
        self.data = data
        # span: (check, length, where its filters start, their count)
        self.chunks: dict[tuple[int, int], tuple[int, int, int, int]] = {}
        at = 0
        while at < len(data):
            start, end, check, length, count = _CHUNK.unpack_from(data, at)
            at += _CHUNK.size
            self.chunks[(start, end)] = (check, length, at, count)
            at += count * _SENTENCE_BYTES

    def length(self, start: int, end: int) -> int | None:
        """The length of the chunk at start:end, as its words were when sketched (a chunk's
        words and its sketch are written together: papers.fulltext.read.index_words)."""
        kept = self.chunks.get((start, end))
        return None if kept is None else kept[1]

    def filters(self, start: int, end: int, text: str) -> tuple[int, ...] | None:
        """The sentences' filters of the chunk `text` at start:end, None unless this sketch was
        made from that very text."""
        kept = self.chunks.get((start, end))
        if kept is None or kept[0] != text_check(text):
            return None
        _, _, at, count = kept
        size = _SENTENCE_BYTES
        return tuple(
            int.from_bytes(self.data[at + i * size : at + (i + 1) * size], "little")
            for i in range(count)
        )


_CURRENT = """
SELECT paper_id, data FROM chat_chunksketch WHERE paper_id = ANY(%s) AND signature = %s
"""


def current_sketches(cursor, paper_ids) -> dict[int, Sketch]:
    """The sketches of these papers that this code made."""
    cursor.execute(_CURRENT, [list(paper_ids), SIGNATURE])
    return {paper_id: Sketch(bytes(data)) for paper_id, data in cursor.fetchall()}


# Each read paper's text and its chunks' spans with their lengths (each model's chunks of a span
# share its words).
_SPANS = """
SELECT ft.paper_id, ft.text, s.spans
FROM papers_fulltext ft
CROSS JOIN LATERAL (
    SELECT array_agg(ARRAY[d.start, d."end", d.length] ORDER BY d.start, d."end") AS spans
    FROM (
        SELECT DISTINCT ON (ps.start, ps."end") ps.start, ps."end", {length} AS length
        FROM papers_passage ps
        {words}
        WHERE ps.paper_id = ft.paper_id AND ps.kind = 'fulltext'
    ) d
) s
WHERE ft.paper_id = ANY(%s) AND ft.status = 'ok'
"""
_SAVE = """
INSERT INTO chat_chunksketch (paper_id, signature, data, made_at)
SELECT unnest(%(papers)s::bigint[]), %(signature)s, unnest(%(data)s::bytea[]), now()
ON CONFLICT (paper_id) DO UPDATE
SET signature = excluded.signature, data = excluded.data, made_at = excluded.made_at
"""


def sketch_papers(paper_ids: Iterable[int]) -> int:
    """Make and save the sketches of these papers' chunks (those whose full text is read);
    the number of papers sketched."""
    ids = sorted({int(i) for i in paper_ids})
    if not ids:
        return 0
    from chat.retrieval.chunks import chunk_sql  # (chunks reads the sketches)

    with connection.cursor() as cursor:
        cursor.execute(chunk_sql(_SPANS), [ids])
        rows = cursor.fetchall()
    papers, data = [], []
    for paper_id, text, spans in rows:
        papers.append(paper_id)
        data.append(pack((a, b, text[a:b], length) for a, b, length in spans or ()))
    if papers:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_SAVE, {"papers": papers, "signature": SIGNATURE, "data": data})
    return len(papers)


_STALE = """
SELECT ft.paper_id FROM papers_fulltext ft
LEFT JOIN chat_chunksketch s ON s.paper_id = ft.paper_id
WHERE ft.status = 'ok' AND (s.paper_id IS NULL OR s.signature <> %s)
ORDER BY ft.paper_id
"""


def stale_papers() -> list[int]:
    """Read papers without a sketch, or with one made by other code. (A sketch older than its
    paper's chunks is never used for them: each chunk's span and check must match.)"""
    with connection.cursor() as cursor:
        cursor.execute(_STALE, [SIGNATURE])
        return [row[0] for row in cursor.fetchall()]


def sketch_stale(progress=None) -> dict:
    """Sketch every stale paper, SKETCH_BATCH at a time; `progress(done, total)` after each
    batch. Returns the counts."""
    stale = stale_papers()
    done = 0
    for i in range(0, len(stale), SKETCH_BATCH):
        done += sketch_papers(stale[i : i + SKETCH_BATCH])
        if progress:
            progress(min(i + SKETCH_BATCH, len(stale)), len(stale))
    log.info("sentence sketches made papers=%d stale=%d", done, len(stale))
    return {"stale": len(stale), "sketched": done}

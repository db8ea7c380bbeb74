"""Champion lists of the chunks' common words: the chunk word search's bounded read at scale.

The chunk word search (chat.retrieval.chunks.chunk_word_search) ranks papers by the BM25 of their
best full-text chunk. A word in a few thousand chunks is read whole through the GIN index on
Passage.lexemes; a common one cannot be (at 1M chunks "model" is in ~360k, "diffus" in ~40k),
and cutting its postings at a cap in table order, or level by level (the chunks with the most of
the query's words first), agreed with BM25 over all chunks on 29-50% of the top 10 papers.
So, as LexicalChampion does for the abstracts (papers.indexing.lexical), each word in at least
CHUNK_CHAMPION_MIN_DF chunks gets a floor near its best CHUNK_CHAMPION_SHARE of chunks by BM25
document weight, and ChunkChampion holds every chunk at or above it, in weight order (B-tree
`papers_chunk_champion_walk_idx`, the window checked in the index): the search reads each
common word's best chunks first, a bounded number of them whatever the catalogue's size.

    weight(word, chunk) = tf*(k1+1) / (tf + k1*(1 - b + b*length/average_length))

with tf the word's occurrences in the chunk (tsvector positions), length its distinct words
(`length(lexemes)`, as the search's own scoring), average_length ChunkWordStats' (the chunks'
average when the lists were built).

Kept in step: `index_chunk_words(paper_ids)` replaces a paper's postings when its chunks get
their words (papers.fulltext.read.index_words: read, re-read and re-cut papers); a deleted
paper's go with it (foreign key). Floors and the common words are set by `rebuild()` (after a
bulk load, and now and then as the full text grows: a word that becomes common after it has no
list, and the search then reads it as before, level by level). The floors come from a sample of
the chunks (CHUNK_FLOOR_SAMPLE), like the abstracts' year floors.
"""

from __future__ import annotations

import logging
import time

from django.db import connection, transaction

from papers.indexing.lexical import K1, B

log = logging.getLogger("papers.indexing.chunkwords")

# A word in at least this many chunks gets a champion list (the chunk word search reads the
# rarer ones whole: chat.retrieval.chunks.WORD_CANDIDATE_CAP).
CHUNK_CHAMPION_MIN_DF = 1000
# Near this share of a common word's chunks are its champions, at least CHUNK_CHAMPION_MIN_LIST.
CHUNK_CHAMPION_SHARE = 0.05
CHUNK_CHAMPION_MIN_LIST = 500
# Chunks sampled to set the floors (all of them below twice this).
CHUNK_FLOOR_SAMPLE = 20_000

_WEIGHT = f"""(array_length(u.positions, 1)::float8 * {K1 + 1}
    / (array_length(u.positions, 1) + {K1} * (1 - {B} + {B} * length(ps.lexemes) / %(average)s)))"""

_CHUNKS = """
SELECT count(*), avg(length(lexemes)) FROM papers_passage
WHERE kind = 'fulltext' AND lexemes IS NOT NULL
"""
_ESTIMATE = """
SELECT greatest(reltuples, 0)::bigint FROM pg_class
WHERE oid = to_regclass('papers_chunk_lexemes_idx')
"""
_SAMPLE_LENGTH = """
SELECT count(*), avg(length(lexemes)) FROM papers_passage TABLESAMPLE BERNOULLI (%(percent)s)
    REPEATABLE (12)
WHERE kind = 'fulltext' AND lexemes IS NOT NULL
"""
# Each sampled word's estimated chunks and its floor: the weight at its best share of the
# sample (at least CHUNK_CHAMPION_MIN_LIST chunks' worth), for words common enough.
_FLOORS = f"""
INSERT INTO papers_chunkword (lexeme, floor, df)
SELECT lexeme, (array_agg(weight ORDER BY weight DESC))[
           greatest(1, least(count(*), ceil(greatest(count(*) * %(share)s,
                                                     %(min_list)s * %(rate)s))::int))],
       round(count(*) / %(rate)s)::int
FROM (
    SELECT u.lexeme, {_WEIGHT} AS weight
    FROM papers_passage ps TABLESAMPLE BERNOULLI (%(percent)s) REPEATABLE (12)
    CROSS JOIN LATERAL unnest(ps.lexemes) AS u
    WHERE ps.kind = 'fulltext' AND ps.lexemes IS NOT NULL
) s
GROUP BY lexeme
HAVING count(*) / %(rate)s >= %(min_df)s
"""
# Every chunk (of the papers given, or all) whose weight for a common word reaches its floor.
_CHAMPIONS = f"""
INSERT INTO papers_chunkchampion (paper_id, word_id, passage_id, weight, published)
SELECT ps.paper_id, w.id, ps.id, {_WEIGHT}, ps.published
FROM papers_passage ps
CROSS JOIN LATERAL unnest(ps.lexemes) AS u
JOIN papers_chunkword w ON w.lexeme = u.lexeme
WHERE ps.kind = 'fulltext' AND ps.lexemes IS NOT NULL {{papers}}
  AND {_WEIGHT} >= w.floor
"""


def average_length(cursor) -> float | None:
    """The average chunk length the champion weights use; None before any `rebuild`."""
    cursor.execute("SELECT average_length FROM papers_chunkwordstats WHERE id = 1")
    row = cursor.fetchone()
    return row[0] if row else None


def index_chunk_words(paper_ids) -> int:
    """The papers' champion postings, replaced from their chunks' current words (call after the
    words are written). Nothing before the first `rebuild` (no floors yet). Postings written."""
    ids = sorted({int(i) for i in paper_ids})
    if not ids:
        return 0
    with transaction.atomic(), connection.cursor() as cursor:
        average = average_length(cursor)
        if average is None:
            return 0
        cursor.execute("DELETE FROM papers_chunkchampion WHERE paper_id = ANY(%s)", [ids])
        cursor.execute(
            _CHAMPIONS.format(papers="AND ps.paper_id = ANY(%(ids)s)"),
            {"average": average, "ids": ids},
        )
        return cursor.rowcount


_WALK_INDEX = "papers_chunk_champion_walk_idx"


def rebuild(say=log.info, *, bulk: bool = False) -> dict:
    """The common words, their floors and every champion posting, from the chunks as they are
    (one transaction: searches read the old lists meanwhile). `bulk` (a scratch database nobody
    searches): the walk index is dropped first and built after the postings, not kept up to
    date row by row."""
    started = time.perf_counter()
    info: dict = {}
    with transaction.atomic(), connection.cursor() as cursor:
        if bulk:
            cursor.execute(f"DROP INDEX IF EXISTS {_WALK_INDEX}")
        cursor.execute("DELETE FROM papers_chunkchampion")
        cursor.execute("DELETE FROM papers_chunkword")
        cursor.execute("DELETE FROM papers_chunkwordstats")
        cursor.execute(_ESTIMATE)
        row = cursor.fetchone()
        estimate = row[0] if row else 0
        if estimate >= 2 * CHUNK_FLOOR_SAMPLE:
            percent = 100.0 * CHUNK_FLOOR_SAMPLE / estimate
            cursor.execute(_SAMPLE_LENGTH, {"percent": percent})
            sampled, average = cursor.fetchone()
            chunks = estimate
        else:
            percent = 100.0
            cursor.execute(_CHUNKS)
            sampled, average = cursor.fetchone()
            chunks = sampled
        if not sampled or not average:
            say("chunk word champions: no chunks with words")
            return {"chunks": 0}
        rate = sampled / chunks if chunks else 1.0
        params = {"percent": percent, "average": float(average), "share": CHUNK_CHAMPION_SHARE,
                  "min_list": CHUNK_CHAMPION_MIN_LIST, "rate": rate,
                  "min_df": CHUNK_CHAMPION_MIN_DF}  # fmt: skip
        cursor.execute(_FLOORS, params)
        info["words"] = cursor.rowcount
        say(f"chunk word champions: {info['words']} common words (sample of {sampled} chunks)")
        cursor.execute(
            "INSERT INTO papers_chunkwordstats (id, chunks, average_length, built_at)"
            " VALUES (1, %s, %s, now())",
            [chunks, float(average)],
        )
        cursor.execute(_CHAMPIONS.format(papers=""), {"average": float(average)})
        info["postings"] = cursor.rowcount
        if bulk:
            say(f"chunk word champions: {info['postings']} postings; their walk index")
            _create_walk_index(cursor)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE papers_chunkchampion")
        cursor.execute("ANALYZE papers_chunkword")
    info.update(chunks=chunks, average_length=round(float(average), 1),
                seconds=round(time.perf_counter() - started, 1))  # fmt: skip
    say(f"chunk word champions: {info}")
    return info


def _create_walk_index(cursor) -> None:
    """The walk index exactly as the model declares it."""
    from papers.models import ChunkChampion

    index = next(i for i in ChunkChampion._meta.indexes if i.name == _WALK_INDEX)
    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # (the deferred paper checks, first)
    with connection.schema_editor(atomic=False) as editor:
        cursor.execute(str(index.create_sql(ChunkChampion, editor)))

"""The BM25 index of the catalogue, kept in step with the papers (read by chat/retrieval/fulltext).

Why BM25 inside PostgreSQL: `ts_rank` over the GIN index reached 0.56 nDCG@10 on SciFact where a
real BM25 reached 0.70 (docs/BENCHMARKS.md). BM25 splits into a document part and a query part:

    score(d, q) = sum over t in q of  idf(t) * tf(t,d)*(k1+1) / (tf(t,d) + k1*(1 - b + b*|d|/avgdl))
                                      ^ query side         ^ document side: `PaperLexicon.weights`

so each paper stores its document-side weights as a pgvector `sparsevec` (dimension = the
LexicalTerm id of the lexeme), a query becomes a sparse vector of IDF weights, and the score is
their inner product. The IDF is computed at query time from `LexicalTerm.df` and
`LexicalStats.documents`, so it is exact as papers arrive. The document side uses the average
length at the time the paper was indexed: the average length of abstracts drifts little, and
`rebuild()` recomputes every weight with today's average when it has.

Terms are the lexemes of `Paper.search_vector` (title A, abstract B, authors C; written by the
ingest), so the index and the query (`to_tsvector('english', ...)`) share PostgreSQL's tokenizer,
stemmer and stopwords. Title occurrences count TITLE_WEIGHT times: a cheap BM25F.

Writers hold a row lock on LexicalStats for the whole transaction, so concurrent ingests update
document frequencies one after the other and never lose a count.

Call `index_papers(ids)` after papers are inserted or updated (the ingest job does, via
`index_missing()`), `rebuild()` after a bulk load into an empty catalogue or to refresh weights.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import connection, transaction

log = logging.getLogger("papers.indexing.lexical")

# BM25 constants (Robertson/Lucene defaults; measured on SciFact in docs/BENCHMARKS.md).
K1 = 1.2
B = 0.75
# A title occurrence counts this many times (abstract and author occurrences count once).
TITLE_WEIGHT = 2
# pgvector's largest sparsevec dimension; term ids are far below it.
SPARSE_DIMENSIONS = 1_000_000_000
INDEX_BATCH = 2000

_ENSURE_STATS = (
    "INSERT INTO papers_lexicalstats (id, documents, total_length) VALUES (1, 0, 0)"
    " ON CONFLICT (id) DO NOTHING"
)
_LOCK_STATS = "SELECT documents, total_length FROM papers_lexicalstats WHERE id = 1 FOR UPDATE"

# Remove the papers' previous entries and their contribution to df and the collection stats.
_FORGET = """
WITH old AS (
    DELETE FROM papers_paperlexicon WHERE paper_id = ANY(%(ids)s)
    RETURNING terms, length
), df AS (
    UPDATE papers_lexicalterm t SET df = GREATEST(t.df - o.n, 0)
    FROM (SELECT unnest(terms) AS id, count(*) AS n FROM old GROUP BY 1) o
    WHERE t.id = o.id
)
UPDATE papers_lexicalstats SET
    documents = GREATEST(documents - (SELECT count(*) FROM old WHERE cardinality(terms) > 0), 0),
    total_length = GREATEST(total_length - (SELECT coalesce(sum(length), 0) FROM old), 0)
WHERE id = 1
"""

# Weighted term frequencies of the papers' current text, one row per (paper, lexeme).
_TERM_FREQUENCIES = """
CREATE TEMP TABLE lexicon_tf ON COMMIT DROP AS
SELECT p.id AS paper_id, u.lexeme,
       coalesce((SELECT sum(CASE w WHEN 'A' THEN %(title_weight)s ELSE 1 END)
                 FROM unnest(u.weights) AS w), 1)::real AS tf
FROM papers_paper p CROSS JOIN LATERAL unnest(p.search_vector) AS u
WHERE p.id = ANY(%(ids)s) AND p.search_vector IS NOT NULL
"""

# New lexemes get an id. NOT EXISTS first, so that known lexemes do not burn sequence values
# (an ON CONFLICT insert consumes one per row, which would inflate the dimensions).
_ADD_TERMS = """
INSERT INTO papers_lexicalterm (lexeme, df)
SELECT DISTINCT tf.lexeme, 0 FROM lexicon_tf tf
WHERE NOT EXISTS (SELECT 1 FROM papers_lexicalterm t WHERE t.lexeme = tf.lexeme)
ON CONFLICT (lexeme) DO NOTHING
"""

_COUNT_TERMS = """
UPDATE papers_lexicalterm t SET df = t.df + n.n
FROM (SELECT lexeme, count(*) AS n FROM lexicon_tf GROUP BY lexeme) n
WHERE t.lexeme = n.lexeme
"""

# Collection stats first (the new average length includes these papers), then the weights.
_WRITE = """
WITH dl AS (
    SELECT paper_id, sum(tf) AS length FROM lexicon_tf GROUP BY paper_id
), stats AS (
    UPDATE papers_lexicalstats SET
        documents = documents + (SELECT count(*) FROM dl),
        total_length = total_length + (SELECT coalesce(sum(length), 0) FROM dl)
    WHERE id = 1
    RETURNING total_length / GREATEST(documents, 1) AS avg_length
)
INSERT INTO papers_paperlexicon
    (paper_id, published, length, terms, weights, indexed_at, source_version, source_modified)
SELECT tf.paper_id, p.published, dl.length,
       array_agg(t.id ORDER BY t.id),
       format('{%%s}/%(dims)s', string_agg(
           t.id || ':' || (tf.tf * (%(k1)s + 1)
               / (tf.tf + %(k1)s * (1 - %(b)s + %(b)s * dl.length / GREATEST(stats.avg_length, 1)))
           )::real, ',' ORDER BY t.id))::sparsevec,
       now(), p.version, p.modified_at
FROM lexicon_tf tf
JOIN papers_lexicalterm t ON t.lexeme = tf.lexeme
JOIN dl ON dl.paper_id = tf.paper_id
JOIN papers_paper p ON p.id = tf.paper_id
CROSS JOIN stats
GROUP BY tf.paper_id, p.published, dl.length, p.version, p.modified_at
"""

# Papers without any lexeme still get a row, so `index_missing` does not pick them up forever.
_WRITE_EMPTY = """
INSERT INTO papers_paperlexicon
    (paper_id, published, length, terms, weights, indexed_at, source_version, source_modified)
SELECT p.id, p.published, 0, '{}', '{}/%(dims)s'::sparsevec, now(), p.version, p.modified_at
FROM papers_paper p
WHERE p.id = ANY(%(ids)s) AND NOT EXISTS (SELECT 1 FROM papers_paperlexicon l WHERE l.paper_id = p.id)
"""

# New papers, and papers whose row changed (new version, edited) since they were indexed.
_STALE = """
SELECT p.id FROM papers_paper p
LEFT JOIN papers_paperlexicon l ON l.paper_id = p.id
WHERE l.paper_id IS NULL
   OR l.source_version <> p.version
   OR l.source_modified IS DISTINCT FROM p.modified_at
ORDER BY p.id LIMIT %s
"""


def _params(ids: list[int]) -> dict:
    return {
        "ids": ids,
        "title_weight": TITLE_WEIGHT,
        "k1": K1,
        "b": B,
        "dims": SPARSE_DIMENSIONS,
    }


def index_papers(paper_ids: Iterable[int]) -> int:
    """(Re)index these papers from their current `search_vector`. Returns how many were given.

    Idempotent: indexing a paper twice replaces its entry and counts it once in df.
    """
    ids = sorted({int(i) for i in paper_ids})
    if not ids:
        return 0
    for start in range(0, len(ids), INDEX_BATCH):
        batch = ids[start : start + INDEX_BATCH]
        params = _params(batch)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_ENSURE_STATS)
            cursor.execute(_LOCK_STATS)
            cursor.execute(_FORGET, params)
            # Also inside an outer transaction (no commit yet to drop it): start clean.
            cursor.execute("DROP TABLE IF EXISTS lexicon_tf")
            cursor.execute(_TERM_FREQUENCIES, params)
            cursor.execute(_ADD_TERMS)
            cursor.execute(_COUNT_TERMS)
            cursor.execute(_WRITE, params)
            cursor.execute(_WRITE_EMPTY, params)
            cursor.execute("DROP TABLE lexicon_tf")
    return len(ids)


def index_missing(batch: int = INDEX_BATCH) -> int:
    """Index every paper that is new or changed since it was indexed. Returns the count."""
    done = 0
    while True:
        with connection.cursor() as cursor:
            cursor.execute(_STALE, [batch])
            ids = [row[0] for row in cursor.fetchall()]
        if not ids:
            return done
        index_papers(ids)
        done += len(ids)
        if len(ids) < batch:
            return done


def has_stale() -> bool:
    """True when some paper is missing from the index or changed since it was indexed."""
    with connection.cursor() as cursor:
        cursor.execute(_STALE, [1])
        return cursor.fetchone() is not None


def rebuild() -> int:
    """Drop the whole index and build it again (fresh df, fresh average length)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_ENSURE_STATS)
        cursor.execute(_LOCK_STATS)
        # DELETE, not TRUNCATE: it also works inside a caller's transaction.
        cursor.execute("DELETE FROM papers_paperlexicon")
        cursor.execute("DELETE FROM papers_lexicalterm")
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence('papers_lexicalterm', 'id'), 1, false)"
        )
        cursor.execute("UPDATE papers_lexicalstats SET documents = 0, total_length = 0")
    count = index_missing()
    log.info("lexical index rebuilt papers=%d", count)
    return count

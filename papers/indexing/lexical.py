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

Each (re)indexed paper also gets the names it introduces (papers.indexing.names), so a question
naming "the Transformer" finds its paper. Call `index_papers(ids)` after papers are inserted or updated (the ingest job does, via
`index_missing()`), `rebuild()` after a bulk load into an empty catalogue or to refresh weights.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.db import connection, transaction

from papers.indexing.names import name_papers

log = logging.getLogger("papers.indexing.lexical")

# BM25 constants (Robertson/Lucene defaults; measured on SciFact in docs/BENCHMARKS.md).
K1 = 1.2
B = 0.75
# A title occurrence counts this many times (abstract and author occurrences count once).
TITLE_WEIGHT = 2
# pgvector's largest sparsevec dimension; term ids are far below it.
SPARSE_DIMENSIONS = 1_000_000_000
INDEX_BATCH = 2000
# Champions (LexicalChampion): a term in at least CHAMPION_MIN_DF papers keeps, in weight order,
# every posting at or above a floor set near its best CHAMPION_SHARE; lexical search reads those
# instead of all its papers. docs/BENCHMARKS.md measures the share against agreement and cost.
CHAMPION_MIN_DF = 2000
CHAMPION_SHARE = 0.05
# A common term also gets a floor per publication year (LexicalTermYear) near that year's best
# CHAMPION_SHARE, where it is below the global floor: a window on a year where the term is weak
# then walks the year's own best papers. `rebuild` sets them from every k-th paper of each year,
# YEAR_FLOOR_SAMPLE to twice that (all of a smaller year); a term with few sampled postings in a
# year is rare there: its floor is about the best of them, its list there short either way.
YEAR_FLOOR_SAMPLE = 2000


def year_sql(column: str) -> str:
    """The calendar year (UTC) of a timestamptz column: the year of LexicalTermYear."""
    return f"extract(year FROM {column} AT TIME ZONE 'UTC')::int"


# The abstracts' index's tables by their part, as every statement below names them; another
# Lexicon runs the same statements on its own tables of the same shape (`Lexicon.sql`).
_ABSTRACT_TABLES = {
    "documents": "papers_paperlexicon",
    "term_years": "papers_lexicaltermyear",
    "terms": "papers_lexicalterm",
    "champions": "papers_lexicalchampion",
    "stats": "papers_lexicalstats",
    "rebuild": "papers_lexicon_rebuild",
}
_PART_OF = {table: part for part, table in _ABSTRACT_TABLES.items()}
# (longest first: papers_lexicaltermyear before papers_lexicalterm)
_TABLE_NAMES = re.compile(r"\b(" + "|".join(sorted(_PART_OF, key=len, reverse=True)) + r")\b")


@dataclass(frozen=True)
class Lexicon:
    """One BM25 index: its tables, and the text its documents are made of.

    ABSTRACTS indexes each paper's `search_vector` (title, abstract, authors; a title occurrence
    counts TITLE_WEIGHT times). BODIES indexes the full text of each read paper
    (`to_tsvector('english', FullText.text)`, every occurrence once), so the search can find a
    paper whose body holds the query's words over one row a paper, with the same exact,
    bounded machinery (chat/retrieval/fulltext.py), where a chunk-level BM25 reads ~20 rows a
    paper (docs/BENCHMARKS.md, "1M chunks"). The statements are written once, naming the
    abstracts' tables; `sql()` names this index's."""

    name: str
    tables: dict  # part ("documents", "terms", ...) -> table, as _ABSTRACT_TABLES
    # The rows (paper_id, lexeme, tf) of the papers in %(ids)s: each lexeme of a paper's text
    # and its weighted occurrences.
    term_frequencies: str
    # The papers this index holds, for a rebuild: (id, publication year); and how many have text.
    papers: str
    documents: str
    models: tuple[str, str]  # its lexicon and champion models (their declared indexes)
    names: bool  # (re)indexing a paper also names what it introduces (papers.indexing.names)

    def sql(self, statement: str) -> str:
        """`statement` (written for the abstracts' tables) on this index's tables."""
        if self.tables is _ABSTRACT_TABLES:
            return statement
        return _TABLE_NAMES.sub(lambda m: self.tables[_PART_OF[m.group(1)]], statement)

    def cursor(self, cursor) -> LexiconCursor:
        """`cursor`, its statements run on this index's tables."""
        return LexiconCursor(cursor, self)


class LexiconCursor:
    """A database cursor whose statements run on one Lexicon's tables (the search and the
    indexing spell them for the abstracts' index)."""

    def __init__(self, cursor, lexicon: Lexicon):
        self._cursor, self.lexicon = cursor, lexicon

    def execute(self, sql, params=None):
        return self._cursor.execute(self.lexicon.sql(sql), params)

    def __getattr__(self, name):
        return getattr(self._cursor, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._cursor.__exit__(*exc)


# tf = occurrences, title ones TITLE_WEIGHT times; 1 when the positions were stripped.
_TF = """coalesce(nullif(cardinality(u.weights)
    + (%(title_weight)s - 1) * cardinality(array_positions(u.weights, 'A')), 0), 1)"""

ABSTRACTS = Lexicon(
    name="abstracts",
    tables=_ABSTRACT_TABLES,
    term_frequencies=f"""SELECT p.id AS paper_id, u.lexeme, {_TF}::real AS tf
FROM papers_paper p CROSS JOIN LATERAL unnest(p.search_vector) AS u
WHERE p.id = ANY(%(ids)s) AND p.search_vector IS NOT NULL""",
    papers=f"SELECT id, {year_sql('published')} FROM papers_paper ORDER BY id",
    documents="""SELECT count(*) FROM papers_paper
WHERE search_vector IS NOT NULL AND length(search_vector) > 0""",
    models=("PaperLexicon", "LexicalChampion"),
    names=True,
)
# The text of every paper read (a failed re-read keeps an older version's text searchable, as it
# keeps its chunks: papers.fulltext.read). A body's words past the 16,383rd share its last
# position in a tsvector (PostgreSQL's limit), so in a very long text they count once each: a
# paper's first ~16k words weigh as they should.
BODIES = Lexicon(
    name="bodies",
    tables={
        "documents": "papers_bodylexicon",
        "term_years": "papers_bodytermyear",
        "terms": "papers_bodyterm",
        "champions": "papers_bodychampion",
        "stats": "papers_bodystats",
        "rebuild": "papers_body_rebuild",
    },
    term_frequencies="""SELECT f.paper_id, u.lexeme, coalesce(cardinality(u.positions), 1)::real AS tf
FROM papers_fulltext f CROSS JOIN LATERAL unnest(to_tsvector('english', f.text)) AS u
WHERE f.paper_id = ANY(%(ids)s) AND f.text <> ''""",
    papers=f"""SELECT p.id, {year_sql('p.published')} FROM papers_paper p
JOIN papers_fulltext f ON f.paper_id = p.id AND f.text <> '' ORDER BY p.id""",
    documents="SELECT count(*) FROM papers_fulltext WHERE text <> ''",
    models=("BodyLexicon", "BodyChampion"),
    names=False,
)


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
), champions AS (
    DELETE FROM papers_lexicalchampion WHERE paper_id = ANY(%(ids)s)
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
_TERM_FREQUENCIES = "CREATE TEMP TABLE lexicon_tf ON COMMIT DROP AS {term_frequencies}"

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

# Collection stats first: the average length used for these papers includes them.
_COUNT_PAPERS = """
WITH dl AS (SELECT paper_id, sum(tf) AS length FROM lexicon_tf GROUP BY paper_id)
UPDATE papers_lexicalstats SET
    documents = documents + (SELECT count(*) FROM dl),
    total_length = total_length + (SELECT coalesce(sum(length), 0) FROM dl)
WHERE id = 1
RETURNING total_length / GREATEST(documents, 1)
"""

# The BM25 document side of each (paper, term), the one formula every writer uses.
_WEIGHTS = """
CREATE TEMP TABLE lexicon_w ON COMMIT DROP AS
SELECT tf.paper_id, t.id AS term_id, dl.length,
       (tf.tf * (%(k1)s + 1)
        / (tf.tf + %(k1)s * (1 - %(b)s + %(b)s * dl.length / GREATEST(%(avg_length)s, 1))))::real
       AS weight
FROM lexicon_tf tf
JOIN papers_lexicalterm t ON t.lexeme = tf.lexeme
JOIN (SELECT paper_id, sum(tf) AS length FROM lexicon_tf GROUP BY paper_id) dl
  ON dl.paper_id = tf.paper_id
"""

_WRITE = """
INSERT INTO papers_paperlexicon
    (paper_id, published, length, terms, weights, indexed_at, source_version, source_modified)
SELECT w.paper_id, p.published, max(w.length),
       array_agg(w.term_id ORDER BY w.term_id),
       format('{%%s}/%(dims)s', string_agg(w.term_id || ':' || w.weight, ',' ORDER BY w.term_id))
           ::sparsevec,
       now(), p.version, p.modified_at
FROM lexicon_w w JOIN papers_paper p ON p.id = w.paper_id
GROUP BY w.paper_id, p.published, p.version, p.modified_at
"""

# The new postings at or above their term's floor for their year (the lower of the term's and
# the year's: LEAST skips a missing year floor) join its champions (the floors' invariant).
_WRITE_CHAMPIONS = f"""
INSERT INTO papers_lexicalchampion (paper_id, term_id, weight, published)
SELECT w.paper_id, w.term_id, w.weight, p.published
FROM lexicon_w w
JOIN papers_lexicalterm t ON t.id = w.term_id AND t.champion_floor IS NOT NULL
JOIN papers_paper p ON p.id = w.paper_id
LEFT JOIN papers_lexicaltermyear y
  ON y.term_id = w.term_id AND y.year = {year_sql("p.published")}
WHERE w.weight >= LEAST(t.champion_floor, y.champion_floor)
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


def _term_frequencies(lexicon: Lexicon) -> str:
    return _TERM_FREQUENCIES.format(term_frequencies=lexicon.term_frequencies)


def _write_weights(cursor, params: dict) -> None:
    """Lexicon rows and champion postings of the papers in `lexicon_tf`, at `avg_length`."""
    cursor.execute("DROP TABLE IF EXISTS lexicon_w")
    cursor.execute(_WEIGHTS, params)
    cursor.execute(_WRITE, params)
    cursor.execute(_WRITE_CHAMPIONS)
    cursor.execute("DROP TABLE lexicon_w")
    cursor.execute("DROP TABLE lexicon_tf")


def index_papers(paper_ids: Iterable[int], lexicon: Lexicon = ABSTRACTS) -> int:
    """(Re)index these papers in `lexicon` from their current text (`search_vector`; for
    BODIES their read full text: a paper without one is left with an empty entry). Returns how
    many were given.

    Idempotent: indexing a paper twice replaces its entry and counts it once in df.
    """
    ids = sorted({int(i) for i in paper_ids})
    if not ids:
        return 0
    for start in range(0, len(ids), INDEX_BATCH):
        batch = ids[start : start + INDEX_BATCH]
        params = _params(batch)
        with transaction.atomic(), lexicon.cursor(connection.cursor()) as cursor:
            cursor.execute(_ENSURE_STATS)
            cursor.execute(_LOCK_STATS)
            cursor.execute(_FORGET, params)
            # Also inside an outer transaction (no commit yet to drop it): start clean.
            cursor.execute("DROP TABLE IF EXISTS lexicon_tf")
            cursor.execute(_term_frequencies(lexicon), params)
            cursor.execute(_ADD_TERMS)
            cursor.execute(_COUNT_TERMS)
            cursor.execute(_COUNT_PAPERS)
            params["avg_length"] = cursor.fetchone()[0]
            _write_weights(cursor, params)
            cursor.execute(_WRITE_EMPTY, params)
            if lexicon.names:
                name_papers(batch)  # the names they introduce, from the same text
    return len(ids)


def index_missing(batch: int = INDEX_BATCH) -> int:
    """Index every paper that is new or changed since it was indexed. Returns the count."""
    done = 0
    while True:
        with connection.cursor() as cursor:
            cursor.execute(_STALE, [batch])
            ids = [row[0] for row in cursor.fetchall()]
        if not ids:
            break
        index_papers(ids)
        done += len(ids)
        if len(ids) < batch:
            break
    add_champions()
    return done


def has_stale() -> bool:
    """True when some paper is missing from the index or changed since it was indexed."""
    with connection.cursor() as cursor:
        cursor.execute(_STALE, [1])
        return cursor.fetchone() is not None


# --- Champions: each common term's highest-weight papers, for exact top-k (fulltext.py) --------

# The floor of a term reached by CHAMPION_MIN_DF papers: the weight its best CHAMPION_SHARE of
# papers reach (at least CHAMPION_MIN_DF * CHAMPION_SHARE of them), from its current postings.
_FLOORLESS = """
SELECT id, df FROM papers_lexicalterm
WHERE champion_floor IS NULL AND df >= %(min_df)s ORDER BY id
"""

_TERM_WEIGHTS = """
SELECT l.paper_id, -(l.weights <#> %(unit)s::sparsevec) AS weight, l.published
FROM papers_paperlexicon l WHERE l.terms @> ARRAY[%(term)s]::int[]
"""

# ... and the year floors below it, each year's best CHAMPION_SHARE (all of its postings read).
_SET_FLOOR = f"""
WITH postings AS ({{weights}}), floor AS (
    SELECT weight FROM postings ORDER BY weight DESC OFFSET %(depth)s - 1 LIMIT 1
), by_year AS (
    SELECT {year_sql("published")} AS year,
           percentile_disc(1 - %(share)s) WITHIN GROUP (ORDER BY weight) AS floor
    FROM postings GROUP BY 1
), year_floors AS (
    INSERT INTO papers_lexicaltermyear (term_id, year, champion_floor)
    SELECT %(term)s, year, floor FROM by_year WHERE floor < (SELECT weight FROM floor)
    ON CONFLICT (term_id, year) DO UPDATE SET champion_floor = EXCLUDED.champion_floor
    RETURNING year, champion_floor
), champions AS (
    INSERT INTO papers_lexicalchampion (paper_id, term_id, weight, published)
    SELECT p.paper_id, %(term)s, p.weight, p.published FROM postings p
    LEFT JOIN year_floors y ON y.year = {year_sql("p.published")}
    WHERE p.weight >= LEAST((SELECT weight FROM floor), y.champion_floor)
)
UPDATE papers_lexicalterm SET champion_floor = (SELECT weight FROM floor) WHERE id = %(term)s
"""


def _champion_depth(df: int) -> int:
    return max(1, math.ceil(df * CHAMPION_SHARE))


def add_champions(lexicon: Lexicon = ABSTRACTS) -> int:
    """Give a floor and champions to every term of `lexicon` that reached CHAMPION_MIN_DF papers
    without one (one GIN read of its postings each). Returns how many terms got one."""
    with lexicon.cursor(connection.cursor()) as cursor:
        cursor.execute(_FLOORLESS, {"min_df": CHAMPION_MIN_DF})
        terms = cursor.fetchall()
    for term, df in terms:
        params = {"term": term, "unit": f"{{{term}:1}}/{SPARSE_DIMENSIONS}"}
        params["depth"] = _champion_depth(df)
        params["share"] = CHAMPION_SHARE
        with transaction.atomic(), lexicon.cursor(connection.cursor()) as cursor:
            # The writers' lock: no paper is indexed between reading the postings and the floor.
            cursor.execute(_ENSURE_STATS)
            cursor.execute(_LOCK_STATS)
            cursor.execute(
                "SELECT 1 FROM papers_lexicalterm WHERE id = %s AND champion_floor IS NULL"
                " FOR UPDATE",
                [term],
            )
            if cursor.fetchone():
                cursor.execute(_SET_FLOOR.format(weights=_TERM_WEIGHTS), params)
    return len(terms)


# --- Bulk rebuild: the whole catalogue in a few passes ----------------------------------------

# Pass 1, chunk by chunk on any connection: each lexeme's papers and occurrences.
_COUNT_CHUNK = """
INSERT INTO papers_lexicon_rebuild (lexeme, df, tf)
SELECT lexeme, count(*), sum(tf) FROM ({term_frequencies}) r GROUP BY lexeme
"""

# Floors from a sample of the papers (every `step`-th id): any floor keeps search exact, the
# sample only sizes the champion lists near CHAMPION_SHARE.
_SAMPLE_FLOORS = """
UPDATE papers_lexicalterm t SET champion_floor = f.floor
FROM (
    SELECT w.term_id, percentile_disc(1 - %(share)s) WITHIN GROUP (ORDER BY w.weight) AS floor
    FROM lexicon_w w JOIN papers_lexicalterm t ON t.id = w.term_id AND t.df >= %(min_df)s
    GROUP BY w.term_id
) f
WHERE t.id = f.term_id
"""

# Year floors from a sample of up to YEAR_FLOOR_SAMPLE papers a year (in lexicon_w), for the
# floored terms, where below the term's floor.
_SAMPLE_YEAR_FLOORS = f"""
INSERT INTO papers_lexicaltermyear (term_id, year, champion_floor)
SELECT f.term_id, f.year, f.floor FROM (
    SELECT w.term_id, {year_sql("p.published")} AS year,
           percentile_disc(1 - %(share)s) WITHIN GROUP (ORDER BY w.weight) AS floor
    FROM lexicon_w w JOIN papers_paper p ON p.id = w.paper_id
    GROUP BY 1, 2
) f JOIN papers_lexicalterm t ON t.id = f.term_id
WHERE f.floor < t.champion_floor
"""

_SECONDARY_INDEXES = """
SELECT i.indexname, i.indexdef FROM pg_indexes i
WHERE i.tablename IN ('papers_paperlexicon', 'papers_lexicalchampion')
  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)
ORDER BY i.indexname
"""
REBUILD_CHUNK = 20_000
FLOOR_SAMPLE = 20_000


def rebuild(progress=None, workers: int = 1, lexicon: Lexicon = ABSTRACTS) -> int:
    """Drop the whole index (`lexicon`'s) and build it again (fresh df, fresh average length), in bulk: a
    pass for df and lengths, floors from a sample, a pass writing the papers, both in chunks of
    REBUILD_CHUNK on `workers` connections (then each chunk commits on its own: only outside a
    caller's transaction); `progress(done, total)` after each chunk. One average length for all."""
    def cursor_of():
        return lexicon.cursor(connection.cursor())

    with transaction.atomic(), cursor_of() as cursor:
        cursor.execute(_ENSURE_STATS)
        cursor.execute(_LOCK_STATS)
        cursor.execute("DELETE FROM papers_lexicalchampion")
        cursor.execute("DELETE FROM papers_lexicaltermyear")
        cursor.execute("DELETE FROM papers_paperlexicon")
        cursor.execute("DELETE FROM papers_lexicalterm")
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence('papers_lexicalterm', 'id'), 1, false)"
        )
        cursor.execute("UPDATE papers_lexicalstats SET documents = 0, total_length = 0")
        cursor.execute("DROP TABLE IF EXISTS papers_lexicon_rebuild")
        cursor.execute(
            "CREATE UNLOGGED TABLE papers_lexicon_rebuild (lexeme text, df int, tf real)"
        )
        cursor.execute(lexicon.papers)
        years: dict[int, list[int]] = {}
        for paper, year in cursor.fetchall():
            years.setdefault(year, []).append(paper)
        ids = sorted(paper for papers in years.values() for paper in papers)
        # Secondary indexes are built once at the end (one sort, not a GIN insert a row).
        cursor.execute(_SECONDARY_INDEXES)
        indexes = cursor.fetchall()
        for name, _ in indexes:
            cursor.execute(f'DROP INDEX "{name}"')
        # And those the models declare but the tables lack: a rebuild interrupted after this
        # point (committed) would otherwise leave them missing for good, as the next rebuild
        # recreates what it finds (a 1M benchmark build lost the GIN index of the terms so).
        have = {name for name, _ in indexes}
        indexes += [
            (name, sql) for name, sql in declared_indexes(lexicon).items() if name not in have
        ]
    chunks = [ids[start : start + REBUILD_CHUNK] for start in range(0, len(ids), REBUILD_CHUNK)]
    total = len(ids)

    def count(chunk: list[int]) -> int:
        with cursor_of() as cursor:
            cursor.execute(_COUNT_CHUNK.format(term_frequencies=lexicon.term_frequencies),
                           _params(chunk))
        return len(chunk)

    _each(count, chunks, workers, progress and (lambda done: progress(done // 2, total)))
    with transaction.atomic(), cursor_of() as cursor:
        cursor.execute(_LOCK_STATS)
        cursor.execute(
            "INSERT INTO papers_lexicalterm (lexeme, df) SELECT lexeme, sum(df)"
            " FROM papers_lexicon_rebuild GROUP BY lexeme ORDER BY lexeme"
        )
        cursor.execute(
            "UPDATE papers_lexicalstats SET total_length = (SELECT coalesce(sum(tf), 0)"
            f" FROM papers_lexicon_rebuild), documents = ({lexicon.documents}) WHERE id = 1"
            " RETURNING total_length / GREATEST(documents, 1)"
        )
        avg_length = cursor.fetchone()[0]
        cursor.execute("DROP TABLE papers_lexicon_rebuild")
        # Floors from a sample of ~FLOOR_SAMPLE papers: any floor keeps search exact, the
        # sample only sizes the lists near CHAMPION_SHARE.
        params = dict(_params(ids[:: max(1, total // FLOOR_SAMPLE)]), avg_length=avg_length)
        cursor.execute("DROP TABLE IF EXISTS lexicon_tf")
        cursor.execute(_term_frequencies(lexicon), params)
        cursor.execute(_WEIGHTS, params)
        cursor.execute(_SAMPLE_FLOORS, {"share": CHAMPION_SHARE, "min_df": CHAMPION_MIN_DF})
        cursor.execute("DROP TABLE lexicon_w")
        cursor.execute("DROP TABLE lexicon_tf")
        sample = sorted(
            paper
            for papers in years.values()
            for paper in papers[:: max(1, len(papers) // YEAR_FLOOR_SAMPLE)]
        )
        params = dict(_params(sample), avg_length=avg_length)
        cursor.execute(_term_frequencies(lexicon), params)
        cursor.execute(_WEIGHTS, params)
        cursor.execute(_SAMPLE_YEAR_FLOORS, {"share": CHAMPION_SHARE})
        cursor.execute("DROP TABLE lexicon_w")
        cursor.execute("DROP TABLE lexicon_tf")

    def write(chunk: list[int]) -> int:
        params = dict(_params(chunk), avg_length=avg_length)
        with transaction.atomic(), cursor_of() as cursor:
            cursor.execute("DROP TABLE IF EXISTS lexicon_tf")
            cursor.execute(_term_frequencies(lexicon), params)
            _write_weights(cursor, params)
            cursor.execute(_WRITE_EMPTY, params)
            if lexicon.names:
                name_papers(chunk)
        return len(chunk)

    _each(write, chunks, workers, progress and (lambda done: progress((total + done) // 2, total)))
    with cursor_of() as cursor:
        # Inside a caller's transaction: check the deferred foreign keys first (no index is
        # created over rows with pending trigger events).
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for _, definition in indexes:
            cursor.execute(definition)
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")  # Django's foreign keys, as they were
    add_champions(lexicon)  # terms the sample missed
    with cursor_of() as cursor:  # search estimates a window's papers (fulltext._share)
        cursor.execute("ANALYZE papers_paperlexicon")
    log.info("lexical index of the %s rebuilt papers=%d", lexicon.name, total)
    return total


def declared_indexes(lexicon: Lexicon = ABSTRACTS) -> dict[str, str]:
    """name -> CREATE INDEX of each secondary index the models declare on the tables a rebuild
    of `lexicon` empties (its lexicon and champions: PaperLexicon, LexicalChampion)."""
    from django.apps import apps

    models = [apps.get_model("papers", name) for name in lexicon.models]
    with connection.schema_editor(collect_sql=True, atomic=False) as editor:
        return {
            index.name: str(index.create_sql(model, editor))
            for model in models
            for index in model._meta.indexes
        }


def _each(work, chunks: list, workers: int, progress) -> None:
    """`work(chunk)` for every chunk, here or on `workers` threads with connections of their
    own; `progress(papers done)` after each."""
    done = 0

    def in_thread(chunk) -> int:
        try:
            return work(chunk)
        finally:
            connection.close()

    if workers > 1:
        with ThreadPoolExecutor(workers) as pool:
            for n in pool.map(in_thread, chunks):
                done += n
                if progress:
                    progress(done)
        return
    for chunk in chunks:
        done += work(chunk)
        if progress:
            progress(done)

"""One partial HNSW index of the abstracts per publication year, beside the catalogue-wide one
(and, at the end, one GIN index of the BM25 lexicon per year).

Why. A date window filters the catalogue-wide index's graph walk: to find R rows in a window
holding a share s of the abstracts, the iterative scan visits about R / s entries, each ~40
distance computations (its neighbours). The alternative, scanning every abstract of the window
exactly, costs one distance a row. Around s = 3-10% of a 1M catalogue both cost ~70 ms (docs/
BENCHMARKS.md, "Dense windows per year"). An index holding only one year's abstracts answers
the part of a window covering that year without filtering: a whole-year window costs an
unfiltered walk of a small graph. `chat.retrieval.dense` decides, per window, whether to use
them (its module docstring has the cost model).

How they are kept. PostgreSQL maintains every partial index whose predicate a new row matches,
so papers arriving in a year that has its index are indexed as they are embedded, like the
catalogue-wide index. What is left is creating the index of a year once it holds enough
abstracts to be worth one (`settings.DENSE_YEAR_INDEX_MIN`; below that the exact scan of the
whole year is cheap): `ensure_year_indexes()`, called by the indexing job after it embedded
papers (new years appear on 1 January, and imports can fill old ones). It builds concurrently
outside a transaction (nightly ingests keep writing), and is a no-op when every year is covered.

The index predicate holds its bounds as literal timestamps in UTC; queries that want a year's
index repeat the same bounds literally (`year_bounds_sql`), for the planner to prove the match.
Indexes are named `papers_passage_hnsw_y<YEAR>`; nothing else may use that prefix.
"""

from __future__ import annotations

import logging
import re
import time

from django.conf import settings
from django.db import connection

log = logging.getLogger("papers.indexing.periods")

PREFIX = "papers_passage_hnsw_y"
_NAME = re.compile(rf"^{PREFIX}(\d{{4}})$")


def index_name(year: int) -> str:
    return f"{PREFIX}{int(year)}"


def year_bounds_sql(year: int, column: str = "published") -> str:
    """`column` within the calendar year (UTC), as the index predicate spells it: literals."""
    year = int(year)
    return (
        f"{column} >= '{year:04d}-01-01 00:00:00+00'::timestamptz"
        f" AND {column} < '{year + 1:04d}-01-01 00:00:00+00'::timestamptz"
    )


def year_indexes(cursor) -> dict[int, float]:
    """The years that have an index, with its entries (pg_class.reltuples; -1 before ANALYZE)."""
    cursor.execute(
        "SELECT c.relname, c.reltuples FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid"
        " WHERE i.indrelid = 'papers_passage'::regclass AND i.indisvalid AND c.relname LIKE %s",
        [PREFIX + "%"],
    )
    years = {}
    for name, entries in cursor.fetchall():
        match = _NAME.match(name)
        if match:
            years[int(match.group(1))] = float(entries)
    return years


def years_needing_index(cursor, minimum: int) -> list[int]:
    """Years with at least `minimum` abstracts (of any model) and no index yet."""
    have = year_indexes(cursor)
    cursor.execute(
        "SELECT extract(year FROM published AT TIME ZONE 'UTC')::int AS year, count(*)"
        " FROM papers_passage WHERE kind = 'abstract' GROUP BY 1 HAVING count(*) >= %s"
        " ORDER BY 1",
        [minimum],
    )
    return [year for year, _ in cursor.fetchall() if year not in have]


def create_year_index(cursor, year: int, *, concurrently: bool) -> None:
    """The partial HNSW index of one year's abstracts (the production graph parameters)."""
    name = index_name(year)
    # An interrupted concurrent build leaves an invalid index of that name: drop it first.
    cursor.execute(
        "SELECT 1 FROM pg_index WHERE indexrelid = to_regclass(%s) AND NOT indisvalid", [name]
    )
    if cursor.fetchone():
        cursor.execute(f"DROP INDEX {'CONCURRENTLY ' if concurrently else ''}{name}")
    cursor.execute(
        f"CREATE INDEX {'CONCURRENTLY ' if concurrently else ''}IF NOT EXISTS {name}"
        " ON papers_passage USING hnsw (embedding vector_cosine_ops)"
        " WITH (m = 16, ef_construction = 64)"
        f" WHERE kind = 'abstract' AND {year_bounds_sql(year)}"
    )


def ensure_year_indexes(minimum: int | None = None) -> list[int]:
    """Create the missing indexes of years with enough abstracts; returns the years indexed.

    Concurrently when not inside a transaction (the indexing job), so writers are not blocked
    while a year of a large catalogue is built (minutes)."""
    minimum = settings.DENSE_YEAR_INDEX_MIN if minimum is None else minimum
    if minimum <= 0:
        return []
    concurrently = not connection.in_atomic_block
    created = []
    with connection.cursor() as cursor:
        if not concurrently:  # in a transaction: CREATE INDEX refuses pending deferred FK checks
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        # Newest first: a first run over a large catalogue takes minutes a year, and recent
        # years are the ones most windows ask for.
        for year in sorted(years_needing_index(cursor, minimum), reverse=True):
            started = time.perf_counter()
            create_year_index(cursor, year, concurrently=concurrently)
            log.info(
                "year index %s built in %.1f s", index_name(year), time.perf_counter() - started
            )
            created.append(year)
        if created:
            cursor.execute("ANALYZE papers_passage")  # the indexes' entries: the plan reads them
    return created


# --- The BM25 lexicon's GIN index per publication year -----------------------------------------
# BM25's last read in a window (chat.retrieval.fulltext, MaxScore) takes the papers of some years
# holding some terms. Through the catalogue-wide GIN index that costs every posting of those
# terms in every year, then a B-tree bitmap of the years' papers, whatever the few rows found:
# "decoherence of qubits since 2023" at 1M read 222k postings and 300k dates for 44 papers (~0.3
# s). A partial GIN index per year holds only that year's postings. Every year with papers gets
# one (a small year is where the catalogue-wide scan wastes most); PostgreSQL keeps them current.

LEXICON_PREFIX = "papers_lexicon_terms_y"
_LEXICON_NAME = re.compile(rf"^{LEXICON_PREFIX}(\d{{4}})$")


def lexicon_index_name(year: int) -> str:
    return f"{LEXICON_PREFIX}{int(year)}"


def lexicon_year_indexes(cursor) -> set[int]:
    """The years whose lexicon GIN index exists and is valid."""
    cursor.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid"
        " WHERE i.indrelid = 'papers_paperlexicon'::regclass AND i.indisvalid"
        " AND c.relname LIKE %s",
        [LEXICON_PREFIX + "%"],
    )
    return {
        int(match.group(1))
        for (name,) in cursor.fetchall()
        if (match := _LEXICON_NAME.match(name))
    }


def ensure_lexicon_year_indexes() -> list[int]:
    """Create the lexicon GIN index of every year with papers and none yet (newest first,
    concurrently outside a transaction); returns the years indexed. Off with
    `settings.LEXICAL_YEAR_INDEXES`."""
    if not settings.LEXICAL_YEAR_INDEXES:
        return []
    concurrently = not connection.in_atomic_block
    created = []
    with connection.cursor() as cursor:
        if not concurrently:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        have = lexicon_year_indexes(cursor)
        cursor.execute(
            "SELECT DISTINCT extract(year FROM published AT TIME ZONE 'UTC')::int"
            " FROM papers_paperlexicon ORDER BY 1 DESC"
        )
        for (year,) in cursor.fetchall():
            if year in have:
                continue
            name = lexicon_index_name(year)
            how = "CONCURRENTLY " if concurrently else ""
            cursor.execute(
                "SELECT 1 FROM pg_index WHERE indexrelid = to_regclass(%s) AND NOT indisvalid",
                [name],
            )
            if cursor.fetchone():  # an interrupted concurrent build
                cursor.execute(f"DROP INDEX {how}{name}")
            cursor.execute(
                f"CREATE INDEX {how}IF NOT EXISTS {name} ON papers_paperlexicon USING gin (terms)"
                f" WHERE {year_bounds_sql(year)}"
            )
            created.append(year)
    if created:
        log.info("lexicon year indexes built: %s", created)
    return created

"""Windows answered year by year: the partial HNSW index of each publication year
(papers.indexing.periods) and the plan choice between it, the catalogue-wide index and the exact
scan (chat.retrieval.dense), on 3 years of synthetic abstracts in the real PostgreSQL."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction

from bench.scale import draw
from chat.retrieval.dense import dense_search, exact_row_cost
from chat.retrieval.filters import SearchFilters
from papers.indexing.periods import ensure_year_indexes, index_name, year_bounds_sql

pytestmark = pytest.mark.slow  # 4,500 vectors into the HNSW index: a minute on a busy machine

MODEL = "synthetic-test"
YEARS = (2023, 2024, 2025)
PER_YEAR = 1500


def at(year, month=1, day=1):
    return datetime(year, month, day, tzinfo=UTC)


@pytest.fixture(scope="module")
def catalogue(django_db_setup, django_db_blocker, tidy_passage_statistics):
    """PER_YEAR papers a year, each with one abstract vector drawn from the clustered
    distribution of the scale benchmark (bench.scale), dates spread evenly over its year.
    Written once for the module (4,500 inserts into the HNSW index take a while) and removed
    after it; each test's year indexes live in its own transaction."""
    with django_db_blocker.unblock():
        _write_catalogue()
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("DELETE FROM papers_passage WHERE model = %s", [MODEL])
                cursor.execute("DELETE FROM papers_paper WHERE arxiv_id LIKE 'syn.%%'")


@pytest.fixture
def three_years(catalogue, db):
    return draw(6, seed=99)  # queries


def _write_catalogue():
    vectors = draw(len(YEARS) * PER_YEAR, seed=3)
    with connection.cursor() as cursor:
        rows = []
        for year in YEARS:
            step = (at(year + 1) - at(year)) / PER_YEAR
            for i in range(PER_YEAR):
                rows.append((f"syn.{year}.{i}", at(year) + step * i))
        cursor.execute(
            "INSERT INTO papers_paper (arxiv_id, version, title, abstract, authors_text,"
            " primary_category, categories, published, updated, doi, journal_ref, comments,"
            " license, withdrawn, hidden, created_at, modified_at)"
            " SELECT a, 1, a, '', '', 'cs.LG', '{cs.LG}', p, p, '', '', '', '', false, false,"
            " now(), now() FROM unnest(%s::text[], %s::timestamptz[]) AS t(a, p)",
            [[a for a, _ in rows], [p for _, p in rows]],
        )
        cursor.execute(
            'INSERT INTO papers_passage (paper_id, model, kind, position, start, "end",'
            " published, embedding, created_at)"
            " SELECT p.id, %s, 'abstract', 0, 0, 0, p.published, v::vector, now()"
            " FROM unnest(%s::text[], %s::text[]) AS t(a, v)"
            " JOIN papers_paper p ON p.arxiv_id = t.a",
            [
                MODEL,
                [a for a, _ in rows],
                ["[" + ",".join(f"{x:.7g}" for x in vector) + "]" for vector in vectors],
            ],
        )
        # Stored in date order, as the tests take the catalogue to be: inserts fill the free
        # space earlier modules' deletes left in the heap, in no date order (the exact scan's
        # row cost then read 3.3, and two tests failed in CI after other modules on the worker).
        cursor.execute("CREATE INDEX passage_published_tmp ON papers_passage (published)")
        cursor.execute("CLUSTER papers_passage USING passage_published_tmp")
        cursor.execute("DROP INDEX passage_published_tmp")
        cursor.execute("ANALYZE papers_passage")


def search(vector, n=10, plan=None, **window):
    with transaction.atomic(), connection.cursor() as cursor:
        return dense_search(
            cursor, vector, MODEL, SearchFilters(**window), n, plan=plan, exact_max=0
        )


def test_only_years_with_enough_abstracts_get_an_index_once(three_years):
    with connection.cursor() as cursor:  # a thin year: 10 more papers dated 2022
        cursor.execute(
            'INSERT INTO papers_passage (paper_id, model, kind, position, start, "end",'
            " published, embedding, created_at)"
            " SELECT paper_id, model, kind, 1, 0, 0, '2022-06-01', embedding, now()"
            " FROM papers_passage WHERE model = %s LIMIT 10",
            [MODEL],
        )
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending FK checks: CREATE INDEX

    # newest first: recent years, which most windows ask for, get theirs soonest
    assert ensure_year_indexes(minimum=1000) == sorted(YEARS, reverse=True)
    assert ensure_year_indexes(minimum=1000) == []  # idempotent: nothing missing

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'papers_passage_hnsw_y%'"
        )
        assert sorted(row[0] for row in cursor.fetchall()) == [index_name(y) for y in YEARS]

    # A query spelling a year's bounds as its index does walks that index, not the catalogue's.
    q = "[" + ",".join(f"{x:.7g}" for x in three_years[0]) + "]"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute(
            "EXPLAIN SELECT ps.id FROM papers_passage ps WHERE ps.kind = 'abstract'"
            f" AND ps.published >= %s AND {year_bounds_sql(2024, 'ps.published')}"
            " ORDER BY ps.embedding <=> %s::vector LIMIT 20",
            [at(2024, 3), q],
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert index_name(2024) in plan, plan


WINDOWS = [
    {"start": at(2024), "end": at(2025) - timedelta(seconds=1)},  # one whole year
    {"start": at(2023, 7), "end": at(2025, 3)},  # half a year, a whole one, a sixth
    {"start": at(2024, 5)},  # open-ended
]


def test_year_by_year_finds_what_the_exact_scan_finds(three_years):
    ensure_year_indexes(minimum=1000)
    overlaps = []
    for window in WINDOWS:
        for vector in three_years:
            exact = search(vector, plan="exact", **window)
            years = search(vector, plan="years", **window)
            assert years.plan == "years"
            assert len(years.hits) == 10
            inside = window["start"], window.get("end") or at(2100)
            assert all(inside[0] <= h.published <= inside[1] for h in years.hits)
            found = {h.paper_id for h in years.hits}
            overlaps.append(len(found & {h.paper_id for h in exact.hits}) / 10)
    assert sum(overlaps) / len(overlaps) >= 0.95, overlaps  # recall@10 of the HNSW walks


def test_plan_choice_by_window_size(three_years):
    """Per 3 papers (13 rows) on 4,500 abstracts: a fortnight is scanned exactly, a whole year
    is walked in its own index, and the whole catalogue in the catalogue-wide one."""
    vector = three_years[0]
    fortnight = {"start": at(2024, 6), "end": at(2024, 6, 15)}
    year = {"start": at(2024), "end": at(2025) - timedelta(seconds=1)}
    everything = {"start": at(2000)}

    # Before any year has its index: a year (a third of the catalogue) is scanned exactly.
    assert search(vector, n=3, **fortnight).plan == "exact"
    assert search(vector, n=3, **year).plan == "exact"
    ensure_year_indexes(minimum=1000)

    assert search(vector, n=3, **fortnight).plan == "exact"
    assert search(vector, n=3, **year).plan == "years"
    assert search(vector, n=3, **everything).plan == "hnsw"


def test_no_year_index_means_the_forced_year_plan_uses_the_catalogue_index(three_years):
    result = search(three_years[0], plan="years", start=at(2024))
    assert result.plan == "hnsw"
    assert len(result.hits) == 10


def _store_in_no_date_order():
    """The module's passages rewritten in random order (same rows, new places on disk), as a
    catalogue whose papers were not embedded in date order lies; the HNSW indexes dropped first
    (each re-inserted row would enter every graph) and the year indexes built again after."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'papers_passage_hnsw%%'"
        )
        for (name,) in cursor.fetchall():
            cursor.execute(f"DROP INDEX {name}")
        cursor.execute(
            "CREATE TEMP TABLE shuffled ON COMMIT DROP AS"
            " SELECT * FROM papers_passage WHERE model = %s ORDER BY md5(id::text)",
            [MODEL],
        )
        cursor.execute("DELETE FROM papers_passage WHERE model = %s", [MODEL])
        cursor.execute("INSERT INTO papers_passage SELECT * FROM shuffled")
        cursor.execute("ANALYZE papers_passage")
    ensure_year_indexes(minimum=1000)


def test_an_exact_scan_is_priced_by_how_the_passages_lie_on_disk(three_years, settings):
    """Half of 2024 (~750 abstracts, 13 rows for 3 papers). Stored in date order, the exact scan
    (750 rows) beats walking 2024's index at half share (60 * 13 / 0.5 + 500 = 2,060). Stored
    in no date order, each row of the window sits on a page of its own (RANDOM_ROW_COST a row):
    the walk wins. Off (settings.DENSE_ROW_COST_BY_ORDER), the rows count 1 each, as before."""
    half = {"start": at(2024), "end": at(2024, 7, 1)}
    ensure_year_indexes(minimum=1000)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE papers_passage")
        assert exact_row_cost(cursor) == pytest.approx(1.0, abs=0.1)  # written in date order
    assert search(three_years[0], n=3, **half).plan == "exact"

    _store_in_no_date_order()
    with connection.cursor() as cursor:
        assert exact_row_cost(cursor) > 3.5
    result = search(three_years[0], n=3, **half)
    assert result.plan == "years"
    assert len(result.hits) == 3
    assert all(half["start"] <= h.published <= half["end"] for h in result.hits)

    settings.DENSE_ROW_COST_BY_ORDER = False
    with connection.cursor() as cursor:
        assert exact_row_cost(cursor) == 1.0
    assert search(three_years[0], n=3, **half).plan == "exact"


def test_a_window_inside_indexed_years_has_no_rest_to_scan(three_years):
    """A window's cost is its year walks plus an exact scan of what lies outside its indexed
    years. The papers a year's index covers are estimated by time share, which falls short of
    the window's estimate when the year's papers crowd some months: inside indexed years that
    gap is not a part to scan (it was, and once rows cost by disk order it sent "this year"
    at 1M from its year's index to the catalogue-wide one)."""
    from chat.retrieval.dense import SEGMENT_COST, _year_segments

    ensure_year_indexes(minimum=1000)
    inside = SearchFilters(start=at(2024), end=at(2025, 6, 30))
    reaching = SearchFilters(start=at(2022, 7), end=at(2024, 6, 30))  # 2022 has no index
    with connection.cursor() as cursor:
        estimated = _year_segments(cursor, inside, 3, row_cost=4.0)
        doubled = _year_segments(cursor, inside, 3, window=2 * 3000, row_cost=4.0)
        assert doubled.cost == pytest.approx(estimated.cost)
        plain = _year_segments(cursor, reaching, 3, row_cost=4.0)
        more = _year_segments(cursor, reaching, 3, window=10_000, row_cost=4.0)
        assert more.cost > plain.cost + SEGMENT_COST  # outside the indexed years: scanned

"""Champions keep BM25 exact: lexical search that reads a common term's best papers in weight
order (papers.indexing.lexical builds them, chat.retrieval.fulltext walks them) ranks as
exhaustive BM25 does, on a slice of the real arXiv sample, as papers arrive and change."""

import dataclasses
import gzip
import json
from collections import Counter
from datetime import UTC, datetime

import pytest
from django.db import connection

from chat.retrieval.filters import SearchFilters
from chat.retrieval.fulltext import lexical_search
from papers.indexing import lexical
from papers.ingest.snapshot import MalformedRecord, parse_snapshot_record
from papers.ingest.upsert import upsert_papers
from papers.models import LexicalChampion, LexicalTerm, Paper, PaperLexicon

SLICE = 1200
QUERIES = [
    "quantum entanglement",
    "neural network",
    "learning",
    "quantum state measurement",
    "large language models reasoning",
    "bell inequality violation",
    "quantum key distribution protocol security",
    "graph neural networks for molecules",
]
WINDOWS = [
    (None, None),
    ("2016-01-01", "2016-12-31"),
    ("1995-01-01", "2009-12-31"),
    ("2025-01-01", None),
]


def _day(text):
    return datetime.fromisoformat(text).replace(tzinfo=UTC) if text else None


def sample_records(shared_data, limit):
    records = []
    path = shared_data / "arxiv-snapshot" / "arxiv-sample.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            if number % 40:  # every 40th paper: quant-ph, cs and years mixed
                continue
            try:
                records.append(parse_snapshot_record(json.loads(line)))
            except MalformedRecord:
                continue
            if len(records) >= limit:
                break
    return records


def small_champions(settings, monkeypatch) -> None:
    """Champions for every term in 40+ papers, and a search that walks them two papers at a time
    and reads whole only terms summing to 60 papers: every path of the search on a small slice."""
    monkeypatch.setattr(lexical, "CHAMPION_MIN_DF", 40)
    monkeypatch.setattr(lexical, "CHAMPION_SHARE", 0.25)
    settings.LEXICAL_CANDIDATE_CAP = 60
    settings.LEXICAL_WALK_DEPTH = 2
    settings.LEXICAL_EXACT_HEAD = 10


@pytest.fixture
def catalogue(db, shared_data, settings, monkeypatch):
    """SLICE real papers, champions for every term in 40+ of them, and a search that walks
    them two papers at a time and reads whole only terms summing to 60 papers."""
    small_champions(settings, monkeypatch)
    records = sample_records(shared_data, SLICE + 200)
    upsert_papers(records[:SLICE])
    lexical.rebuild()
    return records


def ranked(query, filters, n, **options):
    with connection.cursor() as cursor:
        return lexical_search(cursor, query, filters, n, **options)


def test_champion_search_ranks_as_exhaustive_bm25(catalogue):
    generators = Counter()
    for query in QUERIES:
        for start, end in WINDOWS:
            filters = SearchFilters(start=_day(start), end=_day(end))

            fast = ranked(query, filters, 10)
            full = ranked(query, filters, 10, cap=10**9)  # every paper with a term scored

            assert [h.paper_id for h in fast.hits] == [h.paper_id for h in full.hits], (
                query,
                start,
                end,
            )
            assert fast.exact and full.generator == "postings"
            generators[fast.generator] += 1
    # Every path was taken: the walk alone, + the terms an unread paper would need, + all terms.
    assert generators["champions"] >= 4 and generators["essential"] >= 4, generators


def test_only_the_head_is_promised_beyond_it_scores_are_still_bm25(catalogue):
    filters = SearchFilters()

    fast = ranked("quantum entanglement", filters, 40)
    full = ranked("quantum entanglement", filters, 40, cap=10**9)

    assert fast.generator in ("champions", "essential")
    assert [h.paper_id for h in fast.hits[:10]] == [h.paper_id for h in full.hits[:10]]
    scores = {h.paper_id: h.score for h in full.hits}
    for hit in fast.hits:
        if hit.paper_id in scores:
            assert hit.score == pytest.approx(scores[hit.paper_id])


def champions() -> set[tuple[int, int, float]]:
    return {
        (paper, term, round(weight, 6))
        for paper, term, weight in LexicalChampion.objects.values_list(
            "paper_id", "term_id", "weight"
        )
    }


def postings_at_or_above_floors() -> set[tuple[int, int, float]]:
    """Every (paper, term) whose stored BM25 weight reaches the term's floor for the paper's
    year (the lower of the term's and the year's), from the lexicon."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT l.paper_id, t.id, w.weight
            FROM papers_lexicalterm t
            JOIN papers_paperlexicon l ON l.terms @> ARRAY[t.id]
            CROSS JOIN LATERAL (SELECT -(l.weights <#> format('{%%s:1}/%s', t.id)::sparsevec)
                                AS weight) w
            LEFT JOIN papers_lexicaltermyear y ON y.term_id = t.id
                 AND y.year = extract(year FROM l.published AT TIME ZONE 'UTC')
            WHERE t.champion_floor IS NOT NULL
              AND w.weight >= LEAST(t.champion_floor, y.champion_floor)
            """,
            [lexical.SPARSE_DIMENSIONS],
        )
        return {(paper, term, round(weight, 6)) for paper, term, weight in cursor.fetchall()}


def test_champions_hold_every_posting_above_the_floor_as_papers_arrive_and_change(catalogue):
    built = champions()
    assert built == postings_at_or_above_floors()
    assert LexicalTerm.objects.filter(champion_floor__isnull=False).count() >= 20
    floored = LexicalTerm.objects.filter(champion_floor__isnull=False).values_list("df", flat=True)
    assert len(built) < 0.5 * sum(floored)  # a share of the postings (and of each year's)

    upsert_papers(catalogue[SLICE:])  # papers arrive
    lexical.index_missing()
    paper = Paper.objects.order_by("id").first()  # and one gets a new version
    newer = dataclasses.replace(
        catalogue[0],
        version=catalogue[0].version + 1,
        abstract="Quantum entanglement of neural network learning. " * 3,
    )
    upsert_papers([newer])
    lexical.index_missing()

    assert champions() == postings_at_or_above_floors()
    assert champions() != built
    assert {(p, t) for p, t, _ in champions() if p == paper.id} >= {
        (paper.id, t.id)
        for t in LexicalTerm.objects.filter(
            lexeme__in=["quantum", "entangl"], champion_floor__isnull=False
        )
    }
    # Terms that reached CHAMPION_MIN_DF papers since the rebuild got a floor too.
    assert not LexicalTerm.objects.filter(
        df__gte=lexical.CHAMPION_MIN_DF, champion_floor__isnull=True
    ).exists()
    published = dict(PaperLexicon.objects.values_list("paper_id", "published"))
    for paper_id, when in LexicalChampion.objects.values_list("paper_id", "published"):
        assert when == published[paper_id]


def test_essential_terms_are_those_an_unread_paper_cannot_do_without():
    from chat.retrieval.fulltext import essential_terms

    bounds = {1: 0.5, 2: 1.0, 3: 4.0}  # the most an unread paper gets from each term

    assert essential_terms(bounds, threshold=6.0) == []  # 5.5 at most: none can enter
    assert essential_terms(bounds, threshold=5.0) == [3]  # without term 3, 1.5 at most
    assert essential_terms(bounds, threshold=1.2) == [2, 3]
    assert essential_terms(bounds, threshold=0.0) == [1, 2, 3]


YEAR_WINDOWS = [
    ("1995-01-01", "2009-12-31"),  # quant-ph's era: the ML terms are weak there
    ("2003-01-01", "2003-12-31"),
    ("2016-03-01", "2017-06-30"),  # parts of two years
    ("2025-01-01", None),
    (None, "2004-12-31"),
]


def year_floored_terms() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(DISTINCT y.term_id) FROM papers_lexicaltermyear y"
            " JOIN papers_lexicalterm t ON t.id = y.term_id"
            " WHERE y.champion_floor < t.champion_floor"
        )
        return cursor.fetchone()[0]


def test_year_floors_rank_windows_as_exhaustive_bm25_and_read_fewer_years(catalogue, settings):
    assert year_floored_terms() >= 10  # terms weak in some years got those years' own floors
    read = {True: 0, False: 0}
    for query in QUERIES:
        for start, end in YEAR_WINDOWS:
            filters = SearchFilters(start=_day(start), end=_day(end))
            full = ranked(query, filters, 10, cap=10**9)
            for year_floors in (True, False):  # with them, and the global lists alone
                settings.LEXICAL_YEAR_FLOORS = year_floors

                fast = ranked(query, filters, 10)

                assert [h.paper_id for h in fast.hits] == [h.paper_id for h in full.hits], (
                    query,
                    start,
                    end,
                    year_floors,
                )
                read[year_floors] += fast.years_read
    # Years where an unread paper could still enter the head are read whole: the years' own
    # floors leave fewer of them.
    assert read[True] < read[False], read


def test_year_floors_stay_exact_as_papers_arrive_change_and_hide(catalogue):
    upsert_papers(catalogue[SLICE:])  # papers arrive
    lexical.index_missing()
    # an old paper gets a new version about a term of another era, then a top paper is hidden
    old = next(r for r in catalogue if r.published.year < 2005)
    upsert_papers(
        [
            dataclasses.replace(
                old,
                version=old.version + 1,
                title="Graph neural networks and language models",
                abstract="Large language models reasoning over graph neural networks. " * 3,
            )
        ]
    )
    lexical.index_missing()
    assert champions() == postings_at_or_above_floors()
    changed = Paper.objects.get(arxiv_id=old.arxiv_id)
    window = SearchFilters(end=_day("2009-12-31"))
    top = ranked("graph neural networks", window, 10).hits
    assert top[0].paper_id == changed.id  # its new text, found in its year
    Paper.objects.filter(id=changed.id).update(hidden=True)

    for query in QUERIES:
        for start, end in YEAR_WINDOWS:
            filters = SearchFilters(start=_day(start), end=_day(end))

            fast = ranked(query, filters, 10)
            full = ranked(query, filters, 10, cap=10**9)

            assert [h.paper_id for h in fast.hits] == [h.paper_id for h in full.hits]
            assert changed.id not in {h.paper_id for h in fast.hits}


def test_a_deeper_walk_continues_where_the_last_stopped_and_scores_each_paper_once(catalogue):
    """Deepening reads on from each list's last (weight, paper) and scores only the papers it
    adds: no paper is handed to the BM25 ranking twice in one search."""
    deepened = 0
    for query in QUERIES:
        for start, end in WINDOWS + YEAR_WINDOWS:
            filters = SearchFilters(start=_day(start), end=_day(end))
            scored: list[list[int]] = []

            def record(execute, sql, params, many, context, scored=scored):
                if isinstance(params, dict) and "read" in params and "qv" in params:
                    scored.append(list(params["read"]))
                return execute(sql, params, many, context)

            with connection.execute_wrapper(record):
                fast = ranked(query, filters, 10)
            full = ranked(query, filters, 10, cap=10**9)

            assert [h.paper_id for h in fast.hits] == [h.paper_id for h in full.hits]
            ids = [paper for batch in scored for paper in batch]
            assert len(ids) == len(set(ids)), (query, start, end, fast.walks)
            if fast.walks >= 2:
                deepened += 1
                assert len(ids) == fast.walked  # every paper read, scored once
    assert deepened >= 10, deepened


def test_needed_sets_are_the_smallest_combinations_that_reach_the_head():
    from chat.retrieval.fulltext import needed_sets

    bounds = {1: 0.5, 2: 1.0, 3: 4.0}

    assert needed_sets(bounds, threshold=6.0) == []  # 5.5 at most: none can enter
    assert needed_sets(bounds, threshold=5.2) == [(1, 2, 3)]  # all three or nothing
    assert needed_sets(bounds, threshold=5.0) == [(2, 3)]
    assert needed_sets(bounds, threshold=4.5) == [(1, 3), (2, 3)]  # term 3 and another
    assert needed_sets(bounds, threshold=1.2) == [(1, 2), (3,)]  # term 1 alone is not enough
    assert needed_sets(bounds, threshold=0.0) == [(1,), (2,), (3,)]


def test_the_last_read_takes_papers_holding_a_needed_set_and_ranks_as_exhaustive_bm25(
    catalogue, settings
):
    """MaxScore by combinations reads an intersection of posting lists where essential terms
    read their union: same top 10, fewer papers scored."""
    scored = {True: 0, False: 0}
    sets_read = 0
    for query in QUERIES:
        for start, end in WINDOWS + YEAR_WINDOWS:
            filters = SearchFilters(start=_day(start), end=_day(end))
            full = ranked(query, filters, 10, cap=10**9)
            for needed_sets in (True, False):
                settings.LEXICAL_NEEDED_SETS = needed_sets
                last_read: list[int] = []

                def count(execute, sql, params, many, context, last_read=last_read):
                    # the last read's rows, all of them (the same query without its limit)
                    if isinstance(params, dict) and any(k.startswith("need") for k in params):
                        execute(sql, dict(params, limit=10**9), many, context)
                        last_read.append(context["cursor"].rowcount)
                    return execute(sql, params, many, context)

                with connection.execute_wrapper(count):
                    fast = ranked(query, filters, 10)

                assert [h.paper_id for h in fast.hits] == [h.paper_id for h in full.hits], (
                    query,
                    start,
                    end,
                    needed_sets,
                )
                scored[needed_sets] += sum(last_read)
                if needed_sets and last_read:
                    sets_read += 1
    assert sets_read >= 10, sets_read
    assert scored[True] < 0.8 * scored[False], scored


def test_the_last_read_in_a_window_goes_through_each_years_lexicon_index(catalogue, settings):
    """Every year with papers gets a GIN index of its lexicon rows; MaxScore's last read in a
    window asks each year in the words of its index's predicate, so the planner can read the
    year's postings alone, and the ranking stays exhaustive BM25's."""
    from papers.indexing.periods import ensure_lexicon_year_indexes, lexicon_year_indexes

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT extract(year FROM published AT TIME ZONE 'UTC')::int"
            " FROM papers_paperlexicon"
        )
        years = {year for (year,) in cursor.fetchall()}
        # (an index built concurrently by an earlier test on this database outlives its rows)
        before = lexicon_year_indexes(cursor)
    built = ensure_lexicon_year_indexes()
    assert set(built) == years - before and built == sorted(built, reverse=True)
    assert ensure_lexicon_year_indexes() == []  # idempotent
    last_reads: list[tuple[str, dict]] = []

    def capture(execute, sql, params, many, context):
        if isinstance(params, dict) and any(k.startswith("need") for k in params):
            if not sql.startswith("EXPLAIN"):
                last_reads.append((sql, params))
        return execute(sql, params, many, context)

    for query in QUERIES:
        for start, end in YEAR_WINDOWS:
            filters = SearchFilters(start=_day(start), end=_day(end))
            full = ranked(query, filters, 10, cap=10**9)
            for indexes in (True, False):
                settings.LEXICAL_YEAR_INDEXES = indexes
                with connection.execute_wrapper(capture):
                    fast = ranked(query, filters, 10)
                assert [h.paper_id for h in fast.hits] == [h.paper_id for h in full.hits]
    through_years = [(sql, params) for sql, params in last_reads if "UNION ALL" in sql]
    assert through_years
    with connection.cursor() as cursor:  # (a table this small is read by date unless told)
        cursor.execute("SET enable_seqscan = off")
        cursor.execute("SET enable_indexscan = off")
        cursor.execute("EXPLAIN " + through_years[0][0], through_years[0][1])
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("RESET enable_seqscan")
        cursor.execute("RESET enable_indexscan")
        assert "papers_lexicon_terms_y" in plan, plan
        assert lexicon_year_indexes(cursor) == set(built) | before

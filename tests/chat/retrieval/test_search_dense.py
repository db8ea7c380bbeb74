"""Dense retrieval plans (exact scan, HNSW iterative scan) and their filters, in PostgreSQL."""

import pytest
from django.db import connection, transaction

from chat.retrieval.dense import dense_search
from chat.retrieval.filters import SearchFilters
from papers.embeddings import get_embedder
from papers.models import Paper

from .search_corpus import build_corpus, day

# Its tests ANALYZE: later modules must not plan with its counts.
pytestmark = pytest.mark.usefixtures("tidy_passage_statistics")


@pytest.fixture
def corpus(db, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    return build_corpus()


def dense(text, n=5, plan=None, exact_max=None, **filters):
    embedder = get_embedder("hashing")
    with transaction.atomic(), connection.cursor() as cursor:
        return dense_search(
            cursor, embedder.embed_query(text), embedder.name, SearchFilters(**filters), n,
            plan=plan, exact_max=exact_max,
        )  # fmt: skip


@pytest.mark.parametrize("plan", ["exact", "hnsw"])
def test_both_plans_agree_on_a_small_catalogue(corpus, plan):
    exact = dense("quantum error correction surface codes", n=5, plan="exact")
    other = dense("quantum error correction surface codes", n=5, plan=plan)

    assert [h.paper_id for h in other.hits] == [h.paper_id for h in exact.hits]
    assert other.hits[0].similarity > 0.5


def test_automatic_plan_scans_exactly_for_a_narrow_window(corpus):
    result = dense("diffusion", n=3, start=day("2025-01-01"), end=day("2025-12-31"))

    assert result.plan == "exact"
    assert {Paper.objects.get(id=h.paper_id).arxiv_id for h in result.hits} == {
        "2503.00005", "2512.00006", "2508.00011"
    }  # fmt: skip


@pytest.mark.parametrize("plan", ["exact", "hnsw"])
def test_hidden_papers_beyond_the_margin_are_skipped(corpus, plan):
    # Hide the 12 papers closest to the query: more than the extra rows a first scan fetches.
    closest = [
        h.paper_id for h in dense("diffusion models image generation", n=12, plan="exact").hits
    ]
    Paper.objects.filter(id__in=closest).update(hidden=True)

    result = dense("diffusion models image generation", n=2, plan=plan)

    assert len(result.hits) == 2
    assert not {h.paper_id for h in result.hits} & set(closest)


@pytest.mark.parametrize(
    "exact_max", [0, 1000], ids=["broad-category-joined", "narrow-category-ids"]
)
def test_category_filter_on_both_paths(corpus, exact_max):
    result = dense("diffusion models", n=20, categories=("cs.LG",), exact_max=exact_max)

    papers = Paper.objects.in_bulk([h.paper_id for h in result.hits])
    assert papers and all("cs.LG" in p.categories for p in papers.values())
    assert len(papers) == Paper.objects.filter(categories__contains=["cs.LG"], hidden=False).count()


def test_vectors_of_another_model_are_never_compared(corpus):
    embedder = get_embedder("hashing")
    with transaction.atomic(), connection.cursor() as cursor:
        result = dense_search(
            cursor, embedder.embed_query("diffusion"), "other-model", SearchFilters(), 5
        )

    assert result.hits == []


def test_bad_plans_and_vectors_are_refused(corpus):
    with pytest.raises(ValueError, match="unknown dense plan"):
        dense("diffusion", plan="ivf")
    with transaction.atomic(), connection.cursor() as cursor:
        with pytest.raises(ValueError, match="dimensions"):
            dense_search(cursor, [0.1, 0.2], "hashing-test", SearchFilters(), 5)


def test_full_text_chunks_do_not_count_in_the_abstract_plan_choice(corpus):
    """The crossover between the exact scan and the abstracts' HNSW index grows with the index's
    entries; chunks share the table but not that index, so adding 40 a paper changes nothing."""
    from chat.retrieval.dense import exact_threshold

    def threshold():
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE papers_passage")
            return exact_threshold(cursor, rows=135, exact_max=0)

    before = threshold()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM papers_passage")
        abstracts = cursor.fetchone()[0]
        cursor.execute(
            "INSERT INTO papers_passage (paper_id, model, kind, position, start, \"end\","
            " published, embedding, created_at)"
            " SELECT paper_id, model, 'fulltext', 1 + g, 0, 0, published, embedding, now()"
            " FROM papers_passage, generate_series(0, 39) AS g WHERE kind = 'abstract'"
        )
    after = threshold()

    assert before > 0
    assert after == pytest.approx(before, rel=0.05)
    # Counting the table instead would have moved it by sqrt(41).
    assert after < before * 2, (abstracts, before, after)


def _chunks_from_abstracts(copies: int = 3) -> None:
    """Full-text chunks for every paper: its abstract's vector, `copies` times."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO papers_passage (paper_id, model, kind, position, start, \"end\","
            " published, embedding, created_at)"
            " SELECT paper_id, model, 'fulltext', g, 0, 0, published, embedding, now()"
            f" FROM papers_passage, generate_series(0, {copies - 1}) AS g WHERE kind = 'abstract'"
        )


def chunks(text, n=5, plan=None, precision=None):
    """The chunk search, and the indexes its queries' plans use."""
    embedder = get_embedder("hashing")
    queries = []

    def capture(execute, sql, params, many, context):
        queries.append((sql, params))
        return execute(sql, params, many, context)

    with transaction.atomic(), connection.cursor() as cursor:
        # Tiny tables make scanning and sorting cheapest: without those, only an index whose
        # expression is the query's distance can give the order.
        for plan_type in ("seqscan", "bitmapscan", "sort"):
            cursor.execute(f"SET LOCAL enable_{plan_type} = off")
        with connection.execute_wrapper(capture):
            result = dense_search(
                cursor, embedder.embed_query(text), embedder.name, SearchFilters(), n,
                plan=plan, kind="fulltext", precision=precision,
            )  # fmt: skip
        plans = []
        for sql, params in queries:
            if "ORDER BY" in sql:
                cursor.execute("EXPLAIN " + sql, params)
                plans.append("\n".join(row[0] for row in cursor.fetchall()))
    return result, plans


def test_the_chunk_search_walks_the_half_precision_chunk_index(corpus):
    _chunks_from_abstracts()

    result, plans = chunks("quantum error correction surface codes", plan="hnsw")

    assert result.plan == "hnsw" and len(result.hits) == 5
    assert plans and all("papers_chunk_hnsw_idx" in plan for plan in plans), plans
    # At full precision the same query cannot use that index (it holds halfvec).
    _, plans = chunks("quantum error correction surface codes", plan="hnsw", precision="vector")
    assert not any("papers_chunk_hnsw_idx" in plan for plan in plans), plans


@pytest.mark.parametrize("plan", ["exact", "hnsw"])
def test_chunks_rank_at_half_precision_as_at_full_precision(corpus, plan):
    _chunks_from_abstracts()
    truth, _ = chunks("diffusion models image generation", n=8, plan="exact", precision="vector")

    half, _ = chunks("diffusion models image generation", n=8, plan=plan)

    assert [h.paper_id for h in half.hits] == [h.paper_id for h in truth.hits]
    assert [h.distance for h in half.hits] == pytest.approx(
        [h.distance for h in truth.hits], abs=2e-3
    )
    with pytest.raises(ValueError, match="unknown precision"):
        chunks("diffusion", precision="float8")


def test_the_chunk_search_judges_a_window_by_the_chunks_own_numbers(corpus):
    """40 chunks a paper: the chunks' index has 40x the entries, so the window up to which an
    exact scan of chunks beats their index is sqrt(40)x the abstracts' (in chunk rows)."""
    from chat.retrieval.dense import exact_threshold

    _chunks_from_abstracts(copies=40)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE papers_passage")
        abstracts = exact_threshold(cursor, rows=135, exact_max=0)
        chunks = exact_threshold(cursor, rows=135, exact_max=0, kind="fulltext")

    assert chunks == pytest.approx(abstracts * 40**0.5, rel=0.2)

"""`bench_search --text N` grows papers inside PostgreSQL (bench.text_corpus.GROW) and indexes
them with the production bulk rebuild: every paper its own draw of sentences, the ingest's own
tsvector, and BM25 as the incremental index computes it."""

import gzip

import pytest
from django.db import connection

from bench import text_corpus, text_scale
from papers.indexing import lexical
from papers.indexing.periods import year_indexes
from papers.models import LexicalStats, LexicalTerm, Paper


def small_snapshot(shared_data, tmp_path):
    """The 200 real snapshot lines, gzipped as the grower reads them."""
    path = tmp_path / "head200.jsonl.gz"
    lines = (shared_data / "arxiv-snapshot/arxiv-metadata-oai-snapshot.head200.jsonl").read_bytes()
    path.write_bytes(gzip.compress(lines))
    return path


def test_grown_papers_are_distinct_dated_and_indexed_like_the_ingest(
    transactional_db, shared_data, tmp_path
):
    snapshot = small_snapshot(shared_data, tmp_path)

    text_scale.insert_papers(600, snapshot, lambda message: None)

    papers = Paper.objects.all()
    assert papers.count() == 600
    # Each paper its own draw (a cached random() once gave 144 abstracts for 20k papers).
    # (a few one-sentence papers from small categories may coincide)
    assert papers.values("abstract").distinct().count() > 540
    assert not papers.filter(search_vector__isnull=True).exists()
    assert not papers.exclude(
        published__gte=text_corpus.FIRST, published__lte=text_corpus.END
    ).exists()
    with connection.cursor() as cursor:  # the table's indexes were rebuilt after the load
        cursor.execute("SELECT count(*) FROM pg_indexes WHERE indexname = 'papers_paper_fts_idx'")
        assert cursor.fetchone()[0] == 1

    lexical.rebuild(workers=2)
    bulk = weights()
    terms = dict(LexicalTerm.objects.values_list("lexeme", "df"))
    stats = LexicalStats.objects.values_list("documents", "total_length").get()
    lexical.index_papers(Paper.objects.values_list("id", flat=True))  # the ingest's path

    assert dict(LexicalTerm.objects.values_list("lexeme", "df")) == terms
    assert LexicalStats.objects.values_list("documents", "total_length").get() == stats
    assert weights() == bulk and len(bulk) == 600  # the same average length: the same weights


def weights() -> dict[int, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT paper_id, weights::text FROM papers_paperlexicon")
        return dict(cursor.fetchall())


def test_the_text_database_gets_the_year_indexes_the_indexing_job_builds(
    transactional_db, shared_data, tmp_path, settings
):
    """The dense stage is measured as production runs it: with the partial HNSW index of every
    year holding DENSE_YEAR_INDEX_MIN abstracts (papers.indexing.periods)."""
    settings.DENSE_YEAR_INDEX_MIN = 150
    snapshot = small_snapshot(shared_data, tmp_path)

    info = text_scale.load(600, snapshot, "bench-model", lambda message: None)

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT extract(year FROM published AT TIME ZONE 'UTC')::int, count(*)"
            " FROM papers_passage WHERE kind = 'abstract' GROUP BY 1"
        )
        counts = dict(cursor.fetchall())
        indexed = year_indexes(cursor)
    wanted = {year for year, count in counts.items() if count >= 150}
    assert wanted and set(indexed) == wanted
    assert info["year_indexes_built"] == sorted(wanted, reverse=True)
    assert len(wanted) < len(counts)  # the thin years are scanned exactly, as in production


def test_bm25_agreement_compares_a_setting_off_and_on_query_by_query(
    transactional_db, shared_data, tmp_path, monkeypatch
):
    """`bench_search --text N --compare-setting NAME`'s BM25 half: each value of the setting
    against exhaustive BM25 on the same queries, one result each."""
    from datetime import UTC, datetime

    from django.conf import settings

    monkeypatch.setattr(lexical, "CHAMPION_MIN_DF", 40)  # 600 papers: common terms walk
    text_scale.insert_papers(600, small_snapshot(shared_data, tmp_path), lambda message: None)
    lexical.rebuild()
    queries = ["quantum entanglement since 2023", "neural network learning", "quantum state"]

    result = text_scale.bm25_agreement(
        queries, datetime(2026, 11, 21, tzinfo=UTC), lambda message: None,
        setting="LEXICAL_NEEDED_SETS", values=(False, True),
    )  # fmt: skip

    assert set(result) == {"LEXICAL_NEEDED_SETS off", "LEXICAL_NEEDED_SETS on"}
    for run in result.values():
        assert run["queries"] == 3 and run["top10_identical_queries"] == 3
        assert sum(run["generators"].values()) == 3
    assert settings.LEXICAL_NEEDED_SETS is True  # restored


def test_queries_get_vectors_among_the_synthetic_passages(db):
    """The passages' vectors are synthetic, so the model's query vector would lie apart from
    every one of them (cosine ~0.2); search() gets instead, from the query cache, a vector of
    the passages' own latent space mixed with noise, one per query text (date phrases removed)."""
    from datetime import UTC, datetime

    import numpy as np

    from bench import scale
    from papers.embeddings import get_embedder, query_cache

    now = datetime(2026, 11, 21, tzinfo=UTC)
    queries = ["graph neural networks since 2023", "graph neural networks in 2016", "learning"]
    try:
        assert text_scale.use_synthetic_query_vectors(queries, now) == 2
        vector = query_cache.query_vector(get_embedder(), "graph neural networks")
        np.testing.assert_array_equal(vector, text_scale.query_vector_for("graph neural networks"))
    finally:
        query_cache.clear()
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
    # Its share in the passages' latent space: QUERY_MIX (a random direction's: ~sqrt(32/384))
    in_latent = np.linalg.norm(scale._basis().T @ vector)
    assert in_latent == pytest.approx(text_scale.QUERY_MIX, abs=0.1)
    noise = np.random.default_rng(0).normal(size=384)
    assert np.linalg.norm(scale._basis().T @ (noise / np.linalg.norm(noise))) < 0.45

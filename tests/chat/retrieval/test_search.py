"""Hybrid search on a small real catalogue in real PostgreSQL (hashing embedder, real BM25)."""

import json
from datetime import UTC, datetime

import pytest
from asgiref.sync import async_to_sync

from chat.retrieval.search import SearchError, search
from papers.models import Paper

from .search_corpus import HIDDEN_ID, NOW, build_corpus, day, index_all

run = async_to_sync(search)


@pytest.fixture
def corpus(db, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    return build_corpus()


def ids_of(response):
    return [hit.arxiv_id for hit in response.hits]


def test_hybrid_search_finds_topic_papers_with_both_retrievers(corpus):
    response = run("quantum error correction surface codes", k=3, now=NOW)

    assert set(ids_of(response)) == {"1805.00009", "2202.00010", "2508.00011"}
    top = response.hits[0]
    assert top.dense_rank is not None and top.fulltext_rank is not None
    # In words: which query words it matches and where, and that it is close in meaning.
    assert any(reason.startswith("matches ‘") and "in the title" in reason for reason in top.why)
    assert "similar in meaning" in top.why
    assert not any("#" in reason for reason in top.why)
    assert "<mark>" in top.snippet_html
    assert top.passage_text.startswith(top.title)
    assert set(response.timings) >= {"analysis", "lexical", "dense", "fusion", "total"}


def test_window_returns_exactly_k_papers_all_inside(corpus):
    response = run("diffusion models for image generation since 2025", k=3, now=NOW)

    assert response.analysis.start == datetime(2025, 1, 1, tzinfo=UTC)
    assert len(response.hits) == 3
    assert all(hit.published >= day("2025-01-01") for hit in response.hits)
    assert all(
        f"published {hit.published:%Y-%m-%d}, inside your window" in hit.why
        for hit in response.hits
    )


def test_window_returns_every_match_when_fewer_than_k_exist(corpus):
    response = run("diffusion models in 2024", k=10, now=NOW)

    # 2406.00004 is the only paper of 2024 about diffusion; 2411.00013 (graphs) is also in 2024.
    assert "2406.00004" in ids_of(response)
    assert all(day("2024-01-01") <= hit.published <= day("2025-01-01") for hit in response.hits)
    in_2024 = Paper.objects.filter(published__year=2024, hidden=False).count()
    assert len(response.hits) <= in_2024


@pytest.mark.parametrize("exact_max", [0, 100_000], ids=["hnsw-iterative", "exact-scan"])
def test_window_filter_is_applied_inside_both_retrievers(corpus, settings, exact_max):
    # Two candidates per retriever: were the window applied after retrieval, the 8 diffusion
    # papers outside 2025 would crowd out the ones inside.
    settings.SEARCH_CANDIDATES = 2
    settings.DENSE_EXACT_MAX = exact_max

    response = run("diffusion models for image generation in 2025", k=2, now=NOW)

    assert ids_of(response) and len(response.hits) == 2
    assert {hit.arxiv_id for hit in response.hits} == {"2503.00005", "2512.00006"}
    assert response.plan["dense"] == ("exact" if exact_max else "hnsw")


def test_category_filter(corpus):
    response = run("diffusion models in cs.LG", k=10, now=NOW)

    assert response.analysis.categories == ("cs.LG",)
    assert response.hits
    assert all("cs.LG" in hit.categories for hit in response.hits)


def test_archive_category_matches_its_subcategories(corpus):
    response = run("diffusion", k=10, now=NOW, overrides={"categories": ["cs"]})

    assert response.hits
    assert all(any(c.startswith("cs.") for c in hit.categories) for hit in response.hits)
    assert "1805.00009" not in ids_of(response)


def test_author_filter(corpus):
    response = run("diffusion models by Geoffrey Hinton", k=10, now=NOW)

    assert response.analysis.authors == ("Geoffrey Hinton",)
    assert set(ids_of(response)) == {"1901.00001", "2306.00003", "2512.00006"}


def test_filters_without_topic_list_newest_first(corpus):
    response = run("papers by Yann LeCun", k=10, now=NOW)

    assert ids_of(response) == ["2411.00013", "2406.00004", "2306.00003", "2009.00012"]


def test_hidden_papers_are_never_returned(corpus):
    for query in ("diffusion models for image generation", "papers by Geoffrey Hinton"):
        assert HIDDEN_ID not in ids_of(run(query, k=20, now=NOW))
    assert HIDDEN_ID in ids_of(
        run("diffusion models for image generation", k=20, now=NOW, include_hidden=True)
    )


def test_similar_papers_by_arxiv_id_exclude_the_paper(corpus):
    response = run("papers like 2406.00004", k=5, now=NOW)

    assert response.analysis.arxiv_id == "2406.00004"
    assert "2406.00004" not in ids_of(response)
    assert HIDDEN_ID not in ids_of(response)
    assert all("diffusion" in hit.title.lower() for hit in response.hits[:4])
    assert "close in meaning to arXiv:2406.00004" in response.hits[0].why


def test_unknown_arxiv_id_says_so(corpus):
    response = run("papers like 2401.99999", k=5, now=NOW)

    assert response.hits == []
    assert response.notices == ["2401.99999 is not in the catalogue."]


def test_exclude_ids(corpus):
    excluded = corpus["1805.00009"]
    response = run("quantum error correction", k=10, now=NOW, exclude_ids=[excluded])

    assert "1805.00009" not in ids_of(response)
    assert "2202.00010" in ids_of(response)


def test_query_without_time_intent_is_never_reordered_by_date(corpus):
    query = "diffusion models for image generation"
    before = run(query, k=8, now=NOW)
    assert before.analysis.recency_weight == 0

    # Make the last result the newest paper of all and the first the oldest: same order.
    Paper.objects.filter(arxiv_id=before.hits[-1].arxiv_id).update(published=day("2026-11-20"))
    Paper.objects.filter(arxiv_id=before.hits[0].arxiv_id).update(published=day("1995-01-01"))
    after = run(query, k=8, now=NOW)

    assert ids_of(after) == ids_of(before)
    assert [h.score for h in after.hits] == [h.score for h in before.hits]


def test_newer_papers_added_do_not_change_a_non_temporal_ranking(corpus):
    query = "graph neural networks for molecules"
    before = ids_of(run(query, k=3, now=NOW))
    extra = [
        (
            "2611.00100",
            "Protein folding with transformers",
            "Proteins fold.",
            [],
            ["q-bio.BM"],
            "2026-11-20",
        )
    ]
    build_more(extra)

    assert ids_of(run(query, k=3, now=NOW)) == before


def build_more(rows):
    from papers.ingest.upsert import upsert_papers

    from .search_corpus import record

    upsert_papers([record(*row) for row in rows])
    index_all()


def test_recency_query_prefers_the_newer_of_two_equal_papers(corpus):
    twin = ("Tensor sketching for streaming", "Tensor sketching summarises streaming data.")
    # The older twin is written first, so it wins ties (lower id) when recency does not count.
    build_more(
        [
            ("1701.00200", *twin, ["Ada Lovelace"], ["cs.DS"], "2017-01-01"),
            ("2610.00201", *twin, ["Ada Lovelace"], ["cs.DS"], "2026-10-01"),
        ]
    )

    plain = run("tensor sketching streaming", k=2, now=NOW)
    recent = run("latest tensor sketching streaming", k=2, now=NOW)

    assert ids_of(plain) == ["1701.00200", "2610.00201"]
    assert recent.analysis.recency_weight > 0 and not recent.analysis.start
    # Newer first, and the older twin is not pushed out by new papers on other topics
    # (2610.00008 and 2605.00007 are newer than both, about diffusion).
    assert ids_of(recent) == ["2610.00201", "1701.00200"]
    assert any(r.endswith("(newer papers ranked higher)") for r in recent.hits[0].why)


def test_overrides_change_and_remove_the_window(corpus):
    query = "diffusion models for image generation since 2025"
    edited = run(
        query, k=10, now=NOW, overrides={"start": day("2021-01-01"), "end": day("2021-12-31")}
    )
    removed = run(query, k=10, now=NOW, overrides={"start": None, "end": None})

    assert ids_of(edited) == ["2104.00002"]
    assert removed.analysis.start is None and removed.analysis.end is None
    assert {"1901.00001", "2104.00002", "2306.00003"} <= set(ids_of(removed))


def test_snippets_escape_html_in_abstracts(corpus):
    response = run("diffusion models image generation", k=20, now=NOW)
    hit = next(h for h in response.hits if h.arxiv_id == "2601.00014")

    assert "<script>" not in hit.snippet_html and "<b>" not in hit.snippet_html
    assert "&lt;script&gt;" in hit.snippet_html
    assert "<mark>Diffusion</mark>" in hit.snippet_html


def test_response_is_json_serialisable(corpus):
    data = json.loads(
        json.dumps(run("quantum error correction since 2020", k=2, now=NOW).to_dict())
    )

    assert set(data) >= {"analysis", "results", "timings"}
    assert data["analysis"]["is_temporal"] is True
    assert data["analysis"]["start"].startswith("2020-01-01")
    assert {"arxiv_id", "title", "published", "score", "why", "snippet_html"} <= set(
        data["results"][0]
    )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"text": "", "k": 10}, "empty"),
        ({"text": "x" * 2001, "k": 10}, "too long"),
        ({"text": "diffusion", "k": 0}, "k must be"),
        ({"text": "diffusion", "k": 101}, "k must be"),
        ({"text": "diffusion", "k": 10, "overrides": {"phrase": "x"}}, "cannot override phrase"),
        ({"text": "diffusion", "k": 10, "overrides": {"recency_weight": 2}}, "recency weight"),
    ],
)
def test_bad_input_is_a_clear_error(corpus, kwargs, message):
    with pytest.raises(SearchError, match=message):
        run(**kwargs, now=NOW)


def test_empty_catalogue_returns_nothing(db, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    assert run("diffusion models", k=5, now=NOW).hits == []


@pytest.mark.django_db(transaction=True)
async def test_search_runs_inside_an_event_loop(settings):
    from asgiref.sync import sync_to_async
    from django.db import connections

    from chat.lanes import close_connections

    settings.EMBEDDING_BACKEND = "hashing"
    await sync_to_async(build_corpus)()

    try:
        response = await search("quantum error correction", k=2, now=NOW)
    finally:
        # Every connection search opened, so the test database can be dropped.
        await sync_to_async(close_connections, thread_sensitive=False)()
        await sync_to_async(connections.close_all)()

    assert len(response.hits) == 2
    # Outside a transaction, BM25 and dense ran side by side on the pooled connections.
    assert {"lexical", "dense", "embed", "retrieval"} <= set(response.timings)


@pytest.mark.django_db(transaction=True)
def test_search_survives_its_pooled_connections_being_cut(settings):
    """A database restart cuts every connection: the next search reconnects instead of failing."""
    from django.db import connection

    from chat.lanes import close_connections

    settings.EMBEDDING_BACKEND = "hashing"
    build_corpus()
    try:
        assert len(run("quantum error correction", k=2, now=NOW).hits) == 2
        with connection.cursor() as cursor:  # every other session of this database
            cursor.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            assert cursor.fetchone()[0] >= 1

        assert len(run("quantum error correction", k=2, now=NOW).hits) == 2
    finally:
        close_connections()

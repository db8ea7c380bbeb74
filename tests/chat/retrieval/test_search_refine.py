"""Ranking refinements (chat/retrieval/refine.py): each off by default, each changing the
ranking the way it says, and every one of them still a valid search on a real catalogue."""

import pytest
from asgiref.sync import async_to_sync
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from chat.retrieval import refine
from chat.retrieval.filters import SearchFilters
from chat.retrieval.fulltext import QueryTerm, lexical_search, sparse_literal
from chat.retrieval.fusion import Ranked
from chat.retrieval.search import search
from papers.embeddings import get_embedder
from papers.indexing.lexical import index_missing
from papers.indexing.vectors import embed_sentences
from papers.ingest.upsert import PaperRecord, upsert_papers
from papers.models import Paper

from .search_corpus import NOW, build_corpus

run = async_to_sync(search)
# The sentence tests write ~10 passage rows a paper: later modules must not plan for them.
pytestmark = pytest.mark.usefixtures("tidy_passage_statistics")


def test_nothing_is_refined_by_default_and_no_sentence_is_embedded(settings):
    # "sentences" won on SciFact, by less than its embedding costs on a small machine: opt-in.
    assert not refine.active().any
    assert not settings.SENTENCE_VECTORS  # what it would read
    settings.SEARCH_REFINE = "sentences"
    assert refine.active() == refine.Refinements(sentences=True)
    assert refine.parse("prf-bm25:3, fusion-gap") == refine.Refinements(prf_bm25=3, fusion="gap")
    assert refine.parse("prf-dense,passage-top2").feedback == refine.ROCCHIO_DOCS
    assert refine.parse("learned") == refine.Refinements(learned=True)
    assert refine.parse("learned").reads_sentences and refine.parse("sentences").reads_sentences
    assert not refine.parse("proximity").reads_sentences


@pytest.mark.parametrize("value", ["rm3", "prf-bm25:0", "prf-bm25:x", "fusion-gap:2"])
def test_unknown_refinements_are_configuration_errors(value):
    with pytest.raises(ImproperlyConfigured, match="SEARCH_REFINE"):
        refine.parse(value)


def test_rm3_feedback_model_weighs_papers_by_score_and_terms_by_share():
    documents = {1: {10: 1.0, 11: 1.0}, 2: {10: 2.0}}
    model = refine.feedback_model(documents, {1: 3.0, 2: 1.0})

    assert model[10] == pytest.approx(0.75 * 0.5 + 0.25 * 1.0)
    assert model[11] == pytest.approx(0.75 * 0.5)
    assert sum(model.values()) == pytest.approx(1.0)


def test_expanded_query_keeps_half_its_weight_on_the_query_terms():
    query = [QueryTerm(10, "cell", 5, 2.0)]
    weights = refine.expanded_weights(query, {10: 0.2, 11: 0.6, 12: 0.2}, {10: 2.0, 11: 1.0}, 2)

    # Top 2 feedback terms: 11 (0.6) and 10 (0.2), normalised to 0.75 / 0.25; 12 is cut.
    assert weights == {10: pytest.approx((0.5 + 0.5 * 0.25) * 2.0), 11: pytest.approx(0.375)}


def test_passage_aggregates():
    assert refine.aggregate([0.2, 0.8, 0.5], "max") == 0.8
    assert refine.aggregate([0.2, 0.8, 0.5], "sum") == pytest.approx(1.5)
    assert refine.aggregate([0.2, 0.8, 0.5], "top2") == pytest.approx(0.65)
    assert refine.aggregate([0.4], "top2") == 0.4


def test_gap_fusion_trusts_the_list_whose_head_stands_out():
    # Twelve papers each: the dense head drops at once, BM25's tenth scores nearly its first.
    sure = Ranked("dense", list(range(12)), [0.9] + [0.2 - i / 100 for i in range(11)], 0.5)
    flat = Ranked("fulltext", list(range(12, 24)), [10.0 - i / 100 for i in range(11)] + [1], 0.5)

    adapted = refine.adapt_weights([sure, flat], "gap", 5)

    assert adapted[0].weight > 0.5 > adapted[1].weight
    assert sum(r.weight for r in adapted) == pytest.approx(1.0)


def test_length_fusion_leans_on_dense_for_long_queries():
    lists = [Ranked("dense", [1], [0.9], 0.5), Ranked("fulltext", [2], [3.0], 0.5)]

    short = refine.adapt_weights(lists, "length", 2)
    long = refine.adapt_weights(lists, "length", 20)

    assert short[0].weight == pytest.approx(0.3) and long[0].weight == pytest.approx(0.7)


def test_proximity_pairs_the_query_terms_that_stand_near_each_other():
    # "surface codes protect logical qubits": stopwords keep their positions in a tsvector.
    query = {"surfac": [1], "code": [2], "protect": [3], "logic": [4], "qubit": [5]}

    pairs = refine.near_pairs(query, window=1)

    assert pairs == [("surfac", "code"), ("code", "protect"), ("protect", "logic"),
                     ("logic", "qubit")]  # fmt: skip
    assert refine.near_count([1, 40], [2, 90], window=3) == 1
    assert refine.near_count([5], [2], window=3) == 1  # either order
    assert refine.near_count([1], [9], window=3) == 0


def test_proximity_favours_the_paper_holding_the_phrase():
    query = {"surfac": [1], "code": [2]}
    papers = {
        1: {"surfac": [3], "code": [4]},  # "surface codes"
        2: {"surfac": [3], "code": [30]},  # both words, far apart
    }

    bonus = refine.proximity_scores(query, papers, {"surfac": 2.0, "code": 1.0})

    assert set(bonus) == {1}
    assert bonus[1] == pytest.approx(1.5 * 1 * (refine.K1 + 1) / (1 + refine.K1))


def test_proximity_lifts_the_paper_whose_words_stand_together(db, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    records = [
        PaperRecord(arxiv_id=arxiv_id, version=1, title=title, abstract=abstract, authors=[],
                    primary_category="cs.LG", categories=["cs.LG"], published=NOW, updated=NOW)
        for arxiv_id, title, abstract in [
            ("2601.00001", "Notes",
             "Networks of roads are studied. The brain holds neural tissue. We recall graph theory."),
            ("2601.00002", "Notes",
             "Graph neural networks for roads, tissue and models, studied at length here, in many "
             "other settings and over many more words than the other paper uses."),
        ]
    ]  # fmt: skip
    upsert_papers(records)
    index_missing()
    text = "graph neural networks"
    with connection.cursor() as cursor:
        lexical = lexical_search(cursor, text, SearchFilters(), 10)
        assert {h.paper_id for h in lexical.hits} == set(Paper.objects.values_list("id", flat=True))
        refined = refine.add_proximity(cursor, lexical, text)

    ids = [Paper.objects.get(pk=h.paper_id).arxiv_id for h in refined.hits]
    # BM25 alone prefers the shorter paper; its three words stand apart, the other's together.
    assert Paper.objects.get(pk=lexical.hits[0].paper_id).arxiv_id == "2601.00001"
    assert ids == ["2601.00002", "2601.00001"]
    assert refined.hits[1].score == lexical.hits[0].score


@pytest.mark.parametrize(
    "value", ["prf-bm25:2", "prf-dense:2", "prf-bm25:2,prf-dense:2", "fusion-gap",
              "fusion-length", "passage-sum", "passage-top2", "proximity", "learned"],
)  # fmt: skip
def test_every_refinement_still_finds_the_topic(db, settings, value):
    settings.EMBEDDING_BACKEND = "hashing"
    build_corpus()
    settings.SEARCH_REFINE = value

    response = run("quantum error correction surface codes", k=3, now=NOW)

    assert {hit.arxiv_id for hit in response.hits} == {"1805.00009", "2202.00010", "2508.00011"}
    assert "refine" in response.timings
    assert any("<mark>" in hit.snippet_html for hit in response.hits)


def test_sentence_list_ranks_candidates_by_their_closest_sentence(db, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    ids = build_corpus()
    embed_sentences()
    embedder = get_embedder()
    # The graph papers' second sentence, word for word: both hold it, the quantum papers do not.
    vector = embedder.embed_query("Message passing on molecular graphs predicts chemistry.")
    candidates = [ids["1805.00009"], ids["2009.00012"], ids["2411.00013"]]

    with connection.cursor() as cursor:
        ranked = refine.sentence_list(cursor, vector, embedder.name, candidates)

    assert ranked.name == "sentences" and ranked.weight == refine.SENTENCE_WEIGHT
    assert set(ranked.ids[:2]) == {ids["2009.00012"], ids["2411.00013"]}
    assert ranked.ids[2] == ids["1805.00009"]
    assert ranked.scores[0] == pytest.approx(1.0, abs=1e-5)


def test_sentences_refinement_fuses_a_third_list(db, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    build_corpus()
    embed_sentences()
    settings.SEARCH_REFINE = "sentences"

    response = run("quantum error correction surface codes", k=3, now=NOW)

    assert {hit.arxiv_id for hit in response.hits} == {"1805.00009", "2202.00010", "2508.00011"}
    assert "refine" in response.timings


@pytest.mark.parametrize("value", ["sentences", "learned"])
def test_sentence_refinements_without_sentence_vectors_change_nothing(db, settings, value):
    settings.EMBEDDING_BACKEND = "hashing"
    build_corpus()
    before = [h.arxiv_id for h in run("decoders at scale", k=14, now=NOW).hits]
    settings.SEARCH_REFINE = value

    after = [h.arxiv_id for h in run("decoders at scale", k=14, now=NOW).hits]

    assert after == before


def test_learned_scores_weigh_every_score_of_every_candidate():
    # (paper, best passage, BM25, best sentence): paper 2 was missing from the BM25 list in the
    # default fusion (0 there); here its own BM25 score counts. Paper 3 has no sentence vectors.
    rows = [(1, 0.9, 10.0, 0.5), (2, 0.8, 6.0, 0.9), (3, 0.7, 2.0, None)]

    scores = refine.learned_scores(rows, weights=(0.2, 0.4, 0.4))

    assert scores[1] == pytest.approx(0.2 * 1.0 + 0.4 * 1.0 + 0.4 * 0.0)
    assert scores[2] == pytest.approx(0.2 * 0.5 + 0.4 * 0.5 + 0.4 * 1.0)
    assert scores[3] == pytest.approx(0.0)
    assert refine.min_max([3.0, 3.0, None]) == [1.0, 1.0, 0.0]
    assert sum(refine.LEARNED_WEIGHTS) == pytest.approx(1.0, abs=1e-3)


def test_learned_list_reads_the_three_scores_of_every_candidate(db, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    ids = build_corpus()
    embed_sentences()
    embedder = get_embedder()
    text = "Message passing on molecular graphs predicts chemistry."
    vector = embedder.embed_query(text)
    candidates = [ids["1805.00009"], ids["2009.00012"], ids["2411.00013"], ids["1901.00001"]]

    with connection.cursor() as cursor:
        terms = lexical_search(cursor, text, SearchFilters(), 10).terms
        ranked = refine.learned_list(cursor, vector, embedder.name, terms, candidates)
        cursor.execute(
            "SELECT paper_id, -(weights <#> %s::sparsevec) FROM papers_paperlexicon",
            [sparse_literal({t.id: t.idf for t in terms})],
        )
        bm25 = dict(cursor.fetchall())

    assert ranked.name == "learned" and sorted(ranked.ids) == sorted(candidates)
    # The graph papers hold the sentence word for word and most of its terms: first.
    assert set(ranked.ids[:2]) == {ids["2009.00012"], ids["2411.00013"]}
    # The quantum and diffusion papers share no term with it: BM25 0, each scored only by
    # how far its passage and sentence vectors are from the query.
    assert bm25[ids["1805.00009"]] == 0 and bm25[ids["1901.00001"]] == 0
    assert ranked.scores[0] <= sum(refine.LEARNED_WEIGHTS) + 1e-9
    assert ranked.scores[-1] < refine.LEARNED_WEIGHTS[1]


def test_learned_refinement_orders_the_results_by_the_learned_list(db, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    ids = build_corpus()
    embed_sentences()
    text = "decoders at scale"
    default = [h.arxiv_id for h in run(text, k=14, now=NOW).hits]
    settings.SEARCH_REFINE = "learned"

    learned = [h.arxiv_id for h in run(text, k=14, now=NOW).hits]

    embedder = get_embedder()
    candidates = sorted(ids[a] for a in default)  # every visible paper: dense finds them all
    with connection.cursor() as cursor:
        lexical = lexical_search(cursor, text, SearchFilters(), 10)
        ranked = refine.learned_list(
            cursor, embedder.embed_query(text), embedder.name, lexical.terms, candidates
        )
    arxiv = dict(Paper.objects.values_list("id", "arxiv_id"))
    assert learned == [arxiv[i] for i in ranked.ids]
    # The first quantum paper holds "decoders" in its abstract only, the last of the BM25 list:
    # 0 there in the default fusion (min-max over the list), its own BM25 score in the learned
    # one (min-max over every candidate, most of which hold no query term).
    assert arxiv[lexical.hits[-1].paper_id] == "1805.00009"
    assert learned.index("1805.00009") < learned.index("2503.00005")
    assert default.index("1805.00009") > default.index("2503.00005")

"""The BM25 index (papers.indexing.lexical) and lexical retrieval (chat.retrieval.fulltext) in PostgreSQL."""

import math
from collections import Counter

import pytest
from django.db import connection

from chat.retrieval.filters import SearchFilters
from chat.retrieval.fulltext import lexical_search, split_selective
from papers.indexing import lexical
from papers.ingest.upsert import upsert_papers
from papers.models import LexicalStats, LexicalTerm, Paper, PaperLexicon

from .search_corpus import build_corpus, record


@pytest.fixture
def corpus(db, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    return build_corpus()


def expected_bm25(query: str) -> dict[int, float]:
    """BM25 computed here in Python from the papers' tsvectors: the formula, independently."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT p.id, u.lexeme, u.weights FROM papers_paper p, unnest(p.search_vector) u"
        )
        rows = cursor.fetchall()
        cursor.execute("SELECT tsvector_to_array(to_tsvector('english', %s))", [query])
        query_lexemes = cursor.fetchone()[0]
    tf: dict[int, Counter] = {}
    for paper_id, lexeme, weights in rows:
        count = sum(lexical.TITLE_WEIGHT if w == "A" else 1 for w in weights)
        tf.setdefault(paper_id, Counter())[lexeme] = count
    documents = len(tf)
    avg = sum(sum(c.values()) for c in tf.values()) / documents
    df = Counter(lexeme for counts in tf.values() for lexeme in counts)
    scores = {}
    for paper_id, counts in tf.items():
        length = sum(counts.values())
        score = 0.0
        for lexeme in query_lexemes:
            if counts[lexeme]:
                idf = math.log(1 + (documents - df[lexeme] + 0.5) / (df[lexeme] + 0.5))
                t = counts[lexeme]
                norm = t + lexical.K1 * (1 - lexical.B + lexical.B * length / avg)
                score += idf * t * (lexical.K1 + 1) / norm
        if score:
            scores[paper_id] = score
    return scores


def search(text, n=50, **filters):
    with connection.cursor() as cursor:
        return lexical_search(cursor, text, SearchFilters(include_hidden=True, **filters), n)


def test_scores_are_bm25(corpus):
    query = "quantum error correction surface codes diffusion"
    want = expected_bm25(query)

    got = {hit.paper_id: hit.score for hit in search(query).hits}

    assert set(got) == set(want)
    for paper_id, score in want.items():
        assert got[paper_id] == pytest.approx(score, rel=1e-4)


def test_reindexing_counts_each_paper_once(corpus):
    terms = dict(LexicalTerm.objects.values_list("lexeme", "df"))
    stats = LexicalStats.objects.values_list("documents", "total_length").get()

    lexical.index_papers(Paper.objects.values_list("id", flat=True))
    lexical.index_papers(Paper.objects.values_list("id", flat=True)[:3])

    assert dict(LexicalTerm.objects.values_list("lexeme", "df")) == terms
    assert LexicalStats.objects.values_list("documents", "total_length").get() == pytest.approx(
        stats
    )
    assert PaperLexicon.objects.count() == Paper.objects.count()


def test_a_new_version_moves_document_frequencies(corpus):
    before = dict(LexicalTerm.objects.values_list("lexeme", "df"))
    changed = record(
        "1805.00009",
        "Photonic lattices",
        "Photonic lattices guide light.",
        [],
        ["physics.optics"],
        "2018-05-01",
    )
    changed.version = 2
    upsert_papers([changed])

    assert lexical.index_missing() == 1

    after = dict(LexicalTerm.objects.values_list("lexeme", "df"))
    assert after["photon"] == 1 and after["lattic"] == 1
    assert after["surfac"] == before["surfac"] - 1
    assert search("photonic lattices").hits[0].paper_id == corpus["1805.00009"]
    assert corpus["1805.00009"] not in {h.paper_id for h in search("surface codes").hits}


def test_index_missing_is_idempotent(corpus):
    assert lexical.index_missing() == 0


def test_rebuild_gives_the_same_scores(corpus):
    query = "graph neural networks molecules"
    before = [(h.paper_id, round(h.score, 5)) for h in search(query).hits]

    lexical.rebuild()

    assert [(h.paper_id, round(h.score, 5)) for h in search(query).hits] == before


def test_a_rebuild_restores_the_indexes_an_interrupted_one_had_dropped(corpus):
    """A rebuild drops the lexicon's secondary indexes (committed) and creates them at its end:
    one killed in between left them missing, and the next recreated only what it found."""
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX papers_lexicon_terms_idx")
        cursor.execute("DROP INDEX papers_champion_walk_idx")

    lexical.rebuild()

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename IN"
            " ('papers_paperlexicon', 'papers_lexicalchampion') ORDER BY 1"
        )
        names = [row[0] for row in cursor.fetchall()]
    assert set(lexical.declared_indexes()) <= set(names)
    assert "papers_lexicon_terms_idx" in names and "papers_champion_walk_idx" in names


def test_hidden_and_excluded_papers_are_filtered_even_beyond_the_ranked_head(corpus):
    diffusion = Paper.objects.filter(title__icontains="diffusion").order_by("id")
    ids = list(diffusion.values_list("id", flat=True))
    # Hide five of the best matches: more than the 2n head the first query looks at for n=1.
    Paper.objects.filter(id__in=ids[:5]).update(hidden=True)
    with connection.cursor() as cursor:
        hits = lexical_search(
            cursor, "diffusion image generation", SearchFilters(exclude_ids=(ids[5],)), 1
        ).hits

    assert len(hits) == 1
    assert hits[0].paper_id not in ids[:6]
    assert not Paper.objects.get(id=hits[0].paper_id).hidden


def test_window_and_category_filters(corpus):
    from .search_corpus import day

    hits = search("diffusion", start=day("2025-01-01"), categories=("cs.LG",)).hits

    papers = Paper.objects.in_bulk([h.paper_id for h in hits])
    assert {p.arxiv_id for p in papers.values()} == {"2512.00006", "2610.00008"}


def test_common_words_without_champions_are_read_whole_and_exact(corpus):
    # Terms in fewer than CHAMPION_MIN_DF papers have no champions: beyond the cap they are
    # still read whole (a tiny cap costs time, never relevance).
    with connection.cursor() as cursor:
        small = lexical_search(cursor, "diffusion models", SearchFilters(), 50, cap=3)
        full = lexical_search(cursor, "diffusion models", SearchFilters(), 50, cap=10**9)

    assert small.generator == full.generator == "postings" and small.exact
    assert [(h.paper_id, h.score) for h in small.hits] == [(h.paper_id, h.score) for h in full.hits]
    assert len(full.hits) > 3


def test_selective_terms_are_the_rarest_within_the_cap():
    from chat.retrieval.fulltext import QueryTerm

    terms = [
        QueryTerm(1, "model", 900, 0.1),
        QueryTerm(2, "sketch", 3, 5.0),
        QueryTerm(3, "tensor", 40, 3.0),
    ]

    selective, rest = split_selective(terms, cap=100)

    assert [t.lexeme for t in selective] == ["sketch", "tensor"]
    assert [t.lexeme for t in rest] == ["model"]


def test_unknown_words_find_nothing(corpus):
    result = search("zyxwvut")

    assert result.hits == [] and result.lexemes == ["zyxwvut"] and result.terms == []


def test_bulk_rebuild_gives_the_same_counts_and_bm25_scores(corpus):
    terms = dict(LexicalTerm.objects.values_list("lexeme", "df"))
    stats = LexicalStats.objects.values_list("documents", "total_length").get()

    assert lexical.rebuild() == Paper.objects.count()

    assert dict(LexicalTerm.objects.values_list("lexeme", "df")) == terms
    assert LexicalStats.objects.values_list("documents", "total_length").get() == stats
    query = "quantum error correction surface codes diffusion"
    got = {hit.paper_id: hit.score for hit in search(query).hits}
    want = expected_bm25(query)
    assert set(got) == set(want)
    for paper_id, score in want.items():
        assert got[paper_id] == pytest.approx(score, rel=1e-4)

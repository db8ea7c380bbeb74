"""The bodies' BM25 index (papers.indexing.lexical.BODIES): each read paper's full text as one
document, searched by the abstracts' exact, bounded machinery (chat.retrieval.fulltext) through a
cursor that names the bodies' tables. A word only a body holds finds its paper; the index follows
a paper read again; the filters stay inside; and on real text with champions, walks and windows
the ranking is exhaustive BM25's over the bodies."""

import importlib
from collections import Counter

import pytest
from django.apps import apps
from django.db import connection

from chat.retrieval.filters import SearchFilters
from chat.retrieval.fulltext import lexical_search
from chat.retrieval.search import search
from papers.indexing import lexical
from papers.indexing.lexical import ABSTRACTS, BODIES
from papers.ingest.upsert import upsert_papers
from papers.models import BodyLexicon, BodyStats, BodyTerm, FullText, Paper
from tests.chat.conftest import NOW
from tests.chat.fulltext_helpers import add_fulltext
from tests.chat.retrieval.test_search_lexical_champions import (
    QUERIES,
    WINDOWS,
    _day,
    sample_records,
    small_champions,
)

SOURDOUGH = (
    "As an aside, the sourdough starter was kept at 75 percent hydration and fed with rye flour "
    "every twelve hours during the cryostat runs."
)


def _found(text: str, lexicon=BODIES, n: int = 10, **filters) -> list[str]:
    with connection.cursor() as cursor:
        result = lexical_search(lexicon.cursor(cursor), text, SearchFilters(**filters), n)
    ids = [h.paper_id for h in result.hits]
    arxiv = dict(Paper.objects.filter(pk__in=ids).values_list("pk", "arxiv_id"))
    return [arxiv[i] for i in ids]


def _read_quantum_paper() -> Paper:
    quantum = Paper.objects.get(arxiv_id="9901.00007")
    add_fulltext(quantum, [["We compute the concurrence of two-qubit Werner states."], [SOURDOUGH]])
    return quantum


@pytest.mark.django_db(transaction=True)
def test_a_word_only_a_body_holds_finds_its_paper_where_the_abstracts_index_cannot(catalogue):
    _read_quantum_paper()
    lexical.index_missing()
    assert _found("sourdough rye flour") == ["9901.00007"]
    assert _found("sourdough rye flour", ABSTRACTS) == []
    # Its abstract's words are in its body's entry only where the body says them.
    assert _found("Werner states concurrence") == ["9901.00007"]
    assert BodyStats.objects.get().documents == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_search_says_a_paper_was_found_by_its_full_texts_words(catalogue, settings):
    settings.FULLTEXT_WORD_UNIT = "body"
    from asgiref.sync import sync_to_async

    await sync_to_async(_read_quantum_paper)()
    # Four more bodies hold one of the question's words.
    others = [p async for p in Paper.objects.exclude(arxiv_id="9901.00007").order_by("arxiv_id")]
    for paper in others[:4]:
        await sync_to_async(add_fulltext)(paper, [["The hydration of the membrane was measured."]])
    response = await search("sourdough rye flour hydration", k=8, now=NOW)
    top = response.hits[0]
    assert top.arxiv_id == "9901.00007" and top.passage_text == SOURDOUGH
    assert "your words in its full text #1" in top.why
    # Only the body word list's best few say so (most bodies hold some of a question's words).
    said = [r for hit in response.hits for r in hit.why if "in its full text" in r]
    assert sorted(said) == [f"your words in its full text #{n}" for n in (1, 2, 3)]
    assert response.timings["chunk_words"] >= 0


@pytest.mark.django_db(transaction=True)
def test_a_paper_read_again_replaces_its_body_entry(catalogue):
    quantum = _read_quantum_paper()
    add_fulltext(quantum, [["We compute the negativity of three-qubit GHZ states."]])
    assert _found("sourdough") == []
    assert _found("negativity GHZ") == ["9901.00007"]
    assert BodyTerm.objects.get(lexeme="sourdough").df == 0
    assert BodyTerm.objects.get(lexeme="negat").df == 1
    assert BodyStats.objects.get().documents == 1 and BodyLexicon.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_window_hidden_papers_and_the_scope_stay_inside_the_body_search(catalogue):
    quantum = _read_quantum_paper()
    consistency = Paper.objects.get(arxiv_id="2510.00003")
    add_fulltext(consistency, [["Our sourdough of tricks: four sampling steps."]])
    assert set(_found("sourdough")) == {"9901.00007", "2510.00003"}
    after_2020 = _day("2020-01-01")
    assert _found("sourdough", start=after_2020) == ["2510.00003"]
    assert _found("sourdough", paper_ids=(quantum.pk,)) == ["9901.00007"]
    Paper.objects.filter(pk=consistency.pk).update(hidden=True)
    assert _found("sourdough") == ["9901.00007"]


@pytest.mark.django_db(transaction=True)
def test_the_migration_indexes_the_bodies_read_before_it(catalogue):
    _read_quantum_paper()
    BodyLexicon.objects.all().delete()
    assert _found("sourdough") == []
    migration = importlib.import_module("papers.migrations.0025_index_read_bodies")
    migration.index_read_bodies(apps, None)
    assert _found("sourdough") == ["9901.00007"]


# --- On real text: bodies made of other papers' abstracts, champions, walks and windows -------

SLICE = 400


@pytest.fixture
def bodies(db, shared_data, settings, monkeypatch):
    """SLICE real papers, each read with a body made of the next five papers' abstracts (real
    English term statistics, words its own abstract lacks); champions for every body term in 40+
    bodies; a search that walks two papers at a time and reads whole only terms summing to 60."""
    small_champions(settings, monkeypatch)
    records = sample_records(shared_data, SLICE + 5)
    upsert_papers(records[:SLICE])
    papers = {p.arxiv_id: p for p in Paper.objects.all()}
    FullText.objects.bulk_create(
        FullText(
            paper=papers[record.arxiv_id], status=FullText.Status.OK,
            text="\n\n".join(r.abstract for r in records[i + 1 : i + 6]),
        )
        for i, record in enumerate(records[: SLICE - 40])
    )  # fmt: skip
    lexical.rebuild(lexicon=BODIES)
    return records, papers


def test_body_search_ranks_as_exhaustive_bm25_over_the_bodies(bodies):
    generators = Counter()
    for query in QUERIES:
        for start, end in WINDOWS:
            filters = dict(start=_day(start), end=_day(end))
            fast = _found(query, **filters)
            with connection.cursor() as cursor:
                full = lexical_search(
                    BODIES.cursor(cursor), query, SearchFilters(**filters), 10, cap=10**9
                )
                result = lexical_search(BODIES.cursor(cursor), query, SearchFilters(**filters), 10)
            arxiv = {p.pk: a for a, p in bodies[1].items()}
            assert fast == [arxiv[h.paper_id] for h in full.hits], (query, start, end)
            assert result.exact and full.generator == "postings"
            generators[result.generator] += 1
    assert generators["champions"] + generators["essential"] >= 4, generators


def test_bodies_read_after_a_rebuild_keep_the_body_search_exact(bodies):
    records, papers = bodies
    # The last 40 papers are read now, one by one, as papers.fulltext.read indexes them.
    for i, record in enumerate(records[SLICE - 40 : SLICE], start=SLICE - 40):
        FullText.objects.create(
            paper=papers[record.arxiv_id], status=FullText.Status.OK,
            text="\n\n".join(r.abstract for r in records[i - 5 : i]),
        )  # fmt: skip
        lexical.index_papers([papers[record.arxiv_id].pk], BODIES)
    lexical.add_champions(BODIES)
    assert BodyStats.objects.get().documents == SLICE
    for query in QUERIES:
        with connection.cursor() as cursor:
            fast = lexical_search(BODIES.cursor(cursor), query, SearchFilters(), 10)
            full = lexical_search(BODIES.cursor(cursor), query, SearchFilters(), 10, cap=10**9)
        assert [h.paper_id for h in fast.hits] == [h.paper_id for h in full.hits], query
        assert [round(h.score, 4) for h in fast.hits] == [round(h.score, 4) for h in full.hits]


@pytest.mark.django_db(transaction=True)
def test_the_word_list_benchmark_ranks_each_questions_paper_in_each_list(catalogue):
    from bench import word_lists

    _read_quantum_paper()
    lexical.index_missing()
    cases = [
        {"question": "How was the sourdough starter fed?", "arxiv_id": "9901.00007"},
        {"question": "consistency distillation sampling steps", "arxiv_id": "2510.00003"},
    ]
    found = word_lists.ranks(cases)
    # Only the body holds the sourdough; only the abstract the distillation (it was never read).
    assert found == {"abstracts": [None, 1], "chunks": [1, None], "bodies": [1, None]}
    lines = word_lists.summary(found)
    assert lines[3].split()[:2] == ["bodies", "0.500"]


def test_a_word_unit_the_search_does_not_know_is_a_clear_error(settings):
    from chat.retrieval.chunks import word_unit

    settings.FULLTEXT_WORD_UNIT = " Chunk "
    assert word_unit() == "chunk"
    settings.FULLTEXT_WORD_UNIT = "sentence"
    with pytest.raises(ValueError, match="FULLTEXT_WORD_UNIT must be one of body, chunk"):
        word_unit()

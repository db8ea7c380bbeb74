"""The champion lists of the chunks' common words (papers.indexing.chunkwords) and the chunk word
search's walk of them (chat.retrieval.chunks.champion_candidates): a word too common to read
whole is read from its best chunks by BM25 weight, not from the chunks stored first; the lists
follow the papers as they are read again; a window is applied inside the walk; a common word
without a list yet falls back to the levels."""

from datetime import UTC, datetime

import pytest
from django.db import connection

from chat.retrieval import chunks
from chat.retrieval.chunks import chunk_word_search
from chat.retrieval.filters import SearchFilters
from chat.retrieval.fulltext import query_terms
from papers.embeddings import get_embedder
from papers.indexing import chunkwords
from papers.models import BodyLexicon, BodyStats, ChunkChampion, ChunkWord, Paper, Passage
from tests.chat.fulltext_helpers import add_fulltext

pytestmark = pytest.mark.django_db(transaction=True)

FILLER = "The apparatus was calibrated twice and the samples were stored at room temperature."


@pytest.fixture
def small_lists(monkeypatch):
    """Lists for words in 2+ chunks, the best third of each (at least one chunk)."""
    monkeypatch.setattr(chunkwords, "CHUNK_CHAMPION_MIN_DF", 2)
    monkeypatch.setattr(chunkwords, "CHUNK_CHAMPION_SHARE", 0.34)
    monkeypatch.setattr(chunkwords, "CHUNK_CHAMPION_MIN_LIST", 1)


def _papers(*arxiv_ids) -> list[Paper]:
    return [Paper.objects.get(arxiv_id=a) for a in arxiv_ids]


def _weights(word: str) -> dict[int, float]:
    """Every chunk holding `word`: its BM25 document weight, computed here from its tsvector."""
    with connection.cursor() as cursor:
        average = chunkwords.average_length(cursor)
        cursor.execute(
            "SELECT ps.id, array_length(u.positions, 1), length(ps.lexemes)"
            " FROM papers_passage ps CROSS JOIN LATERAL unnest(ps.lexemes) u"
            " WHERE ps.kind = 'fulltext' AND u.lexeme = %s",
            [word],
        )
        return {
            pid: tf * (chunkwords.K1 + 1)
            / (tf + chunkwords.K1 * (1 - chunkwords.B + chunkwords.B * length / average))
            for pid, tf, length in cursor.fetchall()
        }


def _search(text: str, **filters) -> list[int]:
    with connection.cursor() as cursor:
        # The levels order the words by ANALYZE's statistics: the test's own chunks', never those
        # an earlier test on this worker left (statistics outlive the tables' rows).
        cursor.execute("ANALYZE papers_passage")
        lexemes, _ = query_terms(cursor, text)
        hits = chunk_word_search(cursor, lexemes, get_embedder().name, SearchFilters(**filters), 10)
    return [h.paper_id for h in hits]


def test_a_common_word_keeps_every_chunk_at_or_above_its_floor(catalogue, small_lists):
    a, b, c = _papers("9901.00007", "2511.00006", "1706.00004")
    add_fulltext(a, [["Rye bread, rye flour and rye whisky."], [FILLER]])
    add_fulltext(b, [["Rye bread. " + FILLER], [FILLER + " Rye."]])
    add_fulltext(c, [[FILLER + " " + FILLER + " The rye harvest."]])

    info = chunkwords.rebuild()

    assert info["chunks"] == 5
    rye = ChunkWord.objects.get(lexeme="rye")
    assert rye.df == 4
    weights = _weights("rye")
    kept = dict(ChunkChampion.objects.filter(word_id=rye.id).values_list("passage_id", "weight"))
    assert set(kept) == {pid for pid, w in weights.items() if w >= rye.floor - 1e-9}
    assert max(weights, key=weights.get) in kept  # the chunk saying it three times
    assert all(kept[pid] == pytest.approx(weights[pid]) for pid in kept)
    assert not ChunkWord.objects.filter(lexeme="whiski").exists()  # in one chunk: read whole


def test_a_paper_read_again_replaces_its_postings(catalogue, small_lists):
    a, b = _papers("9901.00007", "2511.00006")
    add_fulltext(a, [["Rye bread, rye flour and rye whisky."], [FILLER]])
    add_fulltext(b, [["Rye bread. " + FILLER], [FILLER + " Rye."]])
    chunkwords.rebuild()
    rye = ChunkWord.objects.get(lexeme="rye")
    assert ChunkChampion.objects.filter(word_id=rye.id, paper=a).exists()

    add_fulltext(a, [[FILLER], ["Rye, rye, rye."]])  # re-read: new chunks, new ids

    now = set(Passage.objects.chunks().filter(paper=a).values_list("id", flat=True))
    postings = set(ChunkChampion.objects.filter(paper=a).values_list("passage_id", flat=True))
    assert postings and postings <= now  # the old chunks' postings went with them
    assert ChunkChampion.objects.filter(word_id=rye.id, paper=a).exists()
    a.delete()
    assert not ChunkChampion.objects.filter(paper_id=a.pk).exists()


def test_past_the_cap_a_common_word_is_read_from_its_best_chunks(
    catalogue, small_lists, monkeypatch
):
    weak, strong, other = _papers("9901.00007", "2511.00006", "1706.00004")
    # Stored first: chunks that mention rye once among many words.
    add_fulltext(weak, [[FILLER + " " + FILLER + " Rye."], [FILLER + " A rye field."]])
    add_fulltext(other, [[FILLER + " Some rye."]])
    add_fulltext(strong, [["Rye, rye and rye: the rye harvest."]])  # stored last
    chunkwords.rebuild()
    monkeypatch.setattr(chunks, "WORD_CANDIDATE_CAP", 1)  # 'rye' (4 chunks) cannot be read whole
    monkeypatch.setattr(chunks, "CHAMPION_WALK_DEPTH", 1)
    monkeypatch.setattr(chunks, "CHAMPION_LEVEL_CAP", 0)

    assert _search("rye") == [strong.pk]  # its best chunk, whatever the table's order
    # Beside the walk, the levels' first chunks (all the query's words first) are read too.
    monkeypatch.setattr(chunks, "CHAMPION_LEVEL_CAP", 1)
    assert _search("rye") == [strong.pk, weak.pk]
    with connection.cursor() as cursor:
        lexemes, _ = query_terms(cursor, "rye")
        cursor.execute("ANALYZE papers_passage")
        levels = chunk_word_search(cursor, lexemes, get_embedder().name, SearchFilters(), 10,
                                   champions=False)  # fmt: skip
    assert [h.paper_id for h in levels] == [weak.pk]  # the level's first chunk stored


def test_the_walk_keeps_to_the_window(catalogue, small_lists, monkeypatch):
    old, new = _papers("9901.00007", "2511.00006")
    assert old.published.year < 2020 <= new.published.year
    add_fulltext(old, [["Rye, rye and rye: the rye harvest."], ["Rye bread."]])
    add_fulltext(new, [[FILLER + " Rye."], [FILLER + " " + FILLER + " Some rye."]])
    chunkwords.rebuild()
    monkeypatch.setattr(chunks, "WORD_CANDIDATE_CAP", 1)
    monkeypatch.setattr(chunks, "CHAMPION_WALK_DEPTH", 1)
    monkeypatch.setattr(chunks, "CHAMPION_LEVEL_CAP", 1)

    assert _search("rye") == [old.pk]
    # Below the floor in the window: its list ends there, and the levels read the window's
    # chunks with the word, as before the lists.
    assert _search("rye", start=datetime(2020, 1, 1, tzinfo=UTC)) == [new.pk]


def test_a_common_word_without_a_list_is_read_level_by_level(catalogue, small_lists, monkeypatch):
    weak, strong = _papers("9901.00007", "2511.00006")
    add_fulltext(weak, [[FILLER + " Rye."], [FILLER + " A rye field."]])
    add_fulltext(strong, [["Rye, rye and rye: the rye harvest."]])
    monkeypatch.setattr(chunks, "WORD_CANDIDATE_CAP", 1)
    # No lists built: the levels, as before them (the first chunk stored with the word).
    assert _search("rye") == [weak.pk]
    chunkwords.rebuild()
    assert _search("rye")[0] == strong.pk
    ChunkWord.objects.filter(lexeme="rye").delete()  # a word grown common since the rebuild
    assert _search("rye") == [weak.pk]


def test_the_command_rebuilds_the_lists(catalogue, small_lists):
    from io import StringIO

    from django.core.management import call_command

    a, b = _papers("9901.00007", "2511.00006")
    add_fulltext(a, [["Rye bread, rye flour and rye whisky."], [FILLER]])
    add_fulltext(b, [["Rye bread. " + FILLER], [FILLER + " Rye."]])
    out = StringIO()
    BodyLexicon.objects.all().delete()  # (as a bulk load leaves it: bodies not indexed)
    call_command("index_chunk_words", stdout=out)
    assert ChunkWord.objects.filter(lexeme="rye").exists()
    assert "over 4 chunks" in out.getvalue()
    # The bodies' BM25 index too: both read papers, the rye one found by its body.
    assert "bodies' BM25 index: 2 papers" in out.getvalue()
    assert BodyLexicon.objects.count() == 2 and BodyStats.objects.get().documents == 2


def test_a_bulk_rebuild_builds_the_walk_index_after_the_postings(catalogue, small_lists):
    a, b = _papers("9901.00007", "2511.00006")
    add_fulltext(a, [["Rye bread, rye flour and rye whisky."], [FILLER]])
    add_fulltext(b, [["Rye bread. " + FILLER], [FILLER + " Rye."]])
    info = chunkwords.rebuild(bulk=True)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'papers_chunk_champion_walk_idx'"
        )
        (definition,) = cursor.fetchone()
    assert "(word_id, weight DESC) INCLUDE (passage_id, published)" in definition
    assert info["postings"] == ChunkChampion.objects.count() > 0

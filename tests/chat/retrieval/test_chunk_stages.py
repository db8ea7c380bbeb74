"""What the chunk stages of a search read and wait for: the best-chunk stage
(chat.retrieval.chunks.best_chunks) reads each paper's text once, not once a chunk (PostgreSQL's
own counters of the TOAST blocks read tell); the chunk word search runs beside BM25, not after it
(BM25 held up by a lock while the chunk word search completes), and unnests only the query's
words of each candidate chunk (EXPLAIN ANALYZE of its candidate query tells); from many chunks
on, its words' frequencies come from ANALYZE's statistics, without counting chunks."""

import asyncio
import random
import time

import pytest
from asgiref.sync import sync_to_async
from django.db import connection, connections

from chat.retrieval.chunks import best_chunks, chunk_word_search
from chat.retrieval.filters import SearchFilters
from chat.retrieval.fulltext import query_terms
from chat.retrieval.search import search
from papers.embeddings import get_embedder
from papers.indexing.lexical import index_missing
from papers.models import Paper
from tests.chat.conftest import NOW
from tests.chat.fulltext_helpers import add_fulltext

pytestmark = pytest.mark.django_db(transaction=True)

PAGES = 40


def _long_paper() -> tuple[Paper, list[str]]:
    """A 40-page paper whose text (~60 kB of words in no order, ~30 kB compressed) is stored out
    of line, as a real paper's is; one chunk a page."""
    words = [f"w{i:04d}" for i in range(3000)] + ["optimizer", "warmup", "schedule"]
    draw = random.Random(12)
    pages = [[" ".join(draw.choice(words) for _ in range(250)) + "."] for _ in range(PAGES)]
    pages[30] = [pages[30][0] + " The optimizer uses a linear warmup schedule."]
    paper = Paper.objects.get(arxiv_id="2510.00003")
    add_fulltext(paper, pages)
    return paper, [p[0] for p in pages]


def _toast_blocks(cursor) -> int:
    """Blocks of papers_fulltext's TOAST table read so far (from disk or shared buffers), this
    backend's counts flushed first."""
    cursor.execute("SELECT pg_stat_force_next_flush()")  # flushed as the statement ends
    cursor.execute("SELECT pg_stat_clear_snapshot()")
    cursor.execute(
        "SELECT coalesce(toast_blks_read, 0) + coalesce(toast_blks_hit, 0)"
        " FROM pg_statio_all_tables WHERE relname = 'papers_fulltext'"
    )
    return cursor.fetchone()[0]


def test_best_chunks_read_each_papers_text_once_not_once_a_chunk(catalogue):
    paper, pages = _long_paper()
    embedder = get_embedder()
    question = "Which optimizer warmup schedule?"
    with connection.cursor() as cursor:
        lexemes, _ = query_terms(cursor, question)
        vector = embedder.embed_query(question)

        before = _toast_blocks(cursor)
        cursor.execute("SELECT length(text || '') FROM papers_fulltext WHERE paper_id = %s",
                       [paper.pk])  # fmt: skip
        whole = _toast_blocks(cursor) - before  # reading the text once
        before = _toast_blocks(cursor)
        found = best_chunks(cursor, [paper.pk], vector, embedder.name, lexemes)
        read = _toast_blocks(cursor) - before

    assert whole >= 3  # stored out of line, over several blocks
    # A substr a chunk read the text from its start to the chunk's end: 154 blocks here.
    assert read <= 2 * whole
    best = found.by_paper[paper.pk]
    assert best[0].text == pages[30] and best[0].page == 31
    assert all(chunk.text == pages[chunk.page - 1] for chunk in best)


SOURDOUGH = (
    "As an aside, the sourdough starter was kept at 75 percent hydration and fed with rye flour "
    "every twelve hours during the cryostat runs."
)
# The chunk word search's candidate query (chat.retrieval.chunks._WORD_CHUNKS).
WORD_SEARCH = "%ps.lexemes @@ to_tsquery('simple'%"
# BM25 ranking over the papers' document weights (chat.retrieval.fulltext._RANK).
BM25 = "%l.weights <#>%"


def _activity(cursor, pattern: str, since) -> list[tuple[str, str]]:
    """(state, wait event type) of the other sessions whose latest query matches, started since."""
    cursor.execute(
        "SELECT state, coalesce(wait_event_type, '') FROM pg_stat_activity"
        " WHERE query LIKE %s AND query_start >= %s AND pid <> pg_backend_pid()"
        " AND query NOT LIKE '%%pg_stat_activity%%'",
        [pattern, since],
    )
    return cursor.fetchall()


@pytest.mark.asyncio
async def test_the_chunk_word_search_completes_while_bm25_is_still_waiting(catalogue, settings):
    settings.SEARCH_DB_THREADS = 4  # BM25, dense, the chunk search, the chunk word search
    # The full text's word list is one stage whatever it scores; its chunk queries are the ones
    # pg_stat_activity tells apart (the bodies' BM25 ends on its transaction's COMMIT).
    settings.FULLTEXT_WORD_UNIT = "chunk"
    quantum = await Paper.objects.aget(arxiv_id="9901.00007")
    await sync_to_async(add_fulltext)(quantum, [["Two-qubit Werner states."], [SOURDOUGH]])
    await sync_to_async(index_missing)()  # the catalogue's BM25 index
    # Sessions of their own, used from worker threads: the lock holder and the watcher.
    holder, watcher = (connections.create_connection("default") for _ in range(2))
    holder.inc_thread_sharing()
    watcher.inc_thread_sharing()

    def hold_bm25():  # another session locks BM25's table until it rolls back
        holder.set_autocommit(False)
        with holder.cursor() as cursor:
            cursor.execute("SELECT now()")
            since = cursor.fetchone()[0]
            cursor.execute("LOCK TABLE papers_paperlexicon IN ACCESS EXCLUSIVE MODE")
        return since

    def seen(since) -> tuple[list, list]:
        with watcher.cursor() as cursor:
            return _activity(cursor, WORD_SEARCH, since), _activity(cursor, BM25, since)

    since = await sync_to_async(hold_bm25, thread_sensitive=False)()
    # 'distillation' is in an abstract (BM25 ranks papers), 'sourdough' in the body only.
    query = "sourdough starter and distillation"
    # (Hidden and withdrawn papers included: the chunk word search then ends on its candidate
    # query, which pg_stat_activity shows, not on the probe of the ranked papers' visibility.)
    searching = asyncio.ensure_future(
        search(query, k=5, now=NOW, include_hidden=True, include_withdrawn=True)
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not searching.done():
            words, bm25 = await sync_to_async(seen, thread_sensitive=False)(since)
            done = any(state == "idle" for state, _ in words)
            if done and ("active", "Lock") in bm25:
                break
            await asyncio.sleep(0.05)
        # The chunk word search ran to its end while BM25 waited for the lock.
        assert ("active", "Lock") in bm25 and done
    finally:
        await sync_to_async(holder.rollback, thread_sensitive=False)()
        await sync_to_async(holder.close, thread_sensitive=False)()
        await sync_to_async(watcher.close, thread_sensitive=False)()
    response = await searching
    found = {h.arxiv_id: h for h in response.hits}
    assert found["9901.00007"].passage_text == SOURDOUGH and response.timings["chunk_words"]
    assert "2510.00003" in found and response.plan["lexical"]["generator"] != "none"


def _nodes(plan: dict):
    yield plan
    for child in plan.get("Plans", ()):
        yield from _nodes(child)


def test_the_chunk_word_search_unnests_only_the_query_words_of_each_chunk(catalogue):
    from django.test.utils import CaptureQueriesContext

    quantum = Paper.objects.get(arxiv_id="9901.00007")
    add_fulltext(quantum, [["Two-qubit Werner states."], [SOURDOUGH]])
    with CaptureQueriesContext(connection) as queries, connection.cursor() as cursor:
        lexemes, _ = query_terms(cursor, "sourdough starter hydration")
        hits = chunk_word_search(cursor, lexemes, get_embedder().name, SearchFilters(), 10)
    assert [h.paper_id for h in hits] == [quantum.pk]
    candidates = next(
        q["sql"] for q in queries.captured_queries if "CROSS JOIN LATERAL" in q["sql"]
    )
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + candidates)
        plan = cursor.fetchone()[0][0]["Plan"]
    unnests = [n for n in _nodes(plan) if n.get("Function Name") == "unnest"]
    assert unnests and sum(n["Actual Rows"] * n["Actual Loops"] for n in unnests) == 3
    # The chunk's other words ('kept', 'percent', 'rye', …: 13 more) are never unnested.
    assert not any(n.get("Rows Removed by Filter") for n in unnests)


def test_the_chunk_word_search_leaves_out_hidden_withdrawn_and_other_categories(catalogue):
    quantum = Paper.objects.get(arxiv_id="9901.00007")  # quant-ph
    hidden = Paper.objects.get(arxiv_id="2511.00006")  # cs.LG
    withdrawn = Paper.objects.get(arxiv_id="1706.00004")  # cs.CL
    for paper in (quantum, hidden, withdrawn):
        add_fulltext(paper, [["Two-qubit Werner states."], [SOURDOUGH]])
    Paper.objects.filter(pk=hidden.pk).update(hidden=True)
    Paper.objects.filter(pk=withdrawn.pk).update(withdrawn=True)
    model = get_embedder().name

    def found(**filters) -> set[int]:
        with connection.cursor() as cursor:
            lexemes, _ = query_terms(cursor, "sourdough starter hydration")
            return {h.paper_id for h in
                    chunk_word_search(cursor, lexemes, model, SearchFilters(**filters), 10)}  # fmt: skip

    assert found() == {quantum.pk}
    assert found(include_hidden=True, include_withdrawn=True) == {
        quantum.pk, hidden.pk, withdrawn.pk
    }
    assert found(include_withdrawn=True, categories=("cs",)) == {withdrawn.pk}
    assert found(include_hidden=True, categories=("cs.LG",)) == {hidden.pk}
    assert found(categories=("cs",)) == set()
    assert found(exclude_ids=(quantum.pk,), include_hidden=True) == {hidden.pk}
    # One asked for: the best visible one, with hidden ones ranked above it.
    with connection.cursor() as cursor:
        lexemes, _ = query_terms(cursor, "sourdough starter hydration")
        assert [h.paper_id for h in chunk_word_search(cursor, lexemes, model, SearchFilters(), 1)
                ] == [quantum.pk]  # fmt: skip


def test_candidate_levels_read_rare_words_whole_else_the_chunks_with_most_query_words_first():
    from chat.retrieval.chunks import candidate_levels

    # The rarest words fit the cap: OR-ed, read whole; a word that would pass it is left out.
    assert candidate_levels({"rye": 3, "sourdough": 2, "bread": 90}, 10) == ["sourdough | rye"]
    # Even the rarest is in more chunks than the cap: all the words, then without the commonest...
    assert candidate_levels({"rye": 3, "sourdough": 2, "bread": 90}, 1) == [
        "sourdough & rye & bread",
        "sourdough & rye & !bread",
        "sourdough & !rye",
    ]


def test_past_the_cap_the_chunk_with_more_of_the_query_words_is_read_first(catalogue, monkeypatch):
    from chat.retrieval import chunks

    papers = [Paper.objects.get(arxiv_id=a) for a in ("9901.00007", "2511.00006", "1706.00004")]
    only_rare, both, only_common = papers
    add_fulltext(only_rare, [["The sourdough starter was fed daily."]])  # stored first
    add_fulltext(both, [["The sourdough starter was fed with rye flour."]])
    add_fulltext(only_common, [["Rye bread."], ["Rye whisky."]])
    model = get_embedder().name

    def found() -> list[int]:
        with connection.cursor() as cursor:
            lexemes, _ = query_terms(cursor, "sourdough rye")
            return [h.paper_id for h in chunk_word_search(cursor, lexemes, model, SearchFilters(), 10)]

    assert set(found()) == {p.pk for p in papers}  # 'sourdough' (2) and 'rye' (3) fit the cap
    # One chunk read: not the first stored with the rarest word, the one with both words.
    monkeypatch.setattr(chunks, "WORD_CANDIDATE_CAP", 1)
    assert found() == [both.pk]


def _heap_blocks(cursor) -> int:
    """Blocks of papers_passage (the table, not its indexes) read so far, flushed first."""
    cursor.execute("SELECT pg_stat_force_next_flush()")
    cursor.execute("SELECT pg_stat_clear_snapshot()")
    cursor.execute(
        "SELECT coalesce(heap_blks_read, 0) + coalesce(heap_blks_hit, 0)"
        " FROM pg_statio_all_tables WHERE relname = 'papers_passage'"
    )
    return cursor.fetchone()[0]


@pytest.mark.usefixtures("tidy_passage_statistics")  # it ANALYZEs
def test_many_chunks_take_their_common_words_frequencies_from_the_statistics(
    catalogue, monkeypatch
):
    from chat.retrieval import chunks

    quantum = Paper.objects.get(arxiv_id="9901.00007")
    add_fulltext(quantum, [["Two-qubit Werner states."], [SOURDOUGH], [SOURDOUGH]])
    words = ["hydrat", "sourdough", "werner"]
    with connection.cursor() as cursor:
        counted = chunks.word_frequencies(cursor, words, get_embedder().name)
        cursor.execute("ANALYZE papers_passage")  # the words' frequencies, and the index's size
        monkeypatch.setattr(chunks, "CHUNKS_ESTIMATED_FROM", 1)  # as from 100k chunks on
        before = _heap_blocks(cursor)
        estimated = chunks.word_frequencies(cursor, words, get_embedder().name)
        read = _heap_blocks(cursor) - before

    assert counted == (3, {"hydrat": 2, "sourdough": 2, "werner": 1})
    assert estimated == counted
    assert read == 0  # no chunk counted: each word's frequency came from the statistics

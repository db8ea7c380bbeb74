"""Doc-then-chunk retrieval (chat.retrieval.chunks) against the real database: the papers, then
the chunks of their full text, a direct chunk search for papers whose body alone matches, every
filter inside the SQL, and abstracts for papers never read."""

from datetime import UTC, datetime

import pytest
from asgiref.sync import sync_to_async
from django.db import connection, transaction

from chat.llm.extractive import ExtractiveBackend
from chat.pipeline.answer import answer_events
from chat.retrieval import dense
from chat.retrieval.filters import SearchFilters
from chat.retrieval.search import SearchError, search
from papers.embeddings import get_embedder
from papers.models import Paper
from tests.chat.conftest import NOW
from tests.chat.fulltext_helpers import add_fulltext

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

TRAINING = (
    "We train the student with a learning rate of 3e-4 and a batch size of 512 on eight A100 "
    "GPUs for 200k iterations. The teacher is frozen throughout distillation."
)
SOURDOUGH = (
    "As an aside, the sourdough starter was kept at 75 percent hydration and fed with rye flour "
    "every twelve hours during the cryostat runs."
)


def _read_two_papers():
    consistency = Paper.objects.get(arxiv_id="2510.00003")
    add_fulltext(consistency, [
        ["1 Introduction. Diffusion models sample slowly; distillation makes them fast."],
        ["2 Method. The consistency function maps any noisy point to the trajectory's origin."],
        [TRAINING, "Table 2 reports FID on ImageNet 64x64 for one, two and four steps."],
    ], section="4 Experiments")
    quantum = Paper.objects.get(arxiv_id="9901.00007")
    add_fulltext(quantum, [
        ["We compute the concurrence of two-qubit Werner states."],
        [SOURDOUGH],
    ])


@pytest.fixture
async def read_papers(catalogue):
    await sync_to_async(_read_two_papers)()


async def test_the_best_chunk_of_a_found_paper_becomes_its_passage_with_its_page(
    read_papers, settings
):
    response = await search("learning rate and batch size of consistency distillation", k=5, now=NOW)
    hit = next(h for h in response.hits if h.arxiv_id == "2510.00003")
    assert hit.kind == "fulltext"
    assert hit.passage_text == TRAINING
    assert (hit.page, hit.page_end, hit.section) == (3, 3, "4 Experiments")
    # A paper never read keeps its abstract.
    other = next(h for h in response.hits if h.arxiv_id != "2510.00003")
    assert other.kind == "abstract" and other.page is None


async def test_a_page_carries_each_papers_best_chunk_and_the_chat_its_next_ones_too(read_papers):
    question = "learning rate and batch size of consistency distillation"
    page = await search(question, k=5, now=NOW)
    cards = await search(question, k=5, now=NOW, chunks_per_paper=4)
    assert [h.paper_id for h in page.hits] == [h.paper_id for h in cards.hits]
    first, more = (next(h for h in r.hits if h.arxiv_id == "2510.00003") for r in (page, cards))
    # The same best chunk either way; only the chat's search ranks the paper's others.
    assert (first.passage_text, first.page) == (more.passage_text, more.page) == (TRAINING, 3)
    assert first.more_chunks == []
    assert 1 <= len(more.more_chunks) <= 3
    assert TRAINING not in {c.text for c in more.more_chunks}


@pytest.mark.parametrize("chunks", [0, 9, True, "2"])
async def test_a_page_cannot_ask_for_no_chunk_or_more_than_a_paper_keeps(catalogue, chunks):
    with pytest.raises(SearchError, match="chunks_per_paper must be a whole number from 1 to 8"):
        await search("consistency distillation", now=NOW, chunks_per_paper=chunks)


@pytest.mark.parametrize("variant", ["fused", "direct"])
async def test_a_paper_whose_body_alone_matches_is_found_by_the_direct_chunk_search(
    read_papers, settings, variant
):
    settings.FULLTEXT_RETRIEVAL = variant
    response = await search("sourdough starter hydration rye flour", k=3, now=NOW)
    top = response.hits[0]
    assert top.arxiv_id == "9901.00007", [h.arxiv_id for h in response.hits]
    assert top.passage_text == SOURDOUGH and top.page == 2
    assert "full-text match #1 (p. 2)" in top.why


@pytest.mark.parametrize("variant", ["papers_first", "off"])
async def test_without_the_direct_search_only_abstracts_rank_the_papers(
    read_papers, settings, variant
):
    settings.FULLTEXT_RETRIEVAL = variant
    response = await search("sourdough starter hydration rye flour", k=8, now=NOW)
    assert "chunks" not in response.plan
    assert not any("full-text" in reason for h in response.hits for reason in h.why)
    kinds = {h.arxiv_id: h.kind for h in response.hits}
    if variant == "off":
        assert set(kinds.values()) == {"abstract"}
    else:  # the papers found still quote their best chunk
        assert kinds["9901.00007"] == "fulltext"


async def test_the_date_window_and_the_scope_stay_inside_the_chunk_search(read_papers):
    # 9901.00007 is from 1999: outside "since 2020", whatever its body says.
    response = await search("sourdough starter hydration since 2020", k=5, now=NOW)
    assert "9901.00007" not in [h.arxiv_id for h in response.hits]
    consistency = await Paper.objects.aget(arxiv_id="2510.00003")
    scoped = await search("sourdough starter hydration", k=5, now=NOW, paper_ids=(consistency.pk,))
    assert [h.arxiv_id for h in scoped.hits] in ([], ["2510.00003"])


async def test_an_answer_cites_the_chunk_with_page_quote_and_pdf_link(read_papers):
    events = [
        e async for e in answer_events(
            "What learning rate and batch size does consistency distillation train with?",
            now=NOW, backend=ExtractiveBackend(chunk_delay=0),
        )
    ]
    cards = next(e for e in events if e["type"] == "sources")["sources"]
    done = events[-1]
    card = next(c for c in cards if c["arxiv_id"] == "2510.00003" and c["kind"] == "fulltext")
    assert card["passage"] == TRAINING
    assert (card["page"], card["page_end"], card["pages"]) == (3, 3, "p. 3")
    assert card["quote"].startswith("We train the student with a learning rate of 3e-4")
    assert card["pdf_url"] == "https://arxiv.org/pdf/2510.00003v1#page=3"
    assert done["type"] == "done" and card["number"] in done["citations"]
    # The composer quotes the chunk's answering sentence, cited with the card's number.
    assert "learning rate of 3e-4 and a batch size of 512" in done["content"]


async def test_a_thread_about_one_paper_gets_its_best_chunks_as_several_cards(read_papers):
    consistency = await Paper.objects.aget(arxiv_id="2510.00003")
    events = [
        e async for e in answer_events(
            "How is the consistency function trained?", now=NOW,
            backend=ExtractiveBackend(chunk_delay=0), scope_ids=(consistency.pk,),
        )
    ]
    cards = next(e for e in events if e["type"] == "sources")["sources"]
    assert {c["arxiv_id"] for c in cards} == {"2510.00003"}
    assert len(cards) >= 3 and len({c["passage"] for c in cards}) == len(cards)
    assert all(c["kind"] == "fulltext" and c["page"] for c in cards)


async def test_until_a_full_text_is_read_the_chunk_search_is_skipped(catalogue):
    response = await search("consistency distillation", k=5, now=NOW)
    assert response.plan["chunks"] == "none"
    assert response.hits

    await sync_to_async(_read_two_papers)()
    response = await search("sourdough starter hydration", k=5, now=NOW)
    assert response.plan["chunks"] != "none"
    assert "9901.00007" in [h.arxiv_id for h in response.hits]


async def test_the_direct_chunk_search_adds_its_own_few_papers_but_always_a_page(
    read_papers, settings
):
    settings.FULLTEXT_RETRIEVAL = "direct"  # the chunk list alone ranks the papers it has
    settings.FULLTEXT_CHUNK_CANDIDATES = 1

    one = await search("sourdough starter hydration rye flour", k=1, now=NOW)
    page = await search("sourdough starter hydration rye flour", k=5, now=NOW)

    def matched(response):
        return [h.arxiv_id for h in response.hits if any("full-text" in w for w in h.why)]

    assert matched(one) == ["9901.00007"]
    # Asked for a page of 5, the chunk search finds both read papers, not just one.
    assert sorted(matched(page)) == ["2510.00003", "9901.00007"]


DISTILLATION = [
    "Consistency distillation trains a one-step student from a pretrained diffusion teacher: "
    "the student maps any noisy point of the teacher's trajectory to its clean origin.",
    "We distil the consistency model from the EDM teacher and compare one-step and two-step "
    "sampling of the distilled student against the teacher's fifty steps.",
    "Regularisation. The auxiliary classifier uses label smoothing of 0.1 and dropout of 0.3; "
    "without them its accuracy drops by two points.",
]


def _read_distillation():
    add_fulltext(Paper.objects.get(arxiv_id="2510.00003"), [DISTILLATION[:2], DISTILLATION[2:]])


@pytest.mark.parametrize("ranking", ["rrf", "mix"])
async def test_the_chunk_with_the_questions_rare_words_answers_over_the_topical_one(
    catalogue, settings, ranking
):
    # The cosine prefers the chunks about consistency distillation in general; BM25 over the
    # paper's chunks weighs 'label smoothing', in one chunk only, above 'consistency', in all.
    settings.FULLTEXT_CHUNK_RANKING = ranking
    await sync_to_async(_read_distillation)()
    response = await search(
        "What label smoothing value does consistency distillation use?", k=5, now=NOW
    )
    hit = next(h for h in response.hits if h.arxiv_id == "2510.00003")
    assert hit.passage_text == DISTILLATION[2] and hit.page == 2



def _nodes(plan: dict):
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


async def test_the_exact_scan_of_a_windows_abstracts_reads_none_of_its_chunks(read_papers):
    """The exact scan of a window's abstracts walks an index of abstracts alone: the one of every
    passage would fetch each chunk in the window only to drop it for its kind."""

    @sync_to_async
    def plan():
        embedder = get_embedder()
        params = {"q": dense.vector_literal(embedder.embed_query("distillation")),
                  "model": embedder.name, "limit": 10}  # fmt: skip
        window = SearchFilters(start=datetime(1990, 1, 1, tzinfo=UTC), end=NOW)
        where = dense.passage_where(window, params, "abstract")
        sql = dense._EXACT.format(where=where, distance=dense.distance_sql("abstract"))
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off")  # (a test catalogue is small)
            # Fresh statistics: the plan must not hang on whether autovacuum has analysed the
            # fixture's rows yet (under load it had not, and the planner chose another index).
            cursor.execute("ANALYZE papers_passage")
            cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
            return cursor.fetchone()[0][0]["Plan"]

    nodes = list(_nodes(await plan()))
    assert "papers_abstract_pub_idx" in {node.get("Index Name") for node in nodes}
    assert all(node.get("Rows Removed by Filter", 0) == 0 for node in nodes)
    assert all(node.get("Rows Removed by Index Recheck", 0) == 0 for node in nodes)

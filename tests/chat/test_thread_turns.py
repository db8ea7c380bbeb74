"""Turns of one thread, asked through chat.service as the socket asks them, so each follow-up is
read against the thread's saved answers: a new listing does not borrow the last question's topic,
an ellipsis after several follow-ups on a list's papers borrows the list's topic, and "who are the
authors?" names the authors of the paper just shown."""

import asyncio

import pytest
from asgiref.sync import sync_to_async

from chat import service, turns
from chat.models import Message, Thread
from chat.pipeline.rewrite import HISTORY_TURNS, Turn
from chat.understanding.reference import SOURCES, resolve

# The fixtures of tests/papers/fulltext: a local arXiv PDF server over the shared PDFs.
from tests.papers.fulltext.conftest import pdf_server, shared_papers  # noqa: F401

TRANSFORMER, VIT = "1706.03762", "2010.11929"
ADAM, RESNET, BATCHNORM = "1412.6980", "1512.03385", "1502.03167"

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@pytest.fixture
def thread(owner, settings):
    settings.LLM_BACKEND = "extractive"
    settings.CHAT_RATE_LIMIT_PER_MINUTE = 0
    return Thread.objects.create(owner=owner)


async def ask(owner, thread, question: str) -> Message:
    running = await service.ask(owner, thread.pk, question)
    await asyncio.wait_for(running.done.wait(), 60)
    return await Message.objects.aget(pk=running.message_id)


def cited(answer: Message) -> set[str]:
    return {c["arxiv_id"] for c in answer.sources if c["number"] in answer.citations}


async def test_a_new_listing_after_a_specific_question_keeps_no_topic(catalogue, owner, thread):
    await ask(owner, thread, "How does the transformer reach state of the art BLEU?")
    answer = await ask(owner, thread, "papers since 2025")

    assert answer.query == "papers since 2025"
    # The catalogue's papers of 2025 on, whatever their topic.
    assert cited(answer) == {"2510.00003", "2511.00006"}


async def test_an_ellipsis_after_follow_ups_on_a_list_borrows_the_lists_topic(
    catalogue, owner, thread
):
    await ask(owner, thread, "papers on diffusion models")
    await ask(owner, thread, "which of these are about video?")
    await ask(owner, thread, "what datasets do they use?")
    await ask(owner, thread, "summarize the first one")
    answer = await ask(owner, thread, "what about before 2024?")

    assert "diffusion models" in answer.query, answer.query
    assert cited(answer) == {"2301.00001"}  # the one diffusion paper of 2023


async def test_who_are_the_authors_names_the_shown_papers_authors(catalogue, owner, thread):
    await ask(owner, thread, "summarize Attention is all you need for translation")
    answer = await ask(owner, thread, "Who are the authors?")

    assert answer.content.startswith("**Attention is all you need for translation**")
    assert "is by Noam Vaswani [" in answer.content
    assert cited(answer) == {"1706.00004"}



def _card(number: int, paper_id: int) -> dict:
    return {"number": number, "paper_id": paper_id, "arxiv_id": f"2401.0000{paper_id}",
            "title": f"Paper {paper_id}", "passage": "Text.", "url": ""}  # fmt: skip


def _list_then_a_question_about_all_of_it(thread) -> None:
    Message.objects.create(thread=thread, role="user", content="papers on RAG")
    Message.objects.create(
        thread=thread, role="assistant", status="complete", query="papers on RAG",
        content="4 papers: [1] [2] [3] [4]", sources=[_card(n, n) for n in range(1, 5)],
        analysis={"query": "RAG"},
    )  # fmt: skip
    Message.objects.create(thread=thread, role="user", content="How do they retrieve documents?")
    Message.objects.create(
        thread=thread, role="assistant", status="complete", content="They use MIPS [1]. [3].",
        query="How do they retrieve documents?", sources=[_card(1, 2), _card(2, 4), _card(3, 1)],
        analysis={"followup_of": [1, 2, 3, 4], "previous": {
            "shown": 4, "referred": 4, "filtered": False, "windowed": False}},
    )  # fmt: skip


async def test_these_after_a_question_about_a_whole_list_are_the_list(owner, thread):
    # "Which of these use a dense retriever?" after "How do they retrieve documents?" (asked of
    # a list of four RAG papers, answered quoting two) picked among the two quoted.
    await sync_to_async(_list_then_a_question_about_all_of_it)(thread)
    turn = await sync_to_async(turns.create_turn)(
        owner.pk, thread.pk, "Which of these use a dense retriever?"
    )
    reference = resolve(turn.question, turn.history[-HISTORY_TURNS:])

    assert (reference.kind, reference.numbers, reference.back) == (SOURCES, (1, 2, 3, 4), 2)
    # After a follow-up that picked some ("which of these…"), "these" are the ones it kept.
    picked = Turn(question="which of these use BM25?", sources=(_card(1, 3),), on_sources=True)
    reference = resolve("what datasets do they use?", [turn.history[0], picked])
    assert (reference.kind, reference.numbers, reference.back) == (SOURCES, (1,), 1)


async def test_which_is_the_most_cited_says_the_catalogue_has_no_counts(catalogue, owner, thread):
    from chat.llm import templates as T

    listed = await ask(owner, thread, "papers on diffusion models")
    answer = await ask(owner, thread, "which is the most cited?")

    # Of the list's papers (it searched "most cited" and quoted "cited" sentences), with what
    # each reports, and no count made up.
    assert answer.content.splitlines()[0] == T.NO_CITATION_COUNTS
    assert cited(answer) and cited(answer) <= cited(listed)
    assert all(c["kind"] == "abstract" for c in answer.sources)


@pytest.fixture
def pdfs(pdf_server, shared_papers):  # noqa: F811
    """The 28 shared papers indexed (BM25, vectors, the names they introduce); the Transformer
    and ViT, which both say how they encode positions, read over HTTP."""
    from papers.fulltext.read import read_paper
    from papers.indexing.lexical import index_missing
    from papers.indexing.vectors import embed_missing

    index_missing()
    embed_missing()
    for arxiv_id in (TRANSFORMER, VIT):
        assert read_paper(shared_papers[arxiv_id]).status == "ok"
    return shared_papers


async def test_a_question_naming_nothing_stays_on_the_threads_paper(pdfs, owner, thread):
    await ask(owner, thread, "What does the Transformer replace recurrence with?")
    # Named nothing, it opened with ViT's ablation of positional embeddings.
    answer = await ask(owner, thread, "How is positional information encoded?")

    assert answer.query == "How is positional information encoded in the Transformer?"
    assert cited(answer) == {TRANSFORMER}
    assert "information about the relative or absolute position of the tokens" in answer.content
    # A question on another topic is searched as typed: words the Transformer never says, or a
    # listing.
    covariate = "How does batch normalization reduce internal covariate shift?"
    assert (await ask(owner, thread, covariate)).query == covariate
    elsewhere = await ask(owner, thread, "papers on image classification")
    assert elsewhere.query == "papers on image classification"
    assert VIT in cited(elsewhere) and TRANSFORMER not in cited(elsewhere)


async def test_a_spelled_greek_letter_finds_the_chunk_that_prints_it(pdfs, owner, thread):
    await ask(owner, thread, "What optimizer did the Transformer use?")
    # "beta" is the lexeme 'beta'; p. 7 prints "β1 = 0.9, β2 = 0.98" ('β1', 'β2' to PostgreSQL).
    answer = await ask(owner, thread, "What were its beta values?")

    assert cited(answer) == {TRANSFORMER}
    first = next(line for line in answer.content.splitlines() if line.startswith("- "))
    assert "with β1 = 0.9, β2 = 0.98" in first, answer.content


async def test_that_optimizer_is_the_one_the_previous_answer_named(pdfs, owner, thread):
    await ask(owner, thread, "What optimizer did the Transformer use?")
    # "that optimizer" had a topic word after it: a question standing alone, held to the
    # thread's Transformer ("Which paper proposed that optimizer in the Transformer?").
    answer = await ask(owner, thread, "Which paper proposed that optimizer?")

    assert answer.query == "Which paper proposed Adam?"
    assert answer.content.startswith(
        "Adam was introduced by **ADAM: A METHOD FOR STOCHASTIC OPTIMIZATION**"
    ), answer.content
    assert cited(answer) == {ADAM}


async def test_a_general_definition_another_papers_title_gives_leaves_the_thread(
    pdfs, owner, thread
):
    await ask(owner, thread, "What does the Transformer replace recurrence with?")
    # A definite one is the thread's paper's.
    definite = await ask(owner, thread, "What is the encoder?")
    assert definite.query == "What is the encoder in the Transformer?"
    # The Transformer says "residual" and "learning" (its residual dropout, its learning rate);
    # residual learning is what "Deep Residual Learning for Image Recognition" is about.
    answer = await ask(owner, thread, "what is residual learning?")

    assert answer.query == "what is residual learning?"
    assert RESNET in cited(answer) and TRANSFORMER not in cited(answer)


@pytest.fixture
def batchnorm(pdf_server, shared_papers):  # noqa: F811
    """The 28 shared papers indexed; batch normalization's read over HTTP."""
    from papers.fulltext.read import read_paper
    from papers.indexing.lexical import index_missing
    from papers.indexing.vectors import embed_missing

    index_missing()
    embed_missing()
    assert read_paper(shared_papers[BATCHNORM]).status == "ok"
    return shared_papers


async def test_a_how_question_in_the_titles_words_is_answered_from_the_abstract(
    batchnorm, owner, thread
):
    # Its title page's chunk (title, authors, e-mail addresses) holds all the question's words:
    # with the product's embedder a card no sentence of which could be quoted, where the
    # abstract after it answers (chat.retrieval.search.front_matter); with the tests', the
    # abstract's start joined to it, the title page was quoted as its first sentence.
    answer = await ask(owner, thread, "How does batch normalization reduce internal covariate shift?")

    assert "address the problem by normalizing layer inputs [" in answer.content
    # (Nor is the title page, its title broken across lines, quoted as a sentence.)
    assert "sioffe@google.com" not in answer.content

"""Questions answered by a paper's body (issue #12): the chunk word search that finds a paper by
a rare word of its body, the sentence evidence that picks the chunk stating the asked-for number,
and the offline composer that opens with the answering sentence or says the number is not
stated. Against the real database; the last test reads two shared arXiv PDFs over HTTP."""

from datetime import UTC, datetime

import pytest
from asgiref.sync import sync_to_async
from django.db import connection

from chat.llm import templates as T
from chat.llm.extractive import ExtractiveBackend
from chat.pipeline.answer import answer_events
from chat.retrieval.chunks import chunk_word_search
from chat.retrieval.filters import SearchFilters
from chat.retrieval.fulltext import query_terms
from chat.retrieval.search import search
from papers.embeddings import get_embedder
from papers.models import FullText, Paper, Passage
from tests.chat.conftest import NOW
from tests.chat.fulltext_helpers import add_fulltext

# The fixtures of tests/papers/fulltext: a local arXiv PDF server over the shared PDFs.
from tests.papers.fulltext.conftest import pdf_server, shared_papers  # noqa: F401

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.asyncio,
    pytest.mark.usefixtures("tidy_passage_statistics"),  # it ANALYZEs
]

SETUP = (
    "Setup. The student is trained with the consistency objective. The GPUs of the cluster and "
    "the training schedule are described in the appendix. Training the student is cheap."
)
HARDWARE = "Hardware. We trained the student on 8 A100 GPUs for three days."
SOURDOUGH = (
    "As an aside, the sourdough starter was kept at 75 percent hydration and fed with rye flour "
    "every twelve hours during the cryostat runs."
)


def _read():
    add_fulltext(
        Paper.objects.get(arxiv_id="2510.00003"), [[SETUP], ["Method overview."], [HARDWARE]]
    )
    add_fulltext(
        Paper.objects.get(arxiv_id="9901.00007"),
        [["We compute the concurrence of two-qubit Werner states."], [SOURDOUGH]],
    )


@pytest.fixture
async def read_papers(catalogue):
    await sync_to_async(_read)()


def _word_search(text: str, filters: SearchFilters):
    with connection.cursor() as cursor:
        lexemes, _ = query_terms(cursor, text)
        return chunk_word_search(cursor, lexemes, get_embedder().name, filters, 10)


async def test_the_chunk_word_search_finds_a_paper_by_a_rare_word_of_its_body(read_papers):
    hits = await sync_to_async(_word_search)("sourdough starter hydration", SearchFilters())
    quantum = await Paper.objects.aget(arxiv_id="9901.00007")
    chunk = await Passage.objects.chunks().filter(paper=quantum, page=2).aget()
    assert [h.paper_id for h in hits] == [quantum.pk]
    assert hits[0].passage_id == chunk.pk and hits[0].score > 0
    # Every filter stays inside its SQL: another scope, or a window the paper is outside.
    others = SearchFilters(paper_ids=(quantum.pk + 1000,))
    assert await sync_to_async(_word_search)("sourdough starter", others) == []
    window = SearchFilters(start=datetime(2020, 1, 1, tzinfo=UTC))
    assert await sync_to_async(_word_search)("sourdough starter", window) == []


async def test_many_chunks_are_counted_from_the_index_with_the_same_scores(
    read_papers, monkeypatch
):
    from chat.retrieval import chunks

    counted = await sync_to_async(_word_search)("sourdough starter hydration", SearchFilters())

    def analyse_passages():
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE papers_passage")  # the chunk word index's entries: exact here

    await sync_to_async(analyse_passages)()
    monkeypatch.setattr(chunks, "CHUNKS_ESTIMATED_FROM", 1)  # as from 100k chunks on
    estimated = await sync_to_async(_word_search)("sourdough starter hydration", SearchFilters())

    assert estimated == counted and counted


async def test_best_chunks_read_the_stored_words_of_a_chunk_as_its_text_would_give(read_papers):
    from chat.retrieval.chunks import best_chunks
    from papers.fulltext.read import index_words

    quantum = await Paper.objects.aget(arxiv_id="9901.00007")
    embedder = get_embedder()

    def ranked():
        with connection.cursor() as cursor:
            lexemes, _ = query_terms(cursor, "sourdough starter hydration")
            vector = embedder.embed_query("sourdough starter hydration")
            found = best_chunks(cursor, [quantum.pk], vector, embedder.name, lexemes)
        return [(c.passage_id, c.counts, c.length) for c in found.by_paper[quantum.pk]]

    def store_words(text):
        index_words(quantum, text)

    tokenised = await sync_to_async(ranked)()
    fulltext = await FullText.objects.aget(paper=quantum)
    await sync_to_async(store_words)(fulltext.text)
    stored = await sync_to_async(ranked)()
    await sync_to_async(store_words)(SOURDOUGH * 40)  # words that are not the text's
    other = await sync_to_async(ranked)()

    assert stored == tokenised and any(counts for _, counts, _ in stored)
    assert other != stored  # the stored words are what is counted


async def test_the_chunk_word_search_is_one_more_list_of_the_search(read_papers):
    response = await search("sourdough starter hydration", k=5, now=NOW)
    assert "chunk_words" in response.timings
    assert response.hits[0].arxiv_id == "9901.00007"
    assert response.hits[0].passage_text == SOURDOUGH


async def test_a_quantity_question_gets_the_chunk_whose_sentence_states_the_number(read_papers):
    response = await search("How many GPUs were used to train the student?", k=5, now=NOW)
    hit = next(h for h in response.hits if h.arxiv_id == "2510.00003")
    assert hit.passage_text == HARDWARE and hit.page == 3


async def _answer(question: str, **kwargs) -> tuple[list[dict], dict]:
    events = [
        e
        async for e in answer_events(
            question, now=NOW, backend=ExtractiveBackend(chunk_delay=0), **kwargs
        )
    ]
    return next(e for e in events if e["type"] == "sources")["sources"], events[-1]


async def test_the_sentence_stating_the_number_opens_the_answer(read_papers):
    cards, done = await _answer("How many GPUs were used to train the student?")
    lines = [line for line in done["content"].splitlines() if line.startswith("- ")]
    assert lines[0].startswith("- We trained the student on 8 A100 GPUs for three days")
    card = next(c for c in cards if c["passage"] == HARDWARE)
    assert card["number"] in done["citations"] and card["pages"] == "p. 3"
    assert done["content"].startswith(T.LEAD_IN)


async def test_a_quantity_question_whose_quotes_state_no_number_says_so(catalogue):
    consistency = await Paper.objects.aget(arxiv_id="2510.00003")
    # A number, but not of GPUs: still not the number asked for.
    epochs = "Schedule. We trained the student for 5 epochs."
    await sync_to_async(add_fulltext)(consistency, [[SETUP], [epochs]])
    _, done = await _answer(
        "How many GPUs were used to train the student?", scope_ids=(consistency.pk,)
    )
    assert done["content"].startswith(T.NO_NUMBER)
    assert "GPUs of the cluster" in done["content"]  # the closest passage, quoted as such


@pytest.fixture
def two_read_pdfs(pdf_server, shared_papers):  # noqa: F811
    """The Transformer and the chain-of-thought distillation papers read over HTTP, the rest of
    the shared catalogue records unread (their abstracts only)."""
    from papers.fulltext.read import read_paper
    from papers.indexing.vectors import embed_missing

    embed_missing()
    for arxiv_id in ("1706.03762", "2212.08410"):
        assert read_paper(shared_papers[arxiv_id]).status == "ok"
    return shared_papers


async def test_body_questions_on_real_pdfs_cite_the_page_and_open_with_the_answer(two_read_pdfs):
    assert not await Passage.objects.chunks().filter(lexemes__isnull=True).aexists()
    cards, done = await _answer("What dropout rate did the Transformer base model use?")
    cited = [c for c in cards if c["number"] in done["citations"]]
    assert any(c["arxiv_id"] == "1706.03762" and "Pdrop = 0.1" in c["passage"] for c in cited)
    first = next(line for line in done["content"].splitlines() if line.startswith("- "))
    assert "For the base model, we use a rate of Pdrop = 0.1" in first


def _lexemes(text: str) -> set[str]:
    with connection.cursor() as cursor:
        return set(query_terms(cursor, text)[0])


async def test_a_spelled_greek_letter_finds_the_chunks_printed_letter(two_read_pdfs):
    # The index holds what p. 7 prints, 'β1' and 'β2' (and 'ϵ'); the question spells the letters.
    lexemes = await sync_to_async(_lexemes)("What were the beta values and the epsilon?")
    assert {"beta", "β1", "β2", "epsilon", "ϵ"} <= lexemes
    assert not {"β", "β3", "ε"} & lexemes  # letters no read paper prints
    assert await sync_to_async(_lexemes)("the alphabet of betas") == {"alphabet", "beta", "β1", "β2"}
    cards, done = await _answer("What were the Transformer's beta values?")
    first = next(line for line in done["content"].splitlines() if line.startswith("- "))
    assert "with β1 = 0.9, β2 = 0.98" in first, done["content"]
    card = next(c for c in cards if "β1 = 0.9" in c["passage"])
    assert card["number"] in done["citations"] and card["pages"] == "p. 7"


@pytest.mark.xfail(
    strict=True,
    reason="known bad (session 17): the prose chunk on p. 4 ('using only 1319 of the original "
    "1648 examples') is not among the paper's chunks, and Table 3's rows, in a chunk that opens "
    "inside prose, are not read as a table. This used to pass by citing that chunk for 'We do "
    "not finetune PaLM for this', which says nothing of the count; the answer now quotes Table "
    "4's GSM8K rows.",
)
async def test_a_count_in_the_body_is_quoted(two_read_pdfs):
    cards, done = await _answer(
        "How many StrategyQA examples were used for chain-of-thought finetuning of T5?"
    )
    first = next(line for line in done["content"].splitlines() if line.startswith("- "))
    assert "1319" in first
    cited = int(first.rsplit("[", 1)[1].split("]")[0])
    assert next(c for c in cards if c["number"] == cited)["page"] == 4


NAMING = [
    "Zebra-9B card. Zebra-9B is released openly, and the Zebra-9B weights are public.",
    "Zebra-9B in use. Zebra-9B answers questions, and Zebra-9B writes summaries.",
    "Zebra-9B limits. Zebra-9B may be wrong, so Zebra-9B needs oversight.",
    "Zebra-9B results. Zebra-9B beats the baselines, and Zebra-9B is fast.",
    "Zebra-9B release. Zebra-9B comes with a license; Zebra-9B is free.",
    "Zebra-9B data. Zebra-9B reads web text; Zebra-9B saw books too.",
]
OPTIMIZER = "Setup. We use the AdamW optimizer with a weight decay of 0.1."


async def test_a_papers_chunks_are_ranked_with_its_own_chunks_word_weights(catalogue):
    # "9b" is in no other paper's chunks but in most of this paper's own: weighed over all the
    # candidates' chunks (where "optimizer" is common) it made the chunks repeating the name
    # this paper's best for "What optimizer did Zebra-9B use?" (OPT-175B's model card and
    # release notes before its training setup). Among its own chunks it tells none apart.
    from chat.retrieval.chunks import best_chunks

    def read_and_rank():
        zebra = Paper.objects.get(arxiv_id="2510.00003")
        other = Paper.objects.get(arxiv_id="9901.00007")
        add_fulltext(zebra, [[text] for text in NAMING] + [[OPTIMIZER]])
        add_fulltext(other, [
            ["The optimizer of the variational circuit is COBYLA; the optimizer converges."],
            ["Another optimizer, SPSA, tolerates shot noise better than any gradient optimizer."],
            ["The optimizer budget is 100 calls of the optimizer per instance."],
        ])  # fmt: skip
        question = "What optimizer did Zebra-9B use?"
        embedder = get_embedder()
        with connection.cursor() as cursor:
            lexemes, _ = query_terms(cursor, question)
            found = best_chunks(
                cursor, [zebra.pk, other.pk], embedder.embed_query(question), embedder.name,
                lexemes, per_paper=1, question=question, quantity=False,
            )  # fmt: skip
        return found.by_paper[zebra.pk][0].text

    assert await sync_to_async(read_and_rank)() == OPTIMIZER


def _quoted_lines(done: dict) -> list[str]:
    return [line for line in done["content"].splitlines() if line.startswith("- ")]


def _said_as_quoted(card: dict) -> str:
    """The card's marked text as the answer quotes it: one line, the paper's own references
    marked as its ("[20]" -> "[ref. 20]"), the final stop after our citation."""
    import re

    text = re.sub(r"\[\s*(\d[\d,;–\- ]*)\]", lambda m: f"[ref. {m[1].strip()}]", card["highlight"])
    return " ".join(text.split()).rstrip(".!?")


async def test_a_section_heading_never_opens_a_quote_on_real_pdfs(two_read_pdfs):
    _, done = await _answer("What learning rate schedule does the Transformer use?")
    lines = _quoted_lines(done)
    assert lines[0].startswith("- We varied the learning rate over the course of training")
    assert not any(line[2:3].isdigit() for line in lines)  # no "- 5.2 Hardware and Schedule …"


async def test_each_cited_card_marks_the_sentence_the_answer_quotes_from_it(two_read_pdfs):
    for question in (
        "What dropout rate did the Transformer base model use?",
        "What learning rate schedule does the Transformer use?",
        "How many warmup steps did the Transformer use?",
    ):
        cards, done = await _answer(question)
        content = done["content"]
        cited = [c for c in cards if c["number"] in done["citations"]]
        assert cited
        for card in cited:
            # Its first quote in the answer is the card's marked sentence, cited to it.
            first = next(
                line for line in _quoted_lines(done) if f"[{card['number']}]" in line
            )
            assert card["highlight"] and card["highlight"] in card["passage"]
            assert first[2:].startswith(_said_as_quoted(card)), (question, first, card["quote"])
        assert content.count("[") >= len(cited)


@pytest.fixture
def transformer_read_with_minilm(pdf_server, shared_papers, settings):  # noqa: F811
    """The Transformer read over HTTP and embedded with the bundled MiniLM (production's
    embedder): the composer's choice by meaning is what is checked."""
    from papers.fulltext.read import read_paper
    from papers.indexing.vectors import embed_missing

    settings.EMBEDDING_BACKEND = "minilm"
    embed_missing()
    assert read_paper(shared_papers["1706.03762"]).status == "ok"
    return shared_papers


async def test_once_the_number_is_stated_no_quote_shares_only_the_papers_name(
    transformer_read_with_minilm,
):
    # Chosen by meaning, "We trained a 4-layer transformer … on the Wall Street Journal (WSJ)
    # portion of the Penn Treebank" followed the answer: the Transformer is all it shares with
    # the question.
    _, done = await _answer("What dropout rate did the Transformer base model use?")
    lines = _quoted_lines(done)
    assert "For the base model, we use a rate of Pdrop = 0.1" in lines[0]
    words = ("dropout", "rate", "base", "pdrop")
    assert all(any(w in line.lower() for w in words) for line in lines), lines


def _asked_about_pool():
    # 30 chunks that each say two of the question's words, in sentences of their own (none
    # answers), and late in the paper, in a long chunk on something else, the one sentence
    # that holds all three: cosine and BM25 rank that chunk below 16 of the others.
    said = [
        ("The image encoder is described here.", "Each image goes through the pipeline."),
        ("Resolution matters for vision.", "Its resolution is discussed again."),
        ("Pre-training is expensive.", "Pre-training comes first."),
    ]
    fillers = [
        f"Part {i}. {said[i % 3][0]} {said[(i + 1) % 3][0]} {said[i % 3][1]} "
        f"{said[(i + 1) % 3][1]}"
        for i in range(30)
    ]
    appendix = (
        "B.1 Details. We thank the reviewers and the cluster operators for their patience, and "
        "the authors of the libraries we build on for their support over many months of work "
        "on the codebase, its tests and its documentation, which took longer than planned. "
        "Finally, all pre-training is done on image resolution 224."
    )
    add_fulltext(Paper.objects.get(arxiv_id="2510.00003"), [fillers, [appendix]])


async def test_a_paper_asked_about_reads_more_of_its_chunks_for_the_sentence_that_answers(
    catalogue,
):
    from chat.retrieval.chunks import best_chunks

    await sync_to_async(_asked_about_pool)()
    paper = await Paper.objects.aget(arxiv_id="2510.00003")
    embedder = get_embedder()
    question = "What image resolution was used for pre-training?"

    def kept(asked_about):
        with connection.cursor() as cursor:
            lexemes, _ = query_terms(cursor, question)
            found = best_chunks(
                cursor, [paper.pk], embedder.embed_query(question), embedder.name, lexemes,
                question=question, asked_about=asked_about,
            )
        return [c.text for c in found.by_paper[paper.pk]]

    about = await sync_to_async(kept)({paper.pk})
    assert any("resolution 224" in text for text in about)
    # Another paper of the page keeps its 16-chunk pool: the sentence is never read.
    assert not any("resolution 224" in text for text in await sync_to_async(kept)(()))

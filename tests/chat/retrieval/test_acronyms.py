"""A list asked for by an acronym ("RAG papers") lists the papers on what it stands for, not only
those writing the acronym: REALM ("Retrieval-Augmented Language Model Pre-Training") predates
"RAG", Fusion-in-Decoder never writes it. What an acronym stands for is read from the catalogue's
own definitions ("retrieval-augmented generation (RAG)"), never from a table of ours. Against the
real database and the shared arXiv PDFs (DPR's read over HTTP from a local stand-in for arxiv.org:
only its body defines "DPR")."""

import re

import pytest
from django.db import connection

from chat.llm.extractive import ExtractiveBackend
from chat.llm.shapes import on_topic
from chat.pipeline.answer import answer_events
from chat.retrieval.acronyms import long_forms, topic_acronyms
from chat.retrieval.search import search
from chat.understanding.acronyms import acronyms_in, expand
from papers.indexing.lexical import index_missing
from papers.indexing.names import acronym_definitions
from tests.chat.conftest import NOW

# The fixtures of tests/papers/fulltext: a local arXiv PDF server over the shared PDFs.
from tests.papers.fulltext.conftest import pdf_server, shared_papers  # noqa: F401

RAG, REALM, FID, DPR, VIT = "2005.11401", "2002.08909", "2007.01282", "2004.04906", "2010.11929"
RAPT, TRANSFORMER = "2202.00535", "1706.03762"


def test_the_acronyms_a_question_writes():
    assert acronyms_in("RAG papers") == ["RAG"]
    assert acronyms_in("ViT and LLMs for segmentation") == ["ViT", "LLMs"]
    # A count of hardware, a model size, plain words: no topic to spell out.
    assert acronyms_in("How many GPUs did the 175B model use?") == []
    assert acronyms_in("papers on retrieval-augmented generation") == []
    assert expand("RAG papers", {"RAG": "retrieval-augmented generation"}) == (
        "retrieval-augmented generation (RAG) papers"
    )


def test_only_an_acronym_the_question_is_about_is_spelled_out():
    assert topic_acronyms("RAG papers") == ["RAG"]
    assert topic_acronyms("What is RLHF?") == ["RLHF"]
    # Asked of the paper that coined it: its own chunks answer, the long form would crowd them.
    assert topic_acronyms("Which datasets are used to evaluate RAPT paraphrase generation?") == []
    assert topic_acronyms("How many documents does RAG retrieve per query?") == []


def test_a_definition_is_read_back_from_its_brackets():
    text = (
        "We explore a general-purpose fine-tuning recipe for retrieval-augmented generation (RAG)"
        " — models which combine pre-trained parametric and non-parametric memory."
    )
    assert acronym_definitions(text, "RAG") == ["retrieval-augmented generation"]
    assert acronym_definitions(text, "DPR") == []
    # First in its brackets, plural or not.
    assert acronym_definitions("the Dense Passage Retriever (DPR; Karpukhin et al.)", "DPR") == [
        "Dense Passage Retriever"
    ]
    assert acronym_definitions("large language models (LLMs) are", "LLM") == [
        "large language models"
    ]
    # The small words inside a long form spell no letter of it.
    rlhf = "reinforcement learning from human feedback (RLHF)"
    assert acronym_definitions(rlhf, "RLHF") == ["reinforcement learning from human feedback"]


@pytest.fixture
def catalogue_of_pdfs(pdf_server, shared_papers):  # noqa: F811
    """The 28 shared papers indexed (BM25, vectors, names); DPR read over HTTP."""
    from papers.fulltext.read import read_paper
    from papers.indexing.vectors import embed_missing

    index_missing()
    embed_missing()
    assert read_paper(shared_papers[DPR]).status == "ok"
    return shared_papers


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("tidy_passage_statistics")
def test_an_acronym_stands_for_what_the_catalogue_defines_it_as(catalogue_of_pdfs):
    with connection.cursor() as cursor:
        forms = long_forms(cursor, ["RAG", "ViT", "DPR", "QZX"])
    assert forms == {
        "RAG": "retrieval-augmented generation",  # RAG's abstract
        "ViT": "Vision Transformer",  # ViT's abstract
        "DPR": "Dense Passage Retriever",  # only DPR's body defines it
    }  # and one nobody defines is left alone


async def _list_of(question: str) -> tuple[list[str], dict]:
    events = [
        e
        async for e in answer_events(question, now=NOW, backend=ExtractiveBackend(chunk_delay=0))
    ]
    cards = next(e for e in events if e["type"] == "sources")["sources"]
    done = events[-1]
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", done["content"])}
    return [c["arxiv_id"] for c in cards if c["number"] in cited], done


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.usefixtures("tidy_passage_statistics")
async def test_an_acronym_list_lists_the_papers_on_what_it_stands_for(catalogue_of_pdfs):
    response = await search("RAG papers", k=10, now=NOW)
    assert response.acronyms == {"RAG": "retrieval-augmented generation"}
    # BM25 finds REALM by the long form ("Retrieval-Augmented Language Model"), not by "RAG".
    realm = next(h for h in response.hits if h.arxiv_id == REALM)
    assert realm.fulltext_rank is not None
    listed, done = await _list_of("RAG papers")
    # REALM never writes "RAG": listed all the same, beside RAG itself and RAPT ("Retrieval
    # Augmented … Prompt Tuning" for paraphrase generation). (Fusion-in-Decoder is found too
    # with the MiniLM embedder, not with the tests' hashing one: docs/BENCHMARKS.md.)
    assert listed[0] == RAG and {REALM, RAPT} <= set(listed), done["content"]
    assert TRANSFORMER not in listed


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.usefixtures("tidy_passage_statistics")
async def test_a_question_on_the_named_paper_itself_is_searched_as_written(catalogue_of_pdfs):
    # "does RAG retrieve": RAG's own text answers; the topic's other papers would crowd it.
    response = await search("How many documents does RAG retrieve per query?", k=8, now=NOW)
    assert response.named.about and response.acronyms == {}
    assert response.hits[0].arxiv_id == RAG


def test_a_long_form_counts_for_a_list_topic_only_whole():
    acronyms = {"ViT": "Vision Transformer", "RAG": "retrieval-augmented generation"}
    realm = (
        "REALM: Retrieval-Augmented Language Model Pre-Training",
        "we augment language model pre-training with a latent knowledge retriever",
    )
    assert not on_topic(*realm, "RAG papers")
    assert on_topic(*realm, "RAG papers", acronyms=acronyms)
    # The Transformer says one word of "Vision Transformer": another model, not a ViT paper.
    transformer = ("Attention Is All You Need", "a new simple network architecture, the Transformer")
    assert not on_topic(*transformer, "ViT papers", acronyms=acronyms)

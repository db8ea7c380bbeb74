"""The optional LLM stages of search (reranker, multi-query), against a local fake OpenAI server:
they may improve a ranking, never break a search."""

import pytest
from asgiref.sync import async_to_sync

from chat.retrieval.multiquery import parse_rewrites
from chat.retrieval.rerank import parse_order
from chat.retrieval.search import search
from tests.fakes.openai_chat import Fail, FakeOpenAI, Reply

from .search_corpus import NOW, build_corpus

run = async_to_sync(search)


@pytest.fixture
def fake_llm(settings):
    with FakeOpenAI() as server:
        settings.LLM_BACKEND = "openai"
        settings.OPENAI_API_KEY = "test-key"
        settings.OPENAI_BASE_URL = server.base_url
        settings.OPENAI_MAX_RETRIES = 0
        settings.LLM_RETRY_MAX_WAIT = 0
        settings.LLM_MODEL = "fake-gpt"
        yield server


@pytest.fixture
def corpus(db, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    return build_corpus()


def ids_of(response):
    return [hit.arxiv_id for hit in response.hits]


def by_prompt(rerank: str, rewrites: str = '["surface code decoders"]'):
    """Answer the reranker and the rewriter, told apart by their system prompts."""

    def reply(body):
        system = body["messages"][0]["content"]
        return rerank if "rank research papers" in system else rewrites

    return Reply(reply)


def test_llm_reranker_reorders_the_head(corpus, fake_llm, settings):
    fused = ids_of(run("quantum error correction", k=3, now=NOW))
    settings.RERANKER = "llm"
    fake_llm.default = by_prompt("[3, 1, 2]")

    reranked = run("quantum error correction", k=3, now=NOW)

    assert ids_of(reranked)[:3] == [fused[2], fused[0], fused[1]]
    assert "rerank" in reranked.timings
    assert (
        "Query: quantum error correction"
        in fake_llm.chat_requests()[-1].body["messages"][1]["content"]
    )


@pytest.mark.parametrize("behaviour", [Reply("I think the second one."), Fail(500)])
def test_llm_reranker_failure_keeps_the_fused_order(corpus, fake_llm, settings, behaviour):
    fused = ids_of(run("quantum error correction", k=3, now=NOW))
    settings.RERANKER = "llm"
    fake_llm.default = behaviour

    assert ids_of(run("quantum error correction", k=3, now=NOW)) == fused


def test_multi_query_fuses_rewrites(corpus, fake_llm, settings):
    settings.SEARCH_MULTI_QUERY = True
    fake_llm.default = by_prompt("[]", '["surface code decoders", "fault tolerant qubits"]')

    response = run("quantum error correction", k=3, now=NOW)

    assert response.plan["rewrites"] == ["surface code decoders", "fault tolerant qubits"]
    assert set(ids_of(response)) == {"1805.00009", "2202.00010", "2508.00011"}


def test_multi_query_failure_still_searches(corpus, fake_llm, settings):
    settings.SEARCH_MULTI_QUERY = True
    fake_llm.default = Fail(500)

    response = run("quantum error correction", k=3, now=NOW)

    assert response.plan["rewrites"] == []
    assert len(response.hits) == 3


def test_no_llm_calls_by_default(corpus, fake_llm):
    run("quantum error correction", k=3, now=NOW)

    assert fake_llm.chat_requests() == []


@pytest.mark.parametrize(
    "reply, count, order",
    [
        ("[2, 1, 3]", 3, [1, 0, 2]),
        ("Sure: [3, 1]", 3, [2, 0, 1]),  # missing numbers keep their order after the given ones
        ('["2", 9, 2, 1]', 3, [1, 0, 2]),  # strings, out of range and repeats are tolerated
        ("no list here", 3, None),
        ("[true, false]", 2, None),
        ("[{}]", 2, None),
    ],
)
def test_parse_order(reply, count, order):
    assert parse_order(reply, count) == order


@pytest.mark.parametrize(
    "reply, rewrites",
    [
        ('["a b", "c d", "e f"]', ["a b", "c d"]),
        ('["quantum error correction", "qec codes"]', ["qec codes"]),  # the query itself dropped
        ('{"rewrites": 1}', []),
        ("nothing", []),
        ('["' + "x" * 300 + '", 7]', []),
    ],
)
def test_parse_rewrites(reply, rewrites):
    assert parse_rewrites(reply, "Quantum  error correction") == rewrites

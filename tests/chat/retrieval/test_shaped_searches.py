"""Searches shaped by the question (chat.retrieval.shaped), against the real database: 'latest
papers on X' lists the newest papers on X (the newest is seldom the one nearest its words, and a
paper sharing one word of the topic is not on it); 'how did X develop over the years?' reaches
back before the years where most papers on X are, and leaves out the search's off-topic tail."""

from datetime import UTC, datetime, timedelta

import pytest

from chat.llm.extractive import ExtractiveBackend
from chat.llm.shapes import names_topic
from chat.pipeline.answer import answer_events
from chat.retrieval.search import search
from chat.understanding.intent import timeline_topic
from papers.indexing.lexical import index_missing
from papers.indexing.vectors import embed_missing
from papers.ingest.upsert import PaperRecord, upsert_papers

pytestmark = pytest.mark.django_db(transaction=True)

NEWEST = datetime(2026, 6, 28, tzinfo=UTC)
NOW = datetime(2026, 11, 24, tzinfo=UTC)

AGENTS = (
    "Large language model agents plan, call tools and act. We study large language model "
    "agents that use tools on web tasks; language model agents with memory outperform agents "
    "without it."
)
# The newest on it: about GPU kernels, with LLM agents as its means (EGG, bench_answers).
KERNELS = (
    "High-performance GPU kernels are critical for efficient training and inference. Manual "
    "tuning by experts is slow, and compilers miss hardware-specific optimizations. We propose "
    "a staged framework in which an agent, guided by a large language model, decomposes kernel "
    "generation into algorithmic structure design and hardware-specific tuning with tensor "
    "tiling, memory layout and parallel mapping. Experiments on KernelBench show a 2.1x "
    "average speedup over PyTorch operators."
)
# As new: "agents" of game theory, no language model (Parametric Open Source Games).
GAMES = (
    "Open-source game theory studies agents whose behavior depends on one another's decision "
    "procedures. We introduce parametric open-source games and prove equilibrium existence."
)


def _record(n: int, title: str, abstract: str, day: datetime, prefix="2606") -> PaperRecord:
    return PaperRecord(
        arxiv_id=f"{prefix}.{n:05d}", version=1, title=title, abstract=abstract,
        authors=["Ada Lovelace"], primary_category="cs.AI", categories=["cs.AI"],
        published=day, updated=day,
    )  # fmt: skip


@pytest.fixture
def agents_catalogue(settings):
    settings.EMBEDDING_BACKEND = "hashing"
    settings.LLM_BACKEND = "extractive"
    records = [
        _record(n, f"Large language model agents study {n}", AGENTS, NEWEST - timedelta(days=7 * n))
        for n in range(1, 13)
    ]
    records.append(_record(100, "Staged kernel generation on GPUs", KERNELS, NEWEST))
    records.append(_record(101, "Parametric open-source games", GAMES, NEWEST))
    upsert_papers(records)
    index_missing()
    embed_missing()


def test_a_paper_names_a_topic_with_every_word_that_tells_it_apart():
    topic = "large language model agents"
    assert names_topic("Staged kernel generation", KERNELS, topic)
    assert not names_topic("Parametric open-source games", GAMES, topic)  # agents alone
    assert names_topic("", "diffusion for video", "diffusion models")  # "models": any field's
    # As written, not as stemmed: "transformed" is no transformer, "reinforces" no reinforcement.
    assert not names_topic("", "X-transformed points", "transformer models")
    assert names_topic("", "a Transformer-based encoder", "transformer models")
    assert not names_topic("", "learning reinforces answers", "reinforcement learning")


def test_a_timelines_topic_is_without_the_words_asking_for_a_timeline():
    assert timeline_topic("how did diffusion models develop over the years?") == "diffusion models ?"
    assert timeline_topic("evolution of transformer models") == "of transformer models"
    assert timeline_topic("history of reinforcement learning research") == "of reinforcement learning"


@pytest.mark.asyncio
async def test_latest_papers_on_a_topic_open_with_its_newest_paper(agents_catalogue):
    topic = "large language model agents"
    # What this test is about: nearest the topic's words, the newest paper is not among the
    # first eight of the catalogue's last half year, far below the best's score.
    recent = await search(topic, k=8, now=NOW, overrides={"start": "2026-01-01"})
    assert "2606.00100" not in [h.arxiv_id for h in recent.hits]

    events = [
        e
        async for e in answer_events(
            "latest papers on large language model agents", now=NOW,
            backend=ExtractiveBackend(chunk_delay=0),
        )
    ]  # fmt: skip
    cards = next(e for e in events if e["type"] == "sources")["sources"]
    ids = [c["arxiv_id"] for c in cards]
    assert ids[0] == "2606.00100"  # the newest paper on it, first
    assert "2606.00101" not in ids  # as new, but on game theory's agents
    assert len(cards) == 8  # a list of eight, not the whole pool read for it
    done = events[-1]
    assert "Staged kernel generation on GPUs" in done["content"].splitlines()[4]


DIFFUSION = (
    "Denoising diffusion models generate images by reversing a diffusion process. We train a "
    "diffusion model with a U-Net and sample it in {n} steps; diffusion models beat GANs on FID."
)
# The first of them, in other words than the later ones (Sohl-Dickstein et al., 2015).
FIRST = (
    "A central problem in machine learning involves modeling complex data sets with tractable "
    "families of probability distributions. Inspired by nonequilibrium statistical physics, we "
    "slowly destroy structure in data through an iterative forward diffusion process and learn "
    "a reverse process that restores it."
)
# Older still, the search's tail: a paper that "developed" something, on no diffusion at all.
EIGEN = (
    "We developed a method for extremal eigenvalue problems over the years of study, turning "
    "them into a classical mechanical system of models."
)


@pytest.fixture
def diffusion_catalogue(settings):
    settings.EMBEDDING_BACKEND = "hashing"
    settings.LLM_BACKEND = "extractive"
    records = [
        _record(n, f"Diffusion models for images, study {n}", DIFFUSION.format(n=n),
                datetime(2022 + n % 3, 1 + n % 12, 1, tzinfo=UTC), prefix="2201")
        for n in range(1, 21)
    ]  # fmt: skip
    records.append(_record(1, "Deep unsupervised learning by thermodynamics", FIRST,
                           datetime(2015, 3, 12, tzinfo=UTC), prefix="1503"))  # fmt: skip
    records.append(_record(1, "Inflationary dynamics for eigenvalue problems", EIGEN,
                           datetime(2007, 12, 25, tzinfo=UTC), prefix="0712"))  # fmt: skip
    upsert_papers(records)
    index_missing()
    embed_missing()


@pytest.mark.asyncio
async def test_a_timeline_reaches_back_before_the_years_most_papers_are_from(diffusion_catalogue):
    question = "how did diffusion models develop over the years?"
    # What this test is about: the search's sixteen are the later papers only.
    found = await search(question, k=16, now=NOW)
    assert "1503.00001" not in [h.arxiv_id for h in found.hits]

    events = [
        e async for e in answer_events(question, now=NOW, backend=ExtractiveBackend(chunk_delay=0))
    ]
    cards = next(e for e in events if e["type"] == "sources")["sources"]
    ids = [c["arxiv_id"] for c in cards]
    assert "1503.00001" in ids  # the first paper on it
    assert "0712.00001" not in ids  # "we developed …": no period of diffusion models
    content = events[-1]["content"]
    assert "Deep unsupervised learning by thermodynamics" in content
    assert "eigenvalue" not in content

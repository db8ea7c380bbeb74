"""A list's item may be on its topic by its full text alone: MuZero's abstract never says
"reinforcement learning" (it says planning with a learned model); its body does. Such a paper is
listed with the chunk that says it (and its page), not left out as the search's tail."""

import pytest
from asgiref.sync import sync_to_async

from papers.indexing.vectors import embed_missing
from papers.ingest.upsert import upsert_papers
from papers.models import Paper
from tests.chat.conftest import _record
from tests.chat.fulltext_helpers import add_fulltext
from tests.chat.test_answer_flow import run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

BODY = (
    "We train the message passing policy with reinforcement learning, the reward being the "
    "accuracy of the predicted molecular property."
)


async def test_a_paper_on_the_lists_topic_by_its_body_is_listed_with_that_chunk(catalogue):
    # A paper whose abstract says it, as the catalogue's RL papers do.
    rl = _record("2509.00008", "Reinforcement learning from human feedback at scale",
                 "We study reinforcement learning from human feedback for language models.",
                 ["Hal Ives"], ["cs.LG"], "2025-09-01")  # fmt: skip
    await sync_to_async(upsert_papers)([rl])
    await sync_to_async(embed_missing)()
    paper = await Paper.objects.aget(arxiv_id="2511.00006")  # its abstract: no RL
    await sync_to_async(add_fulltext)(
        paper, [["Graph neural networks predict properties of molecules."], [BODY]], "Method"
    )

    # Another paper's related work names the topic: no item of the list.
    video = await Paper.objects.aget(arxiv_id="2301.00001")
    await sync_to_async(add_fulltext)(
        video, [["Earlier work trained video models with reinforcement learning from rewards."]],
        "2 Related Work",
    )  # fmt: skip

    _, by = await run("papers on reinforcement learning")
    cards = by["sources"][0]["sources"]
    listed = [c for c in cards if c["arxiv_id"] == "2511.00006"]

    assert listed and listed[0]["kind"] == "fulltext" and listed[0]["page"] == 2
    line = next(
        line for line in by["done"][0]["content"].splitlines() if "Graph neural networks" in line
    )
    assert BODY.rstrip(".") in line and f"[{listed[0]['number']}" in line
    assert "2301.00001" not in [c["arxiv_id"] for c in cards]


async def test_a_chunk_with_some_words_of_the_topic_does_not_list_its_paper(catalogue):
    # "RAG papers" listed CiteSee for "Faceted retrieval interfaces … augmented inline
    # citations": a topic's words meeting by chance in a body are not its topic.
    paper = await Paper.objects.aget(arxiv_id="2405.00002")
    await sync_to_async(add_fulltext)(
        paper, [["Faceted retrieval interfaces show augmented inline citations to readers."]],
        "3 Design",
    )  # fmt: skip

    _, by = await run("papers on retrieval-augmented generation")
    listed = [c["arxiv_id"] for c in by["sources"][0]["sources"]]

    assert "2402.00005" in listed and "2405.00002" not in listed

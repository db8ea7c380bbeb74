""""What does ULSA stand for?" answered from the paper's title cites the paper's abstract card
(page 1), not the chunk of its body the search matched (seen: the title quoted as "[1]", card [1]
being page 13)."""

import pytest
from asgiref.sync import sync_to_async

from papers.indexing.vectors import embed_missing
from papers.ingest.upsert import upsert_papers
from papers.models import Paper
from tests.chat.conftest import _record
from tests.chat.fulltext_helpers import add_fulltext
from tests.chat.test_answer_flow import run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

TITLE = "ULSA: Unified Language of Synthesis Actions for Representation of Synthesis Protocols"


async def test_a_title_spelling_the_acronym_is_cited_by_its_abstract_card(catalogue):
    record = _record(
        "2201.09329", TITLE,
        "We present a scheme for describing inorganic synthesis procedures and annotate a "
        "dataset of synthesis paragraphs with it.",
        ["Zheren Wang"], ["cond-mat.mtrl-sci"], "2022-01-23",
    )  # fmt: skip
    await sync_to_async(upsert_papers)([record])
    await sync_to_async(embed_missing)()
    paper = await Paper.objects.aget(arxiv_id="2201.09329")
    body = [["Synthesis protocols vary between laboratories."]] * 12 + [
        ["We then mapped these paragraphs into ULSA by using the bi-LSTM model.",
         "The ULSA scheme still suffers from imperfections; ULSA can be improved."],
    ]  # fmt: skip
    await sync_to_async(add_fulltext)(paper, body, "4 Results")

    _, by = await run("What does ULSA stand for?")
    cards = {c["number"]: c for c in by["sources"][0]["sources"]}
    content = by["done"][0]["content"]
    line = next(line for line in content.splitlines() if line.startswith(f"- {TITLE}"))
    number = int(line.rsplit("[", 1)[1].split("]")[0])

    assert cards[number]["arxiv_id"] == "2201.09329"
    assert cards[number]["kind"] == "abstract" and cards[number]["page"] is None
    # The chunk that matched is still a card of its own, with its page.
    assert any(c["page"] == 13 for c in cards.values())

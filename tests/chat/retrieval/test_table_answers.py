"""A number in a table, asked through the pipeline: OPT's PDF read over HTTP (the local arXiv
stand-in), the question asked in a thread about that paper, the offline composer's answer. The
cited card holds the table with its caption and header, and the quoted row says what its numbers
are; a row of another model size is never quoted for it."""

import pytest

from chat.llm.extractive import ExtractiveBackend
from chat.pipeline.answer import answer_events
from tests.chat.conftest import NOW

# The fixtures of tests/papers/fulltext: a local arXiv PDF server over the shared PDFs.
from tests.papers.fulltext.conftest import pdf_server, shared_papers  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

OPT = "2205.01068"
ROW = "Table 1: Model 175B, #L 96, #H 96, dmodel 12288, LR 1.2e−4, Batch 2M (Model architecture"


@pytest.fixture
def opt_read(pdf_server, shared_papers):  # noqa: F811
    from papers.fulltext.read import read_paper
    from papers.indexing.vectors import embed_missing

    embed_missing()
    assert read_paper(shared_papers[OPT]).status == "ok"
    return shared_papers[OPT]


async def _answer(question: str, paper) -> tuple[list[dict], dict]:
    events = [
        e
        async for e in answer_events(
            question,
            now=NOW,
            backend=ExtractiveBackend(chunk_delay=0),
            scope_ids=(paper.pk,),
        )
    ]
    return next(e for e in events if e["type"] == "sources")["sources"], events[-1]


async def test_a_table_row_is_quoted_with_its_caption_and_header(opt_read):
    cards, done = await _answer(
        "What peak learning rate and batch size did OPT-175B use?", opt_read
    )
    lines = [line for line in done["content"].splitlines() if line.startswith("- ")]
    quoted = next(line for line in lines if line.startswith("- Table 1"))
    # The caption says what the header's abbreviations are.
    assert quoted.startswith(f"- {ROW}") and "the peak Learning Rate (LR)" in quoted
    number = int(quoted.rsplit("[", 1)[1].split("]")[0])
    card = next(c for c in cards if c["number"] == number)
    assert number in done["citations"] and card["arxiv_id"] == OPT
    # The card's passage holds the row with the header above it and the caption below it, on
    # the page the table is printed on.
    passage = card["passage"]
    assert "Model #L #H dmodel LR Batch" in passage and "Table 1: Model architecture" in passage
    assert "175B 96 96 12288 1.2e−4 2M" in passage and card["page"] <= 2 <= card["page_end"]
    assert card["quote"].startswith(ROW)
    # The quote is not in the passage; the row's own line is, and the card marks that.
    assert card["quote"] not in passage and card["highlight"] == "175B 96 96 12288 1.2e−4 2M"
    assert card["highlight"] in passage
    # No other model size's row is put forward as the answer.
    assert not any(line.startswith("- Table 1") and "Model 175B" not in line for line in lines)


async def test_the_row_of_the_asked_variant_opens_before_a_sentence_on_every_size(opt_read):
    # "Our batch sizes range from 0.5M to 4M depending on the model size (see Table 1)" shares
    # more of the question's words; the row labelled 175B is OPT-175B's own batch size.
    cards, done = await _answer("What batch size was used to train OPT-175B?", opt_read)
    lines = [line for line in done["content"].splitlines() if line.startswith("- ")]
    assert lines[0].startswith(f"- {ROW}") and "Batch 2M" in lines[0]
    number = int(lines[0].rsplit("[", 1)[1].split("]")[0])
    card = next(c for c in cards if c["number"] == number)
    assert card["highlight"] == "175B 96 96 12288 1.2e−4 2M"

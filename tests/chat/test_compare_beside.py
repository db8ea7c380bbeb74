"""A comparison keeps the paper that sets its two sides side by side among its cards: "GPT vs
BERT" lost the line "BERT vs GPT" had (ViT's "BERT uses a denoising self-supervised pre-training
task, while the GPT line of work uses language modeling"), its paper pushed past the cards by
the papers on each side alone."""

import pytest
from asgiref.sync import sync_to_async

from chat.llm import templates as T
from papers.indexing.vectors import embed_missing
from papers.ingest.upsert import upsert_papers
from tests.chat.conftest import _record
from tests.chat.test_answer_flow import run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

BESIDE = (
    "BERT and GPT are pre-trained with different objectives. BERT uses a denoising objective "
    "over masked tokens, while GPT uses left-to-right language modeling."
)
SIDES = [
    ("2301.10001", "GPT language models are few-shot learners",
     "GPT scales autoregressive language models. GPT reaches strong few-shot results."),
    ("2302.10002", "Scaling GPT pre-training to longer contexts",
     "We extend GPT pre-training to long contexts. GPT keeps its quality on long documents."),
    ("2303.10003", "BERT: bidirectional encoders for language understanding",
     "BERT pre-trains bidirectional encoders. BERT improves eleven NLP benchmarks."),
    ("2304.10004", "Distilling BERT into small encoders",
     "We distil BERT into a small encoder. The distilled BERT keeps most of its accuracy."),
    ("2306.10006", "BERT for biomedical text", "We adapt BERT to biomedical text. BERT helps."),
    ("2307.10007", "GPT for code", "We adapt GPT to code. GPT writes programs."),
    ("2305.10005", "Pre-training objectives for vision transformers", BESIDE),
]


async def test_the_paper_setting_both_sides_side_by_side_is_quoted(catalogue, settings):
    settings.CHAT_SOURCES = 4  # two papers a side fill the cards, as the PDFs' chunk cards did
    records = [_record(i, t, a, ["Ann Author"], ["cs.CL"], f"20{i[:2]}-0{i[3]}-01")
               for i, t, a in SIDES]  # fmt: skip
    await sync_to_async(upsert_papers)(records)
    await sync_to_async(embed_missing)()

    for question in ("GPT vs BERT", "BERT vs GPT"):
        _, by = await run(question)
        cards = by["sources"][0]["sources"]
        content = by["done"][0]["content"]

        assert "2305.10005" in [c["arxiv_id"] for c in cards], question
        assert T.COMPARE_DIFFERENCE in content, question
        beside = content.split(T.COMPARE_DIFFERENCE)[-1]
        assert "while GPT uses left-to-right language modeling" in beside, question


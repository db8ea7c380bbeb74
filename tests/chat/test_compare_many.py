"""A comparison of three papers or more answers every side under its own label, with its own
sentence and citation ("Compare the model sizes of OPT, RWKV and ViT" compared "model sizes of
OPT, RWKV", as one side, with ViT)."""

import re

import pytest
from asgiref.sync import sync_to_async

from chat.llm import templates as T
from chat.understanding.intent import classify
from papers.indexing.lexical import index_missing
from papers.indexing.vectors import embed_missing
from papers.ingest.upsert import upsert_papers
from tests.chat.conftest import _record
from tests.chat.test_answer_flow import run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

PAPERS = [
    ("2205.01001", "OPT: Open Pre-trained Transformer Language Models",
     "We present Open Pre-trained Transformers (OPT), a suite of decoder-only language models. "
     "We compare the model sizes of OPT, from 125M to 175B parameters."),
    ("2305.01002", "RWKV: Reinventing RNNs for the Transformer Era",
     "We propose RWKV, a recurrent network trained in parallel like a transformer. We compare "
     "the model sizes of RWKV, from 169 million to 14 billion parameters."),
    ("2010.01003", "An Image is Worth 16x16 Words: Transformers for Image Recognition at Scale",
     "We apply a Vision Transformer (ViT) directly to sequences of image patches. We compare "
     "the model sizes of ViT, from 86M to 632M parameters."),
]
QUESTION = "Compare the model sizes of OPT, RWKV and ViT"


async def test_every_named_side_is_answered_under_its_own_label(catalogue, settings):
    assert classify(QUESTION).subjects == ("OPT", "RWKV", "ViT")
    records = [_record(i, t, a, ["Ann Author"], ["cs.CL"], f"20{i[:2]}-{i[2:4]}-01")
               for i, t, a in PAPERS]  # fmt: skip
    await sync_to_async(upsert_papers)(records)
    await sync_to_async(index_missing)()  # (BM25 and the papers' names)
    await sync_to_async(embed_missing)()

    _, by = await run(QUESTION)
    cards = {c["number"]: c["arxiv_id"] for c in by["sources"][0]["sources"]}
    content = by["done"][0]["content"]
    assert "none of the retrieved papers" not in content, content
    for side, (arxiv_id, _, _) in zip(("OPT", "RWKV", "ViT"), PAPERS, strict=True):
        label = T.COMPARE_SIDE.format(side=side)
        assert label in content, content
        # The side's first quote, right under its label, cites its own paper.
        quote = content.split(label, 1)[1].strip().splitlines()[0]
        cited = [cards[int(n)] for n in re.findall(r"\[(\d+)\]", quote)]
        assert cited == [arxiv_id], (side, quote)

"""Follow-up chips are built from the question's analysis, never by pasting the question or a
title into a template: run the real pipeline (analysis, retrieval) on real questions."""

import re

import pytest

from chat.pipeline.answer import answer_events
from chat.pipeline.followups import suggest_followups
from tests.chat.conftest import CATALOGUE, NOW

QUESTIONS = {
    "author only": "papers by Ana Silva",
    "topic only": "What is known about diffusion models?",
    "window only": "papers from the last 2 years",
    "latest": "What are the latest papers on diffusion models?",
    "compare": "diffusion models vs graph neural networks",
    "author, topic and window": "What has Carla Diaz published since 2023 on diffusion transformers?",
    "scaffolded topic": "Tell me about consistency distillation",
    "a how question": "How does consistency distillation speed up sampling?",
}
TITLES = [row[1] for row in CATALOGUE]


async def _followups(question):
    """The chips as the runner makes them: from the analysis event's analysis and sources."""
    seen = {}
    async for event in answer_events(question, now=NOW):
        seen.setdefault(event["type"], event)
    query, analysis = seen["analysis"]["query"], seen["analysis"]["analysis"]
    return suggest_followups(query, analysis, seen["sources"]["sources"], today=NOW.date())


def _doubled(text):
    words = re.findall(r"[\w'-]+", text.lower())
    pairs = [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]
    repeated = [w for w, nxt in zip(words, words[1:], strict=False) if w == nxt]
    return repeated or [
        p for p in pairs if p in {"papers on papers", "on on", "papers papers", "on what"}
    ] or [w for w in ("papers on papers", "on papers by", "on what", "on how", "on tell")
          if w in text.lower()]


@pytest.mark.parametrize("kind", QUESTIONS)
async def test_follow_ups_are_whole_sentences_from_the_analysis(catalogue, settings, kind):
    settings.LLM_BACKEND = "extractive"
    question = QUESTIONS[kind]
    chips = await _followups(question)
    assert chips, kind
    for chip in chips:
        assert question.rstrip("?").lower() not in chip.lower(), (kind, chip)
        assert not _doubled(chip), (kind, chip, _doubled(chip))
        assert "…" not in chip and "“" not in chip, (kind, chip)  # no cut or quoted titles
        assert not any(title.lower() in chip.lower() for title in TITLES), (kind, chip)
        assert chip[0].isupper() and chip.endswith("?"), (kind, chip)
        assert "  " not in chip and " ?" not in chip, (kind, chip)


async def test_follow_ups_name_the_author_topic_and_window(catalogue, settings):
    settings.LLM_BACKEND = "extractive"
    author = await _followups("papers by Ana Silva")
    assert "What has Ana Silva published in the last year?" in author, author
    dated = await _followups("What has Carla Diaz published since 2023 on diffusion transformers?")
    assert "What was published on diffusion transformers before 2023?" in dated, dated
    latest = await _followups("What are the latest papers on diffusion models?")
    assert f"What was published on diffusion models in {NOW.year - 1}?" in latest, latest
    topic = await _followups("What is known about diffusion models?")
    assert "What are the most recent papers on diffusion models?" in topic, topic
    compare = await _followups("diffusion models vs graph neural networks")
    assert compare[:2] == [
        "What are the most recent papers on diffusion models?",
        "What are the most recent papers on graph neural networks?",
    ], compare


async def test_a_suggestion_asks_for_papers_like_the_first_cited(catalogue, settings):
    settings.LLM_BACKEND = "extractive"
    chips = await _followups("Tell me about consistency distillation")
    similar = [chip for chip in chips if chip.startswith("Which papers are similar to arXiv:")]
    assert similar, chips
    assert re.fullmatch(r"Which papers are similar to arXiv:\d{4}\.\d{5}\?", similar[0])

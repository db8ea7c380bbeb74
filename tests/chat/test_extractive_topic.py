"""The offline answer is judged on the question's topic, not on its date phrase."""

from chat.pipeline.answer import answer_events
from chat.pipeline.followups import suggest_followups
from tests.chat.conftest import NOW


async def _final(question):
    events = [event async for event in answer_events(question, now=NOW)]
    return events[-1]


async def test_a_dated_question_is_answered_from_papers_in_its_window(catalogue, settings):
    settings.LLM_BACKEND = "extractive"
    done = await _final("What is new on diffusion models between 2023 and 2025?")
    assert done["type"] == "done"
    # Before the fix, "since" and "2024" counted as question words no paper mentions, and the
    # extractive backend answered that the sources were not enough.
    assert "not enough" not in done["content"]
    assert "diffusion" in done["content"].lower()
    assert done["citations"], done


def test_follow_ups_reuse_the_bare_topic():
    sources = [{"title": "A", "authors": "Ana Silva"}, {"title": "B", "authors": "Bo Chen"}]
    suggestions = suggest_followups(
        "What is new on diffusion models", {"query": "What is new on diffusion models"}, sources
    )
    assert any("papers on diffusion models" in s for s in suggestions), suggestions
    assert not any("on What is new" in s for s in suggestions), suggestions

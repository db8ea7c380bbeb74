"""Turns of one thread, asked through chat.service as the socket asks them, so each follow-up is
read against the thread's saved answers: a new listing does not borrow the last question's topic,
an ellipsis after several follow-ups on a list's papers borrows the list's topic, and "who are the
authors?" names the authors of the paper just shown."""

import asyncio

import pytest

from chat import service
from chat.models import Message, Thread

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@pytest.fixture
def thread(owner, settings):
    settings.LLM_BACKEND = "extractive"
    settings.CHAT_RATE_LIMIT_PER_MINUTE = 0
    return Thread.objects.create(owner=owner)


async def ask(owner, thread, question: str) -> Message:
    running = await service.ask(owner, thread.pk, question)
    await asyncio.wait_for(running.done.wait(), 60)
    return await Message.objects.aget(pk=running.message_id)


def cited(answer: Message) -> set[str]:
    return {c["arxiv_id"] for c in answer.sources if c["number"] in answer.citations}


async def test_a_new_listing_after_a_specific_question_keeps_no_topic(catalogue, owner, thread):
    await ask(owner, thread, "How does the transformer reach state of the art BLEU?")
    answer = await ask(owner, thread, "papers since 2025")

    assert answer.query == "papers since 2025"
    # The catalogue's papers of 2025 on, whatever their topic.
    assert cited(answer) == {"2510.00003", "2511.00006"}


async def test_an_ellipsis_after_follow_ups_on_a_list_borrows_the_lists_topic(
    catalogue, owner, thread
):
    await ask(owner, thread, "papers on diffusion models")
    await ask(owner, thread, "which of these are about video?")
    await ask(owner, thread, "what datasets do they use?")
    await ask(owner, thread, "summarize the first one")
    answer = await ask(owner, thread, "what about before 2024?")

    assert "diffusion models" in answer.query, answer.query
    assert cited(answer) == {"2301.00001"}  # the one diffusion paper of 2023


async def test_who_are_the_authors_names_the_shown_papers_authors(catalogue, owner, thread):
    await ask(owner, thread, "summarize Attention is all you need for translation")
    answer = await ask(owner, thread, "Who are the authors?")

    assert answer.content.startswith("**Attention is all you need for translation**")
    assert "is by Noam Vaswani [" in answer.content
    assert cited(answer) == {"1706.00004"}

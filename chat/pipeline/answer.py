"""One answer as an async generator of events: analysis → sources → token* → done | error.

The events are the JSON envelopes of the WebSocket protocol (docs/WEBSOCKET.md), built by
chat.events, minus what only the running answer knows (message ids, offsets): chat.runner
iterates the generator for the socket and the API alike. Cancelling the task that iterates it
stops the LLM promptly.

Failures: if the configured backend fails before its first token, the fallback backend
(`LLM_FALLBACK`, the extractive one by default) answers instead and `done` says so; if it fails
after text was streamed, the partial text is kept and the generator ends with `error`.
"""

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Sequence
from datetime import date, datetime
from typing import Any

from django.conf import settings
from django.utils import timezone

from chat import events
from chat.llm import get_fallback, get_llm
from chat.llm.base import AnswerRequest, LLMError, SourceText
from chat.pipeline import prompts
from chat.pipeline.citations import check_citations
from chat.pipeline.rewrite import Turn, standalone_question
from chat.retrieval.search import MAX_QUERY_CHARS, SearchError, search
from chat.window import window_label

logger = logging.getLogger(__name__)

# Characters of each source's passage put in the prompt: an abstract fits; long passages are cut
# so eight sources stay well inside a small model's context window.
PASSAGE_CHARS = 1500


def _ms(start: float) -> int:
    return round((time.perf_counter() - start) * 1000)


def _day(value: Any) -> str:
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return str(value or "")[:10]


def source_card(number: int, hit) -> dict:
    """What a client shows for one source, and what the message row keeps."""
    passage = (hit.passage_text or f"{hit.title}\n\n{hit.abstract}").strip()
    return {
        "number": number,
        "paper_id": hit.paper_id,
        "arxiv_id": hit.arxiv_id,
        "title": " ".join(hit.title.split()),
        "authors": hit.authors_text,
        "published": _day(hit.published),
        "primary_category": hit.primary_category,
        "categories": list(hit.categories or []),
        "score": round(float(hit.score), 4),
        "passage": passage[:PASSAGE_CHARS],
        # The version whose text was read: what the card cites and links to.
        "version": hit.version,
        "cited_as": f"{hit.arxiv_id}v{hit.version}",
        "url": f"https://arxiv.org/abs/{hit.arxiv_id}v{hit.version}",
    }


def _source_texts(cards: Sequence[dict]):
    return [
        SourceText(
            number=c["number"],
            title=c["title"],
            authors=c["authors"],
            published=c["published"],
            text=c["passage"],
        )
        for c in cards
    ]


def _usage(stream, prompt_messages: list[dict], text: str) -> dict:
    """Token counts from the backend, else a 4-characters-per-token estimate marked as such."""
    usage = getattr(stream, "usage", None)
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    if prompt is not None and completion is not None:
        return {"prompt_tokens": prompt, "completion_tokens": completion, "estimated": False}
    prompt_chars = sum(len(m.get("content", "")) for m in prompt_messages)
    return {
        "prompt_tokens": prompt if prompt is not None else -(-prompt_chars // 4),
        "completion_tokens": completion if completion is not None else -(-len(text) // 4),
        "estimated": True,
    }


async def answer_events(
    question: str,
    *,
    history: Sequence[Turn] = (),
    now: datetime | None = None,
    backend=None,
    fallback=None,
    k: int | None = None,
) -> AsyncIterator[dict]:
    """Answer `question` (a thread's newest) given the thread's earlier `history`."""
    started = time.perf_counter()
    now = now or timezone.now()
    # The first call builds the backend (importing its SDK or loading a model): off the loop, so
    # a cold process does not freeze every other socket meanwhile.
    backend = backend or await asyncio.to_thread(get_llm)
    timings: dict[str, Any] = {}

    step = time.perf_counter()
    query = await standalone_question(question, history, backend=backend)
    timings["rewrite_ms"] = _ms(step)

    step = time.perf_counter()
    try:
        # A pasted abstract may be longer than a search takes; its start carries the topic.
        response = await search(query[:MAX_QUERY_CHARS], k=k or settings.CHAT_SOURCES, now=now)
    except SearchError as exc:
        timings["total_ms"] = _ms(started)
        yield events.outcome(
            "error", "", [], [], {}, backend.name, backend.model, timings,
            code="invalid_question", message=f"This question cannot be searched: {exc}.",
        )
        return
    timings["retrieval_ms"] = _ms(step)
    if response.timings:
        timings["retrieval"] = dict(response.timings)
    analysis = response.analysis.to_dict()
    analysis["vectors_pending"] = response.vectors_pending  # BM25 alone for unindexed papers
    yield events.analysis(query, analysis, window_label(analysis, now.date()))

    step = time.perf_counter()
    cards = [source_card(n, hit) for n, hit in enumerate(response.hits, start=1)]
    messages = prompts.answer_messages(query, _source_texts(cards), now.date())
    # The extractive backend matches sentences against the question's words: give it the topic
    # (the date phrase and filters cut out), or "since 2025" would count as unanswered words.
    # Model backends read the whole question from `messages`.
    topic = response.analysis.query or query
    request = AnswerRequest(question=topic, sources=_source_texts(cards), messages=messages)
    timings["prompt_ms"] = _ms(step)
    yield events.sources(cards)
    timings["overhead_ms"] = _ms(started)

    parts: list[str] = []
    stream = None
    used = backend

    def finish(kind: str, **extra) -> dict:
        checked = check_citations("".join(parts), len(cards))
        timings["total_ms"] = _ms(started)
        return events.outcome(
            kind, checked.text, checked.kept, checked.dropped,
            _usage(stream, messages, "".join(parts)), used.name, used.model, timings, **extra,
        )

    async def first_delta(candidate) -> tuple[Any, str | None]:
        """Start `candidate` and wait for its first text (None when it answered nothing)."""
        llm_stream = candidate.stream(request)
        try:
            async for delta in llm_stream:
                if delta:
                    return llm_stream, delta
            return llm_stream, None
        except BaseException:
            await llm_stream.aclose()
            raise

    try:
        try:
            stream, delta = await first_delta(backend)
        except LLMError as exc:
            fallback = fallback or await asyncio.to_thread(get_fallback)
            if fallback is None or fallback.name == backend.name:
                raise
            logger.warning("llm_fallback from=%s code=%s", backend.name, exc.code)
            timings["fallback_from"] = backend.name
            timings["fallback_code"] = exc.code
            used = fallback
            stream, delta = await first_delta(used)
    except LLMError as exc:
        yield finish("error", code=exc.code, message=exc.message)
        return

    try:
        if delta:
            timings["ttft_ms"] = _ms(started)
            parts.append(delta)
            yield events.delta(delta)
            async for delta in stream:
                if delta:
                    parts.append(delta)
                    yield events.delta(delta)
    except LLMError as exc:
        logger.warning("llm_failed_mid_stream backend=%s code=%s", used.name, exc.code)
        yield finish("error", code=exc.code, message=exc.message)
        return
    finally:
        if stream is not None:
            await stream.aclose()
    yield finish("done")

"""The types every LLM backend shares: what it is asked, what it streams back, how it fails.

Nothing here imports a backend, so the pipeline can import these names cheaply.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Protocol, runtime_checkable

from django.conf import settings

# Error codes an LLMError carries. The pipeline turns them into `error` events and may fall back
# to another backend when nothing was streamed yet.
LLM_UNAVAILABLE = "llm_unavailable"  # not configured, unreachable, or 5xx after every retry
LLM_RATE_LIMITED = "llm_rate_limited"  # 429 after every retry (or Retry-After beyond our budget)
LLM_TIMEOUT = "llm_timeout"  # no response in time, after every retry
LLM_BAD_REQUEST = "llm_bad_request"  # refused as given (4xx, prompt longer than the context)
LLM_BAD_OUTPUT = "llm_bad_output"  # the server sent something that is not a completion
LLM_FAILED_MID_STREAM = "llm_failed_mid_stream"  # broke after text was streamed; never retried


class LLMError(Exception):
    """A backend could not produce (all of) an answer.

    `code` is one of the LLM_* constants above; `message` is a sentence a user may read (it
    never contains keys or stack traces). Text already yielded before the error stays valid.
    """

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True)
class SourceText:
    """What a backend may quote; built by the pipeline from the retrieved papers."""

    number: int  # citation number [n]
    title: str
    authors: str
    published: str  # YYYY-MM-DD
    text: str  # the passage used: title and abstract, or a chunk of the full text
    arxiv_id: str = ""
    where: str = ""  # where in the paper a full-text passage is: "p. 7, 3.2 Training"
    section: str = ""  # the section a full-text passage starts in ("3.2 Training")
    quote: str = ""  # the passage's sentence that answers (the card highlights it)


@dataclass
class AnswerRequest:
    question: str
    sources: list[SourceText]
    # The full chat prompt (system + history + user) built by chat/pipeline/prompts.py.
    messages: list[dict]
    # Read at construction, not import, so `settings` overrides in tests apply.
    max_tokens: int = field(default_factory=lambda: settings.LLM_MAX_TOKENS)
    temperature: float = 0.2
    # What shape of answer the question asks for (chat.understanding.intent.Intent) and the
    # question's analysis dict (authors, categories, arxiv_id, window). Optional: without them the
    # extractive backend answers as it always did.
    intent: Any = None
    analysis: dict | None = None
    # "papers like <id>": the named paper (not one of the numbered sources, so never cited).
    seed: SourceText | None = None
    today: date | None = None  # for "the newest paper on this is from ..."
    # The extractive backend's answer when the pipeline already composed it (to mark on each
    # card the sentence the answer quotes from it, before the cards are sent): streamed as is.
    composed: str | None = None


@dataclass
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class LLMStream:
    """The text deltas of one answer, plus what is only known once it ends.

    Iterate it with `async for delta in stream`; afterwards `stream.usage` holds the token counts
    (None where the backend cannot tell) and `stream.finish_reason` why it ended ("stop",
    "length", ...). These live on the stream, not the backend, because one backend object serves
    many concurrent answers.

    Stop early with `await stream.aclose()` (or `async with backend.stream(req) as stream:`);
    cancelling the task that iterates works too. Either stops the generation promptly.
    """

    def __init__(self, produce: Callable[[LLMStream], AsyncIterator[str]]):
        self.usage: Usage | None = None
        self.finish_reason: str | None = None
        self._deltas = produce(self)

    def __aiter__(self) -> LLMStream:
        return self

    async def __anext__(self) -> str:
        return await self._deltas.__anext__()

    async def aclose(self) -> None:
        with contextlib.suppress(RuntimeError):  # already closing from another task
            await self._deltas.aclose()

    async def __aenter__(self) -> LLMStream:
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()


@runtime_checkable
class LLMBackend(Protocol):
    name: str  # "openai" | "local" | "extractive"
    model: str  # e.g. "gpt-4o-mini", "SmolLM2-135M-Instruct.Q4_1.gguf", "extractive"
    # False when complete() always raises LLMError(LLM_UNAVAILABLE) (the extractive backend):
    # callers then use their rule-based path instead.
    supports_complete: bool
    # True when the model follows instructions well enough to rewrite a follow-up, read a
    # question's filters, triage it or rank papers (an OpenAI-compatible model). The tiny local
    # model answers but does none of these: it turned "hi" into a question about hallucination.
    follows_instructions: bool

    def stream(self, request: AnswerRequest) -> LLMStream:
        """Start answering; iterate the result for text deltas. Raises LLMError while iterating."""
        ...

    async def complete(
        self, messages: list[dict], *, max_tokens: int = 300, temperature: float = 0.0
    ) -> str:
        """One non-streamed reply (follow-up rewriting, query analysis). Raises LLMError."""
        ...

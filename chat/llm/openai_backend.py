"""The `openai` backend: OpenAI, or any OpenAI-compatible server (vLLM, Ollama, llama.cpp).

Retries are ours (the SDK's are switched off): exponential backoff with jitter on 429, 408/409,
5xx, timeouts and connection errors, honouring Retry-After, capped in total, and only while
nothing has been streamed yet. Once a word reached the caller a failure is final
(`llm_failed_mid_stream`): retrying would repeat the words already shown.

HTTP goes through aiohttp (the SDK's `DefaultAioHttpClient`), not httpx: with many answers
streaming at once, reading the body is most of what an answer costs the event loop, and aiohttp
reads it in about half the CPU (docs/BENCHMARKS.md, `bench_chat concurrent`, sessions 9-10). Two
things the SDK's transport gets wrong are put right here: it reports every aiohttp connection
error as a connect *timeout* (`_timed_out`), and an aiohttp session must be closed on its own
event loop (`_close_with_loop`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from collections.abc import AsyncIterator

import aiohttp
import openai
import pydantic
from django.conf import settings

# The SDK's own lists of what its HTTP client raises on a timeout or a broken connection (httpx2
# or httpx), so a stream read by `_sse_chunks` maps failures exactly as the SDK's stream does.
from openai._httpx2 import request_exceptions, timeout_exceptions

from .base import (
    LLM_BAD_OUTPUT,
    LLM_BAD_REQUEST,
    LLM_FAILED_MID_STREAM,
    LLM_RATE_LIMITED,
    LLM_TIMEOUT,
    LLM_UNAVAILABLE,
    AnswerRequest,
    LLMError,
    LLMStream,
    Usage,
)
from .retry import RetryPolicy, retry_after_seconds

logger = logging.getLogger("chat.llm")

_RETRYABLE_STATUS = {408, 409, 429}


class _Failure:
    """What went wrong with one attempt, and whether another attempt may help."""

    def __init__(self, code: str, message: str, retryable: bool, retry_after: float | None = None):
        self.code, self.message = code, message
        self.retryable, self.retry_after = retryable, retry_after

    def error(self) -> LLMError:
        return LLMError(self.code, self.message)


def _timed_out(exc: BaseException) -> bool:
    """Whether a timeout the SDK reports is one. Its aiohttp transport maps every
    `aiohttp.ClientConnectionError` (a refused connection, a server that hung up) to httpx's
    `ConnectTimeout`; the aiohttp error it came from is kept as the cause, and only aiohttp's
    timeouts (`ServerTimeoutError`, `SocketTimeoutError`: TimeoutErrors) are timeouts."""
    seen = exc.__cause__
    while seen is not None:
        if isinstance(seen, aiohttp.ClientError):
            return isinstance(seen, TimeoutError)
        seen = seen.__cause__
    return True


def _classify(exc: Exception) -> _Failure:
    # APITimeoutError subclasses APIConnectionError: test it first.
    if isinstance(exc, openai.APITimeoutError) and _timed_out(exc):
        return _Failure(LLM_TIMEOUT, "The language model did not answer in time.", True)
    if isinstance(exc, openai.APIConnectionError):
        return _Failure(LLM_UNAVAILABLE, "The language model service could not be reached.", True)
    if isinstance(exc, openai.APIResponseValidationError):
        return _Failure(
            LLM_BAD_OUTPUT, "The language model service sent an unreadable reply.", False
        )
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        retry_after = retry_after_seconds(exc.response.headers)
        if status == 429:
            return _Failure(
                LLM_RATE_LIMITED,
                "The language model service is busy (rate limited).",
                True,
                retry_after,
            )
        if status >= 500 or status in _RETRYABLE_STATUS:
            return _Failure(
                LLM_UNAVAILABLE, f"The language model service failed ({status}).", True, retry_after
            )
        if status in (401, 403):
            return _Failure(
                LLM_UNAVAILABLE,
                f"The language model service refused our credentials ({status}).",
                False,
            )
        return _Failure(
            LLM_BAD_REQUEST, f"The language model service refused the request ({status}).", False
        )
    if isinstance(exc, openai.APIError):  # an error event inside a stream
        return _Failure(LLM_UNAVAILABLE, "The language model service reported an error.", True)
    # Not JSON, or JSON of the wrong shape: a broken server, retrying will not fix it.
    return _Failure(LLM_BAD_OUTPUT, "The language model service sent an unreadable reply.", False)


# What a broken stream can raise besides the SDK's own errors.
_ATTEMPT_ERRORS = (openai.APIError, ValueError, TypeError, AttributeError, pydantic.ValidationError)


class _BadOutput(ValueError):
    pass


async def _sse_chunks(response) -> AsyncIterator:
    """The JSON chunks of a streamed chat completion, read from the HTTP body.

    The SDK's stream builds a pydantic `ChatCompletionChunk` for every chunk: with many answers
    streaming at once that was the largest single cost on the event loop (profiled with
    `bench_chat concurrent --profile`; 32 vs 14 CPU-ms for a 61-chunk answer read here). The
    SDK's rules are kept: `data:` lines of one event are joined, `[DONE]` ends the stream, an
    `error` object in the stream is an `openai.APIError`, timeouts and broken connections are
    `APITimeoutError` / `APIConnectionError`, and JSON that does not parse is a ValueError."""
    data: list[str] = []

    def event():
        text = "\n".join(data)
        data.clear()
        chunk = json.loads(text)
        if isinstance(chunk, dict) and chunk.get("error"):
            error = chunk["error"]
            message = error.get("message") if isinstance(error, dict) else None
            if not message or not isinstance(message, str):
                message = "An error occurred during streaming"
            raise openai.APIError(message=message, request=response.request, body=error)
        return chunk

    try:
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(" ") else value)
            elif not line and data:  # a blank line ends an event
                if data[0].startswith("[DONE]"):
                    return
                yield event()
        if data and not data[0].startswith("[DONE]"):
            yield event()
    except timeout_exceptions() as err:
        raise openai.APITimeoutError(request=response.request) from err
    except request_exceptions() as err:
        raise openai.APIConnectionError(request=response.request) from err


async def _close_with_loop(client: openai.AsyncOpenAI) -> AsyncIterator[None]:
    """Closes `client` (its aiohttp session and connections) when the event loop it was started
    on shuts down. A loop's async generators are closed on it before it closes
    (`loop.shutdown_asyncgens`: asyncio.run, asgiref's async_to_sync, pytest-asyncio), so each
    per-loop client is closed where it must be; dropped with its loop instead, aiohttp would log
    "Unclosed client session" for each."""
    try:
        yield
    finally:
        await client.close()


class OpenAIBackend:
    name = "openai"
    supports_complete = True
    follows_instructions = True

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        model: str | None = None,
        timeout: float | None = None,
        retry: RetryPolicy | None = None,
    ):
        self.api_key = settings.OPENAI_API_KEY if api_key is None else api_key
        self.base_url = settings.OPENAI_BASE_URL if base_url is None else base_url
        self.model = model or settings.LLM_MODEL
        self.timeout = settings.OPENAI_TIMEOUT if timeout is None else timeout
        self.retry = retry or RetryPolicy.from_settings()
        # An AsyncOpenAI client pools connections bound to the event loop that opened them, and
        # code may run under several loops (Daphne's, async_to_sync in a job): one per loop.
        self._clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    async def _client(self) -> openai.AsyncOpenAI:
        if not self.api_key:
            raise LLMError(LLM_UNAVAILABLE, "The OpenAI backend has no API key (OPENAI_API_KEY).")
        loop = asyncio.get_running_loop()
        kept = self._clients.get(loop)
        if kept is None:
            client = openai.AsyncOpenAI(
                api_key=self.api_key,
                base_url=self.base_url or None,
                timeout=self.timeout,
                max_retries=0,  # our policy, see the module docstring
                http_client=(
                    openai.DefaultAioHttpClient(timeout=self.timeout)
                    if settings.OPENAI_HTTP_CLIENT == "aiohttp"
                    else None  # the SDK's own httpx client
                ),
            )
            closer = _close_with_loop(client)
            await anext(closer)  # started on this loop: the loop now closes it at its end
            kept = self._clients[loop] = (client, closer)
        return kept[0]

    async def _wait_or_raise(self, failure: _Failure, retry_number: int, waited: float) -> float:
        """Sleep before the next attempt and return the seconds slept, or raise the failure."""
        wait = None
        if failure.retryable:
            wait = self.retry.next_wait(retry_number, waited, failure.retry_after)
        if wait is None:
            raise failure.error()
        logger.warning(
            "llm_retry backend=openai model=%s retry=%d wait_s=%.2f code=%s",
            self.model,
            retry_number + 1,
            wait,
            failure.code,
        )
        await asyncio.sleep(wait)
        return wait

    # --- streaming --------------------------------------------------------------------------------
    def stream(self, request: AnswerRequest) -> LLMStream:
        return LLMStream(lambda out: self._stream(request, out))

    async def _stream(self, request: AnswerRequest, out: LLMStream) -> AsyncIterator[str]:
        client = await self._client()
        waited, retry_number = 0.0, 0
        while True:
            streamed = False
            try:
                raw = await client.chat.completions.with_raw_response.create(
                    model=self.model,
                    messages=request.messages,
                    # max_tokens rather than max_completion_tokens: every compatible server
                    # (vLLM, Ollama, llama.cpp) understands it.
                    max_tokens=request.max_tokens,
                    temperature=request.temperature,
                    stream=True,
                    stream_options={"include_usage": True},
                )
                response = raw.http_response
                try:
                    async for chunk in _sse_chunks(response):
                        delta = self._read_chunk(chunk, out)
                        if delta:
                            streamed = True
                            yield delta
                finally:
                    await response.aclose()
                if out.finish_reason is None:
                    # The body ended without saying why: the server stopped mid-answer.
                    raise openai.APIConnectionError(
                        message="stream ended early", request=response.request
                    )
                return
            except _ATTEMPT_ERRORS as exc:
                failure = _classify(exc)
                if streamed:
                    if failure.code != LLM_BAD_OUTPUT:
                        failure = _Failure(
                            LLM_FAILED_MID_STREAM,
                            "The language model stopped in the middle of the answer.",
                            False,
                        )
                    logger.warning(
                        "llm_failed backend=openai model=%s code=%s after_text=1 (%s)",
                        self.model,
                        failure.code,
                        exc,
                    )
                    raise failure.error() from exc
                out.finish_reason = None
                waited += await self._wait_or_raise(failure, retry_number, waited)
                retry_number += 1

    @staticmethod
    def _read_chunk(chunk, out: LLMStream) -> str:
        """The text of one streamed chunk (parsed JSON); records usage and the finish reason on
        `out`."""
        if not isinstance(chunk, dict):
            raise _BadOutput("chunk is not an object")
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            out.usage = Usage(usage.get("prompt_tokens"), usage.get("completion_tokens"))
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            raise _BadOutput("chunk without a list of choices")
        text = ""
        for choice in choices[:1]:  # we never ask for n > 1
            if not isinstance(choice, dict):
                raise _BadOutput("chunk choice is not an object")
            delta = choice.get("delta")
            content = delta.get("content") if isinstance(delta, dict) else None
            if content is not None and not isinstance(content, str):
                raise _BadOutput("chunk content is not text")
            text = content or ""
            if choice.get("finish_reason"):
                out.finish_reason = choice["finish_reason"]
        return text

    # --- one-shot ---------------------------------------------------------------------------------
    async def complete(
        self, messages: list[dict], *, max_tokens: int = 300, temperature: float = 0.0
    ) -> str:
        client = await self._client()
        waited, retry_number = 0.0, 0
        while True:
            try:
                response = await client.chat.completions.create(
                    model=self.model,
                    messages=messages,
                    max_tokens=max_tokens,
                    temperature=temperature,
                )
                content = response.choices[0].message.content
                if not isinstance(content, str):
                    raise _BadOutput("completion without text")
                return content
            except (*_ATTEMPT_ERRORS, IndexError) as exc:
                waited += await self._wait_or_raise(_classify(exc), retry_number, waited)
                retry_number += 1

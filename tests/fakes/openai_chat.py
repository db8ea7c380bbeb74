"""A local OpenAI-compatible HTTP server for tests and benchmarks: the edge of the world.

It serves `POST /v1/chat/completions` (stream true or false) on 127.0.0.1 with a free port, in a
background thread, so the code under test uses the real `openai` SDK over real HTTP. Each
request is answered by the next scripted behaviour, then by `default`; every request is recorded.

Use it directly (tests, benchmarks, a management command)::

    from tests.fakes.openai_chat import FakeOpenAI, Reply, Fail, BreakMidStream, Malformed, Slow

    with FakeOpenAI() as fake:                 # started on 127.0.0.1:<free port>
        fake.base_url                          # "http://127.0.0.1:PORT/v1" -> OPENAI_BASE_URL
        fake.default = Reply("Hello [1].", tokens_per_second=30)   # every unscripted request
        fake.script(Fail(429, retry_after="0.2"), Reply("ok"))     # the next two requests
        ...                                    # point the code at fake.base_url, any API key
        fake.requests[-1].body["messages"]     # what the client sent
        fake.chat_requests()                   # only the /v1/chat/completions ones

or through the `fake_openai` pytest fixture in tests/chat/llm/conftest.py (copy its three lines into
your own conftest.py, or `from tests.chat.llm.conftest import fake_openai`). With Django settings::

    settings.LLM_BACKEND = "openai"; settings.OPENAI_API_KEY = "test"
    settings.OPENAI_BASE_URL = fake.base_url

Behaviours:
- `Reply(text, tokens_per_second=None, first_token_delay=0)`: a normal completion; `text` may be
  a function of the request body. Streams one word per chunk, then a usage chunk when the client
  asked for `stream_options.include_usage`.
- `Fail(status, retry_after=None, message=...)`: an HTTP error before any stream (429, 500...).
- `BreakMidStream(text, after_chunks=3, how="close"|"error_event"|"end")`: streams some words,
  then drops the connection (no end of the chunked body), or sends an SSE error event as OpenAI
  does for a server error after the response started, or ends the body early but cleanly.
- `Malformed(text_before, payload)`: streams some words, then a chunk that is not valid JSON.
- `Slow(seconds, then=Reply(...))`: waits before answering at all (client timeouts).

It is a plain `ThreadingHTTPServer` (one thread per connection, chunked transfer encoding,
keep-alive), good for a hundred concurrent streams.
"""

from __future__ import annotations

import json
import re
import socket
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHAT_PATH = "/v1/chat/completions"


# --- Behaviours -----------------------------------------------------------------------------------
@dataclass
class Reply:
    text: str | Callable[[dict], str] = "Hello from the fake model."
    tokens_per_second: float | None = None  # None: as fast as the socket takes them
    first_token_delay: float = 0.0  # seconds between the headers and the first word
    finish_reason: str = "stop"


@dataclass
class Fail:
    status: int = 500
    retry_after: str | None = None  # the Retry-After header, e.g. "0.2" or "2"
    message: str = "The fake server failed on purpose."
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class BreakMidStream:
    text: str = "This answer will be cut off in the middle of a sentence."
    after_chunks: int = 3  # words sent before the break
    # "close": drop the connection; "error_event": an SSE error, then the end of the body;
    # "end": end the body cleanly but early (no finish_reason, no [DONE]), as a proxy might.
    how: str = "close"
    tokens_per_second: float | None = None


# How long a BreakMidStream(how="close") waits after its last word before it hangs up.
HANG_UP_AFTER = 0.3


@dataclass
class Malformed:
    text_before: str = "Partial answer"
    payload: bytes = b"data: {this is not json\n\n"


@dataclass
class Slow:
    seconds: float = 5.0
    then: Reply | Fail | BreakMidStream | Malformed = field(default_factory=Reply)


Behaviour = Reply | Fail | BreakMidStream | Malformed | Slow


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict | None  # parsed JSON, None when it was not JSON
    behaviour: str  # the class name of the behaviour that answered
    completed: bool = False  # the whole response was written
    client_gone: bool = False  # the client hung up before the response ended
    received_at: float = field(default_factory=time.monotonic)

    @property
    def stream(self) -> bool:
        return bool(self.body and self.body.get("stream"))


def words(text: str) -> list[str]:
    """The streamed deltas of a text: each word with the whitespace before it."""
    return re.findall(r"\s*\S+|\s+$", text)


# --- The server -----------------------------------------------------------------------------------
class FakeOpenAI:
    def __init__(self, default: Behaviour | None = None, model: str = "fake-gpt"):
        self.default: Behaviour = default or Reply()
        self.model = model
        self.requests: list[RecordedRequest] = []
        self._script: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle
    def start(self) -> FakeOpenAI:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = _Server(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in Slow / tokens_per_second
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "start() the server first"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # scripting and inspection
    def server_env(self) -> dict[str, str]:
        """The environment of a live server answering with this fake (and the tests' hashing
        embedder, which their catalogues are built with)."""
        return {
            "EMBEDDING_BACKEND": "hashing",
            "LLM_BACKEND": "openai",
            "OPENAI_API_KEY": "test-key",
            "OPENAI_BASE_URL": self.base_url,
            "LLM_MODEL": "fake-gpt",
        }

    def script(self, *behaviours: Behaviour) -> None:
        """Answer the next requests with these behaviours, in order, then with `default`."""
        with self._lock:
            self._script.extend(behaviours)

    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == CHAT_PATH]

    def _next_behaviour(self) -> Behaviour:
        with self._lock:
            return self._script.popleft() if self._script else self.default

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _sleep(self, seconds: float) -> bool:
        """Sleep unless the server stops meanwhile; True when it is stopping."""
        return self._stopping.wait(seconds) if seconds > 0 else self._stopping.is_set()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # a hundred clients connecting at once must not be refused

    def handle_error(self, request, client_address):
        # A client hanging up (timeouts, cancelled streams) is part of what this server tests.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _ClientGone(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked bodies, like the real API
    fake: FakeOpenAI

    def log_message(self, format, *args):  # keep test output clean
        pass

    def do_GET(self):
        self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        if self.path != CHAT_PATH:
            self._record_and(None, headers, body)
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        behaviour = self.fake._next_behaviour()
        record = self._record_and(behaviour, headers, body)
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self._json(400, {"error": {"message": "messages must be a list", "type": "invalid"}})
            record.completed = True
            return
        try:
            self._answer(behaviour, body)
            record.completed = True
        except _ClientGone:
            record.client_gone = True
            self.close_connection = True

    def _record_and(self, behaviour, headers, body) -> RecordedRequest:
        record = RecordedRequest(
            "POST", self.path, headers, body, type(behaviour).__name__ if behaviour else "none"
        )
        self.fake._record(record)
        return record

    # one method per behaviour
    def _answer(self, behaviour: Behaviour, body: dict) -> None:
        if isinstance(behaviour, Slow):
            if self.fake._sleep(behaviour.seconds):
                raise _ClientGone  # the server is stopping
            behaviour = behaviour.then
        if isinstance(behaviour, Fail):
            extra = dict(behaviour.headers)
            if behaviour.retry_after is not None:
                extra["Retry-After"] = behaviour.retry_after
            kind = "rate_limit_exceeded" if behaviour.status == 429 else "server_error"
            error = {"message": behaviour.message, "type": kind, "code": kind}
            self._json(behaviour.status, {"error": error}, extra)
        elif isinstance(behaviour, Reply):
            text = behaviour.text(body) if callable(behaviour.text) else behaviour.text
            if body.get("stream"):
                self._stream(
                    body,
                    words(text),
                    behaviour.tokens_per_second,
                    behaviour.first_token_delay,
                    behaviour.finish_reason,
                )
            else:
                self._json(200, self._completion(body, text, behaviour.finish_reason))
        elif isinstance(behaviour, BreakMidStream):
            self._break(body, behaviour)
        elif isinstance(behaviour, Malformed):
            self._malformed(body, behaviour)
        else:
            raise TypeError(f"unknown behaviour {behaviour!r}")

    def _stream(self, body, deltas, tokens_per_second, first_delay, finish_reason) -> None:
        chunk_id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        self._start_chunked()
        self._event(self._chunk(chunk_id, {"role": "assistant", "content": ""}))
        if self.fake._sleep(first_delay):
            raise _ClientGone
        for i, delta in enumerate(deltas):
            if i and tokens_per_second and self.fake._sleep(1 / tokens_per_second):
                raise _ClientGone
            self._event(self._chunk(chunk_id, {"content": delta}))
        self._event(self._chunk(chunk_id, {}, finish_reason))
        if (body.get("stream_options") or {}).get("include_usage"):
            usage_chunk = self._chunk(chunk_id, None)
            usage_chunk["usage"] = self._usage(body, len(deltas))
            self._event(usage_chunk)
        self._send_chunk(b"data: [DONE]\n\n")
        self._send_chunk(b"")  # the end of the chunked body

    def _break(self, body, behaviour: BreakMidStream) -> None:
        deltas = words(behaviour.text)[: behaviour.after_chunks]
        if not body.get("stream"):
            self._hang_up()
            return
        chunk_id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        self._start_chunked()
        for i, delta in enumerate(deltas):
            if (
                i
                and behaviour.tokens_per_second
                and self.fake._sleep(1 / behaviour.tokens_per_second)
            ):
                raise _ClientGone
            self._event(self._chunk(chunk_id, {"content": delta}))
        if behaviour.how == "end":  # a clean end of the body, without finish_reason or [DONE]
            self._send_chunk(b"")
        elif behaviour.how == "error_event":
            error = {
                "message": "The server had an error while processing your request.",
                "type": "server_error",
                "code": 500,
            }
            self._event({"error": error})
            self._send_chunk(b"")
        else:
            # A moment after the last word, as an upstream that crashes mid-answer: words and
            # hang-up in one read made aiohttp raise the error before handing over the words
            # it held (its StreamReader raises a set exception ahead of its buffer), so under
            # load the drill's partial answer came out one word long.
            if self.fake._sleep(HANG_UP_AFTER):
                raise _ClientGone
            self._hang_up()

    def _malformed(self, body, behaviour: Malformed) -> None:
        if not body.get("stream"):
            payload = b"{this is not json"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self._write(payload)
            return
        chunk_id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        self._start_chunked()
        for delta in words(behaviour.text_before):
            self._event(self._chunk(chunk_id, {"content": delta}))
        self._send_chunk(behaviour.payload)
        self._send_chunk(b"data: [DONE]\n\n")
        self._send_chunk(b"")

    # OpenAI-shaped bodies
    def _chunk(self, chunk_id: str, delta: dict | None, finish_reason: str | None = None) -> dict:
        choices = (
            []
            if delta is None
            else [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}]
        )
        return {
            "id": chunk_id,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": self.fake.model,
            "choices": choices,
        }

    def _completion(self, body: dict, text: str, finish_reason: str) -> dict:
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.fake.model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": finish_reason,
                    "logprobs": None,
                    "message": {"role": "assistant", "content": text},
                }
            ],
            "usage": self._usage(body, len(words(text))),
        }

    @staticmethod
    def _usage(body: dict, completion_tokens: int) -> dict:
        # A word count stands in for tokens: tests only need stable, plausible numbers.
        prompt = sum(
            len(str(m.get("content") or "").split())
            for m in body["messages"]
            if isinstance(m, dict)
        )
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens,
        }

    # HTTP plumbing
    def _json(self, status: int, payload: dict, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self._write(data)

    def _start_chunked(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self._flush()

    def _event(self, payload: dict) -> None:
        self._send_chunk(b"data: " + json.dumps(payload).encode() + b"\n\n")

    def _send_chunk(self, data: bytes) -> None:
        self._write(b"%x\r\n%s\r\n" % (len(data), data))

    def _write(self, data: bytes) -> None:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError) as exc:
            raise _ClientGone from exc

    def _flush(self) -> None:
        try:
            self.wfile.flush()
        except OSError as exc:
            raise _ClientGone from exc

    def _hang_up(self) -> None:
        """Drop the connection abruptly, as a crashed upstream or a proxy reset would."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

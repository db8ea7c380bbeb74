"""A local stand-in for OpenAI's `POST /v1/embeddings`, for tests: the edge of the world.

It answers on 127.0.0.1 (a free port) from a background thread, so the code under test uses the
real `openai` SDK over real HTTP. Vectors are deterministic: a text always gets the same vector,
derived from its sha256, at the `dimensions` the client asked for (float or base64 encoded, as
the SDK requests). `fail_next(status, after=n)` scripts an error for the request that follows n
more good answers; every request is recorded. Errors carry `retry-after-ms: 10`, so the SDK's
retries do not slow tests down.

    with FakeOpenAIEmbeddings() as fake:
        fake.fail_next(500)                    # the next request gets a 500, then normal answers
        OpenAIEmbedder(api_key="test", base_url=fake.base_url).embed_query("hi")
        fake.requests                          # [(status, body), ...]
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

PATH = "/v1/embeddings"


def fake_vector(text: str, dimensions: int) -> np.ndarray:
    """The unit vector the fake server returns for `text`."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    vector = np.random.default_rng(seed).standard_normal(dimensions).astype(np.float32)
    return vector / np.linalg.norm(vector)


class FakeOpenAIEmbeddings:
    def __init__(self):
        self.requests: list[tuple[int, dict]] = []
        # One entry per upcoming request: None answers normally, (status, payload) fails.
        self._script: deque[tuple[int, dict] | None] = deque()
        self._lock = threading.Lock()
        self.wrong_dimensions = False  # answer with one dimension too few
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                status, payload = fake._answer(self.path, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                if status >= 400:
                    self.send_header("retry-after-ms", "10")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def fail_next(
        self, status: int, *, after: int = 0, message: str = "Failed on purpose."
    ) -> None:
        """Fail the request that comes after `after` more normal answers (scripted in order)."""
        error = {"error": {"message": message, "type": "server_error", "code": None}}
        with self._lock:
            self._script.extend([None] * after)
            self._script.append((status, error))

    def _answer(self, path: str, body: dict) -> tuple[int, dict]:
        with self._lock:
            if path != PATH:
                status, payload = 404, {"error": {"message": f"no route {path}"}}
            elif self._script and (failure := self._script.popleft()) is not None:
                status, payload = failure
            else:
                status, payload = self._embeddings(body)
            self.requests.append((status, body))
        return status, payload

    def _embeddings(self, body: dict) -> tuple[int, dict]:
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            return 400, {"error": {"message": "input must be a string or a list of strings"}}
        dimensions = int(body.get("dimensions") or 1536) - (1 if self.wrong_dimensions else 0)
        data = []
        for i, text in enumerate(texts):
            vector = fake_vector(text, dimensions)
            if body.get("encoding_format") == "base64":
                encoded = base64.b64encode(vector.astype("<f4").tobytes()).decode()
            else:
                encoded = vector.tolist()
            data.append({"object": "embedding", "index": i, "embedding": encoded})
        tokens = sum(len(t.split()) for t in texts)
        return 200, {
            "object": "list",
            "data": data,
            "model": body.get("model", ""),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def __enter__(self) -> FakeOpenAIEmbeddings:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

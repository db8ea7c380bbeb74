"""Benchmark: what the HTTP API adds on top of the engine, over a real daphne on loopback.

Not collected by the test suite (the file name does not start with `test_`); run it by hand:

    scripts/test tests/bench/bench_api.py -s -p no:logging

Catalogue: the five papers of tests/api/conftest.py, embedded with the hashing embedder; the LLM
is the local fake OpenAI server streaming 200 words a second. Baselines are measured in the same
run: `search()` called in-process for /api/search/, and the JSON ask for the event stream.
Prints medians of N sequential requests; no assertion on time.
"""

import statistics
import time

import httpx
import pytest
from asgiref.sync import async_to_sync
from rest_framework.authtoken.models import Token

from chat.models import Thread
from chat.retrieval.search import search
from tests.fakes.openai_chat import FakeOpenAI, Reply
from tests.live_server import LiveServer

N = 30
ASKS = 15
QUESTION = "diffusion models for text"


def median_ms(fn, n: int) -> float:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def stream_timings(http: httpx.Client, thread) -> tuple[float, float, float]:
    """ms to the first event, to the first token, and to done."""
    started = time.perf_counter()
    first = token = None
    with http.stream("POST", f"/api/threads/{thread.pk}/messages/", json={"text": QUESTION},
                     headers={"Accept": "text/event-stream"}) as response:
        for line in response.iter_lines():
            if not line.startswith("event: "):
                continue
            now = (time.perf_counter() - started) * 1000
            kind = line[len("event: "):]
            first = first if first is not None else now
            if kind == "token" and token is None:
                token = now
            if kind in ("done", "error"):
                return first, token, now
    raise AssertionError("the stream ended without done")


@pytest.mark.django_db(transaction=True)
def test_api_latency(indexed_papers, owner):
    with FakeOpenAI() as fake:
        fake.default = Reply("Diffusion models generate text [1]. They denoise [2].",
                             tokens_per_second=200)
        env = {
            "EMBEDDING_BACKEND": "hashing", "LLM_BACKEND": "openai", "OPENAI_API_KEY": "k",
            "OPENAI_BASE_URL": fake.base_url, "OPENAI_MAX_RETRIES": "0", "LLM_MODEL": "fake-gpt",
            "CHAT_RATE_LIMIT_PER_MINUTE": "0", "SEARCH_RATE_LIMIT_PER_MINUTE": "0",
        }
        headers = {"Authorization": f"Token {Token.objects.create(user=owner).key}"}
        with LiveServer(env=env) as server, httpx.Client(
            base_url=server.url, timeout=30, headers=headers
        ) as http:
            for _ in range(3):  # warm up both processes
                http.get("/api/papers/")
                http.get("/api/search/", params={"q": QUESTION})
                async_to_sync(search)(QUESTION, k=10)
            direct = median_ms(lambda: async_to_sync(search)(QUESTION, k=10), N)
            api_search = median_ms(
                lambda: http.get("/api/search/", params={"q": QUESTION}).raise_for_status(), N
            )
            papers = median_ms(lambda: http.get("/api/papers/").raise_for_status(), N)
            detail = median_ms(lambda: http.get("/api/papers/hep-th/9901001/").raise_for_status(), N)
            streams, answers = [], []
            for _ in range(ASKS):
                streams.append(stream_timings(http, Thread.objects.create(owner=owner)))
                thread = Thread.objects.create(owner=owner)
                started = time.perf_counter()
                http.post(f"/api/threads/{thread.pk}/messages/", json={"text": QUESTION})
                answers.append((time.perf_counter() - started) * 1000)

    first, token, done = (statistics.median(column) for column in zip(*streams, strict=True))
    json_ask = statistics.median(answers)
    print(
        f"\nGET /api/papers/ p50 {papers:.1f} ms; GET /api/papers/<old-style id>/ {detail:.1f} ms"
        f"\nGET /api/search/ p50 {api_search:.1f} ms vs search() in-process {direct:.1f} ms"
        f" (x{api_search / direct:.2f})"
        f"\nSSE ask: first event {first:.1f} ms, first token {token:.1f} ms, done {done:.1f} ms;"
        f" JSON ask {json_ask:.1f} ms (SSE done / JSON = x{done / json_ask:.2f})"
    )

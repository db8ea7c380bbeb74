"""Fixtures for the operations drills: Redis, daphne processes, the fake LLM, logged-in users.

The catalogue (a few real papers embedded with the hashing embedder) is the chat tests' own
fixture, reused here so both suites search the same papers.
"""

import contextlib
import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from chat.models import Thread
from tests.chat.conftest import catalogue  # noqa: F401  (a fixture, used by the drills)
from tests.fake_openai import FakeOpenAI, Reply
from tests.live_server import LiveServer

# The answer the fake model streams: cites the first source only, so the text the sockets
# rebuild from tokens is also the saved text (no citation is dropped).
ANSWER = (
    "Diffusion transformers replace the U-Net with a transformer over latent patches [1]. "
    "Scaling the transformer improves image quality, and video models add temporal attention "
    "to keep frames consistent [1]. Distillation then cuts sampling to a few steps [1]."
)
QUESTION = "What is new on diffusion transformers for images?"
DEFAULT_REDIS = "redis://127.0.0.1:6379"


def redis_base_url() -> str:
    return os.environ.get("REDIS_URL") or DEFAULT_REDIS


@pytest.fixture(scope="session")
def redis_url() -> str:
    """A Redis database for this test run (a number of its own, so parallel runs and a developer's
    `scripts/run` do not share queues), or skip with the reason."""
    import redis

    base = redis_base_url().rstrip("/")
    base = base.rsplit("/", 1)[0] if base.count("/") > 2 else base  # drop a /db suffix
    url = f"{base}/{1 + os.getpid() % 15}"
    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except redis.RedisError as exc:
        pytest.skip(f"needs Redis at {url} (set REDIS_URL; runs on CI machines): {exc}")
    return url


def unique_prefix(label: str) -> str:
    """A channel-layer prefix no other test (or run) uses: their groups never meet."""
    return f"ops-{label}-{uuid.uuid4().hex[:8]}"


def app_env(fake: FakeOpenAI, **extra: str) -> dict[str, str]:
    """The environment of a daphne (or job) process for the drills: the fake LLM, the hashing
    embedder the catalogue was built with, the extractive fallback, no per-user ask limit."""
    return {
        "EMBEDDING_BACKEND": "hashing",
        "LLM_BACKEND": "openai",
        "OPENAI_API_KEY": "test",
        "OPENAI_BASE_URL": fake.base_url,
        "OPENAI_MAX_RETRIES": "0",
        "LLM_MODEL": "fake-gpt",
        "LLM_FALLBACK": "extractive",
        "CHAT_RATE_LIMIT_PER_MINUTE": "0",
        **extra,
    }


@contextlib.contextmanager
def live_servers(*envs: dict[str, str]):
    """Start one daphne per environment, in parallel (each takes seconds to import Django)."""
    with contextlib.ExitStack() as stack:
        servers = [LiveServer(env=env) for env in envs]
        with ThreadPoolExecutor(len(servers)) as pool:
            started = list(pool.map(lambda s: _try_start(s), servers))
        for server, error in zip(servers, started, strict=True):
            if error is None:
                stack.push(server.__exit__)
        errors = [e for e in started if e is not None]
        if errors:
            raise errors[0]
        yield servers


def _try_start(server: LiveServer) -> Exception | None:
    try:
        server.__enter__()
    except Exception as exc:  # reported by live_servers once every other server is stopped
        return exc
    return None


def server_log(server: LiveServer) -> str:
    return Path(server.log_path).read_text(errors="replace")


@pytest.fixture(scope="module")
def fake_llm():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture(autouse=True)
def normal_llm(request):
    """Every test starts with the fake model answering normally and nothing scripted."""
    if "fake_llm" in request.fixturenames:
        fake = request.getfixturevalue("fake_llm")
        fake.default = Reply(ANSWER, tokens_per_second=40)
        fake._script.clear()


@pytest.fixture
def thread(owner):
    return Thread.objects.create(owner=owner, title="Drills")

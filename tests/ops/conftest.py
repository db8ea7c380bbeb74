"""Fixtures for the operations drills: Redis, daphne processes, the fake LLM, logged-in users.

One daphne process (`server`) serves every drill of the session, as production would: it must
survive them all, and its log must end without a traceback. It runs on Redis (channel layer and
cache) when Redis answers, else on the in-memory layer; the scale-out test adds a second process.

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
from tests import live_server
from tests.chat.conftest import catalogue  # noqa: F401  (a fixture, used by the drills)
from tests.fakes.openai_chat import FakeOpenAI, Reply
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
# Short, so a stalled model is given up on quickly; the fake streams far faster than this. Not
# shorter: at load 12-15 on 2 cores (CI beside benchmark builds) a 2 s timeout ended a 20
# tokens/s answer of the scale-out drill with an error.
OPENAI_TIMEOUT = 4.0
# The drill server connects to PostgreSQL under this name, so the database drills can cut its
# sessions and no other.
SERVER_APP_NAME = "ops-drill-daphne"


def redis_for_this_run() -> str | None:
    """A Redis database for this test run (a number of its own, so parallel runs and a
    developer's `scripts/run` do not share queues or cached rate limits), or None when Redis
    does not answer. The xdist workers of one run (children of one pytest) take neighbouring
    numbers, never the same one."""
    import redis

    base = (os.environ.get("REDIS_URL") or DEFAULT_REDIS).rstrip("/")
    base = base.rsplit("/", 1)[0] if base.count("/") > 2 else base  # drop a /db suffix
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ... under xdist
    run = os.getppid() + int(worker[2:]) if worker.startswith("gw") else os.getpid()
    url = f"{base}/{1 + run % 15}"
    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except redis.RedisError:
        return None
    return url


@pytest.fixture(scope="session")
def redis_url() -> str:
    url = redis_for_this_run()
    if url is None:
        pytest.skip("needs Redis on 127.0.0.1:6379 or at REDIS_URL (it runs on CI machines)")
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
        "OPENAI_TIMEOUT": str(OPENAI_TIMEOUT),
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
            started = list(pool.map(_try_start, servers))
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


@pytest.fixture(scope="session")
def fake_llm():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture(autouse=True)
def normal_llm(request):
    """Every test starts with the fake model answering normally and nothing scripted."""
    if "fake_llm" in request.fixturenames:
        fake = request.getfixturevalue("fake_llm")
        fake.default = Reply(ANSWER, tokens_per_second=40)
        with fake._lock:  # what an earlier (failed) test scripted and did not use
            fake._script.clear()


@pytest.fixture(scope="session")
def server_env(fake_llm, django_db_setup) -> dict[str, str]:
    env = app_env(
        fake_llm,
        DATABASE_URL=f"{live_server.test_database_url()}?application_name={SERVER_APP_NAME}",
    )
    if url := redis_for_this_run():
        env.update(REDIS_URL=url, CHANNELS_PREFIX=unique_prefix("drills"))
    return env


@pytest.fixture(scope="session")
def server(server_env):
    """The daphne process every drill runs against."""
    with live_servers(server_env) as (live,):
        yield live
    log = server_log(live)
    assert "Traceback" not in log and '" 500 ' not in log, log[-3000:]


@pytest.fixture
def thread(owner):
    return Thread.objects.create(owner=owner, title="Drills")

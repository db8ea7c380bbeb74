"""`manage.py bench_load`: the whole stack under load on loopback, on scratch data.

Two daphne processes share Redis (channel layer and cache); N WebSocket chats ask at once, spread
over both, while a few clients keep /api/search/ busy; the LLM is the local fake
(tests/fakes/openai_chat.py, in a process of its own) streaming every answer at a fixed rate.
Everything runs on a scratch database `bench_load` on the same PostgreSQL server (created,
migrated, filled with its own users and papers, dropped at the end): never the catalogue.
It stops by itself: every wait is bounded and the whole run has a deadline (--timeout).

Reports throughput (answers/s, tokens/s delivered, searches/s), time to first token p50/p95 (socket
send -> first `token` frame), answer and search latency, errors by kind (target: none), and the
memory (RSS) of each daphne process idle and at its peak. Results: docs/BENCHMARKS.md.
"""

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from collections import Counter
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from bench import SHARED_DATA
from bench.evaluation import interpolated_percentile as percentile
from bench.questions import QUESTIONS
from bench.scratch_db import scratch_database
from chat.models import Message, Thread
from papers.indexing.lexical import index_missing
from papers.indexing.vectors import embed_missing
from papers.ingest.snapshot import import_snapshot
from papers.models import Paper

SCRATCH_DATABASE = "bench_load"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/14"  # when REDIS_URL is not set: a database of its own
SEARCHES = [
    "diffusion models",
    "quantum key distribution since 2010",
    "transformers in 2024",
    "graph neural networks",
    "papers from the last 2 years on language models",
]


@dataclass
class ChatResult:
    server: int
    ttft_ms: float | None = None
    total_ms: float | None = None
    tokens: int = 0  # token frames received
    text: str = ""
    error: str = ""


@dataclass
class LoadResult:
    chats: list[ChatResult] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)
    search_errors: Counter = field(default_factory=Counter)
    connect_s: float = 0.0
    seconds: float = 0.0  # first ask -> last answer
    rss_idle: list[int] = field(default_factory=list)  # bytes, per daphne process
    rss_peak: list[int] = field(default_factory=list)
    # CPU seconds spent during the load, per process: who the two cores went to.
    cpu_s: dict[str, float] = field(default_factory=dict)
    load_average: tuple[float, float] = (0.0, 0.0)  # 1-minute, before and after


class Command(BaseCommand):
    help = (
        "Load test on loopback: N concurrent WebSocket chats plus API searches against two "
        "daphne processes sharing Redis, a fake LLM streaming at a fixed rate, on a scratch "
        "database. Stops by itself."
    )

    def add_arguments(self, parser):
        parser.add_argument("--chats", type=int, default=200, help="concurrent chats (default 200)")
        parser.add_argument("--servers", type=int, default=2, help="daphne processes (default 2)")
        parser.add_argument(
            "--search-clients",
            type=int,
            default=4,
            help="clients searching back to back during the chats (default 4)",
        )
        parser.add_argument("--tokens-per-second", type=float, default=30.0)
        parser.add_argument("--answer-words", type=int, default=60)
        parser.add_argument(
            "--papers",
            type=int,
            default=2000,
            help="papers imported into the scratch database (default 2000)",
        )
        parser.add_argument(
            "--snapshot",
            type=Path,
            default=SHARED_DATA / "arxiv-snapshot/arxiv-sample.jsonl.gz",
            help="arXiv snapshot file the papers come from (default ../shared/data/arxiv-snapshot/"
            "arxiv-sample.jsonl.gz)",
        )
        parser.add_argument(
            "--ramp",
            type=float,
            default=0.0,
            help="spread the asks over this many seconds (0: all at once)",
        )
        parser.add_argument(
            "--timeout",
            type=float,
            default=300.0,
            help="deadline for the whole run in seconds (default 300)",
        )
        parser.add_argument(
            "--keep-db",
            action="store_true",
            help="keep the scratch database (its papers) for the next run",
        )
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args, **options):
        redis_url = settings.REDIS_URL or DEFAULT_REDIS_URL
        _check_redis(redis_url)
        if options["chats"] < 1 or options["servers"] < 1:
            raise CommandError("--chats and --servers must be at least 1")
        if not options["snapshot"].is_file():
            raise CommandError(f"no snapshot at {options['snapshot']} (--snapshot PATH)")

        started = time.monotonic()
        with scratch_database(SCRATCH_DATABASE, keep=options["keep_db"]):
            papers = self._scratch_papers(options["snapshot"], options["papers"])
            people = self._scratch_people(
                options["chats"] + options["servers"], options["search_clients"]
            )
            with self._fleet(redis_url, options) as fleet:
                try:
                    result = asyncio.run(
                        asyncio.wait_for(self._load(fleet, people, options), options["timeout"])
                    )
                except TimeoutError:
                    raise CommandError(
                        f"the load did not finish within --timeout {options['timeout']:g} s"
                    ) from None
            saved = self._saved_answers(people["threads"][options["servers"] :])
        self._report(result, saved, papers, options, time.monotonic() - started)

    # --- Scratch data ----------------------------------------------------------------------------
    def _scratch_papers(self, snapshot: Path, count: int) -> int:
        # The hashing embedder (no model): the load is the app's, not MiniLM's; the daphne
        # processes embed queries with it too.
        settings.EMBEDDING_BACKEND = "hashing"
        have = Paper.objects.count()
        if have < count:
            self.stderr.write(f"importing {count} papers into the scratch database…")
            import_snapshot(snapshot, limit=count, on_problem=lambda problem: None)
        index_missing()
        embed_missing()
        return Paper.objects.count()

    def _scratch_people(self, chatters: int, searchers: int) -> dict:
        """One user and thread per chat (fresh each run), logged in; tokens for the searchers."""
        from django.contrib.auth import get_user_model
        from django.test import Client
        from rest_framework.authtoken.models import Token

        User = get_user_model()
        User.objects.filter(username__startswith="load-").delete()
        users = User.objects.bulk_create(
            [User(username=f"load-{i}") for i in range(max(chatters, searchers))]
        )
        threads, cookies = [], []
        for user in users[:chatters]:
            threads.append(Thread.objects.create(owner=user))
            client = Client()
            client.force_login(user)
            cookies.append(
                f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
            )
        tokens = [Token.objects.create(user=user).key for user in users[:searchers]]
        return {"threads": threads, "cookies": cookies, "tokens": tokens}

    def _saved_answers(self, threads) -> dict:
        """What the servers saved: statuses, and their own timings of the same answers (where
        the time to first token goes: before the LLM, or on the way to the socket)."""
        rows = list(Message.objects.filter(thread__in=threads, role="assistant"))
        stages = {}
        for key in ("setup_ms", "retrieval_ms", "overhead_ms", "ttft_ms"):
            values = [m.timings[key] for m in rows if key in (m.timings or {})]
            if values:
                stages[key] = {
                    "p50": round(percentile(values, 50)),
                    "p95": round(percentile(values, 95)),
                }
        return {"status": dict(Counter(m.status for m in rows)), "server_timings": stages}

    # --- The processes ---------------------------------------------------------------------------
    @contextmanager
    def _fleet(self, redis_url: str, options):
        from tests.live_server import free_port, test_database_url

        out = settings.BASE_DIR / "bench-out"  # gitignored
        out.mkdir(exist_ok=True)
        answer = " ".join(f"w{i}" for i in range(options["answer_words"] - 1)) + " [1]."
        prefix = f"bench-load-{uuid.uuid4().hex[:8]}"
        with ExitStack() as stack:
            fake = _start(
                stack,
                [sys.executable, "-m", "bench.fake_llm", answer, str(options["tokens_per_second"])],
                stdout=subprocess.PIPE,
            )
            fake_url = fake.stdout.readline().strip()
            env = {
                **os.environ,
                "DATABASE_URL": test_database_url(),  # the scratch database this process uses
                "REDIS_URL": redis_url,
                "CHANNELS_PREFIX": prefix,
                "EMBEDDING_BACKEND": "hashing",
                "LLM_BACKEND": "openai",
                "OPENAI_API_KEY": "bench",
                "OPENAI_BASE_URL": fake_url,
                "LLM_MODEL": "fake-gpt",
                "CHAT_RATE_LIMIT_PER_MINUTE": "0",
                # Counted in Redis as in production, never reached.
                "SEARCH_RATE_LIMIT_PER_MINUTE": "1000000",
                "LOG_LEVEL": "WARNING",
            }
            ports = [free_port() for _ in range(options["servers"])]
            servers = []
            for i, port in enumerate(ports):
                log = stack.enter_context(open(out / f"bench_load_daphne_{i}.log", "w"))
                servers.append(
                    _start(
                        stack,
                        [
                            sys.executable,
                            "-m",
                            "daphne",
                            "-b",
                            "127.0.0.1",
                            "-p",
                            str(port),
                            "flatuniverse.asgi:application",
                        ],
                        env=env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    )
                )
            for port, server in zip(ports, servers, strict=True):
                _wait_healthy(port, server)
            stack.callback(_forget_redis_keys, redis_url, prefix)
            yield {"ports": ports, "pids": [s.pid for s in servers], "fake_pid": fake.pid}

    # --- The load --------------------------------------------------------------------------------
    async def _load(self, fleet, people, options) -> LoadResult:
        import psutil

        ports, servers = fleet["ports"], options["servers"]
        processes = [psutil.Process(pid) for pid in fleet["pids"]]
        result = LoadResult()
        expected = " ".join(f"w{i}" for i in range(options["answer_words"] - 1)) + " [1]."
        threads, cookies = people["threads"], people["cookies"]

        # Warm-up, not measured: one chat per process (the first loads the LLM SDK, the
        # retrieval code paths) and one search, as on a server that has been running.
        warm = await asyncio.gather(
            *(
                _chat(ports[i], threads[i], cookies[i], QUESTIONS[0], i, None, 0.0)
                for i in range(servers)
            )
        )
        if errors := [c.error for c in warm if c.error]:
            raise CommandError(f"warm-up failed: {errors}")
        threads, cookies = threads[servers:], cookies[servers:]
        result.rss_idle = [p.memory_info().rss for p in processes]
        watched = {f"daphne {i}": p for i, p in enumerate(processes)}
        watched.update(
            {"fake LLM": psutil.Process(fleet["fake_pid"]), "clients (this)": psutil.Process()}
        )
        cpu_before = {name: _cpu(p) for name, p in watched.items()}
        result.rss_peak = list(result.rss_idle)
        result.load_average = (os.getloadavg()[0], 0.0)

        go = asyncio.Event()
        done = asyncio.Event()
        connected = 0
        connecting_started = time.perf_counter()

        def on_ready():
            nonlocal connected
            connected += 1
            if connected == len(threads):
                result.connect_s = time.perf_counter() - connecting_started
                go.set()

        async def sample_memory():
            while not done.is_set():
                for i, process in enumerate(processes):
                    result.rss_peak[i] = max(result.rss_peak[i], process.memory_info().rss)
                await asyncio.sleep(0.25)

        chats = [
            _chat(
                ports[i % servers],
                thread,
                cookie,
                QUESTIONS[i % len(QUESTIONS)],
                i % servers,
                (go, on_ready),
                options["ramp"] * i / len(threads),
            )
            for i, (thread, cookie) in enumerate(zip(threads, cookies, strict=True))
        ]
        searchers = [
            _search_loop(ports[i % servers], token, done, go, result)
            for i, token in enumerate(people["tokens"])
        ]
        monitor = asyncio.create_task(sample_memory())
        search_tasks = [asyncio.create_task(s) for s in searchers]
        chat_task = asyncio.gather(*chats)
        await go.wait()
        first_ask = time.perf_counter()
        result.chats = await chat_task
        result.seconds = time.perf_counter() - first_ask
        done.set()
        await asyncio.gather(monitor, *search_tasks)
        result.load_average = (result.load_average[0], os.getloadavg()[0])
        result.cpu_s = {name: round(_cpu(p) - cpu_before[name], 1) for name, p in watched.items()}
        for chat in result.chats:
            if not chat.error and chat.text != expected:
                chat.error = f"text differs from what the model streamed: {chat.text[-40:]!r}"
        return result

    # --- The report ------------------------------------------------------------------------------
    def _report(self, result: LoadResult, saved: dict, papers: int, options, wall: float):
        answered = [c for c in result.chats if not c.error]
        errors = Counter(c.error.split(":")[0] for c in result.chats if c.error)
        ttft = [c.ttft_ms for c in answered if c.ttft_ms is not None]
        total = [c.total_ms for c in answered if c.total_ms is not None]
        mb = 1024 * 1024
        report = {
            "chats": options["chats"],
            "servers": options["servers"],
            "papers": papers,
            "tokens_per_second": options["tokens_per_second"],
            "answer_words": options["answer_words"],
            "answered": len(answered),
            "saved": saved["status"],
            "server_timings_ms": saved["server_timings"],
            "errors": dict(errors),
            "connect_s": round(result.connect_s, 2),
            "seconds": round(result.seconds, 2),
            "answers_per_s": round(len(answered) / result.seconds, 1) if result.seconds else 0,
            "token_frames_per_s": round(sum(c.tokens for c in answered) / result.seconds)
            if result.seconds
            else 0,
            "ttft_ms": {
                "p50": round(percentile(ttft, 50)),
                "p95": round(percentile(ttft, 95)),
                "max": round(max(ttft, default=float("nan"))),
            },
            "answer_ms": {"p50": round(percentile(total, 50)), "p95": round(percentile(total, 95))},
            "searches": len(result.search_ms),
            "searches_per_s": round(len(result.search_ms) / result.seconds, 1)
            if result.seconds
            else 0,
            "search_ms": {
                "p50": round(percentile(result.search_ms, 50)),
                "p95": round(percentile(result.search_ms, 95)),
            },
            "search_errors": dict(result.search_errors),
            "cpu_s": result.cpu_s,
            "rss_mb": [
                {"idle": round(i / mb), "peak": round(p / mb)}
                for i, p in zip(result.rss_idle, result.rss_peak, strict=True)
            ],
            "load_average_1m": {
                "before": round(result.load_average[0], 1),
                "after": round(result.load_average[1], 1),
            },
            "cores": os.cpu_count(),
            "wall_s": round(wall, 1),
        }
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        w = self.stdout.write
        w(
            f"{report['chats']} chats over {report['servers']} daphne processes (Redis), "
            f"{report['papers']} scratch papers, fake LLM {report['tokens_per_second']:g} tokens/s, "
            f"{report['answer_words']} words an answer; {report['cores']} cores, load average "
            f"{report['load_average_1m']['before']} before, {report['load_average_1m']['after']} after"
        )
        w(
            f"sockets connected in {report['connect_s']} s; all asks answered in {report['seconds']} s"
        )
        w(
            f"answered {report['answered']}/{report['chats']}, saved {report['saved']}, "
            f"errors {report['errors'] or 'none'}"
        )
        w(
            f"throughput: {report['answers_per_s']} answers/s, "
            f"{report['token_frames_per_s']} token frames/s delivered"
        )
        w(
            f"time to first token: p50 {report['ttft_ms']['p50']} ms, p95 {report['ttft_ms']['p95']} ms, "
            f"max {report['ttft_ms']['max']} ms; whole answer p50 {report['answer_ms']['p50']} ms, "
            f"p95 {report['answer_ms']['p95']} ms"
        )
        w(
            "server side (ask -> pipeline start, retrieval, all before the LLM, first token): "
            + ", ".join(
                f"{k[:-3]} p50 {v['p50']} / p95 {v['p95']} ms"
                for k, v in report["server_timings_ms"].items()
            )
        )
        w(
            f"API search meanwhile: {report['searches']} searches ({report['searches_per_s']}/s), "
            f"p50 {report['search_ms']['p50']} ms, p95 {report['search_ms']['p95']} ms, "
            f"errors {report['search_errors'] or 'none'}"
        )
        for i, rss in enumerate(report["rss_mb"]):
            w(f"daphne {i}: RSS {rss['idle']} MB idle, {rss['peak']} MB peak")
        w(
            f"CPU seconds during those {report['seconds']} s: "
            + ", ".join(f"{name} {seconds}" for name, seconds in report["cpu_s"].items())
        )
        w(f"wall time {report['wall_s']} s (scratch data, processes, load)")


# --- Clients ----------------------------------------------------------------------------------------
async def _chat(port, thread, cookie, question, server, gate, delay) -> ChatResult:
    """One user on one socket: connect, wait for everyone (gate), ask, read to done or error."""
    from websockets.asyncio.client import connect

    result = ChatResult(server=server)
    try:
        async with connect(
            f"ws://127.0.0.1:{port}/ws/threads/{thread.pk}/",
            origin=f"http://127.0.0.1:{port}",
            additional_headers={"Cookie": cookie},
            open_timeout=60,
            ping_interval=None,
            max_size=None,
        ) as ws:
            while json.loads(await asyncio.wait_for(ws.recv(), 60))["type"] != "ready":
                pass
            if gate is not None:
                go, on_ready = gate
                on_ready()
                await go.wait()
            await asyncio.sleep(delay)
            sent = time.perf_counter()
            await ws.send(json.dumps({"type": "ask", "text": question}))
            while True:
                event = json.loads(await asyncio.wait_for(ws.recv(), 60))
                if event["type"] == "token":
                    if result.ttft_ms is None:
                        result.ttft_ms = (time.perf_counter() - sent) * 1000
                    result.tokens += 1
                    _apply_token(result, event)
                elif event["type"] == "done":
                    result.total_ms = (time.perf_counter() - sent) * 1000
                    return result
                elif event["type"] == "error":
                    result.error = f"{event.get('code')}: {event.get('message')}"
                    return result
    except Exception as exc:  # a benchmark counts failures instead of stopping at the first
        result.error = f"{type(exc).__name__}: {exc}"
        if gate is not None and not gate[0].is_set():
            gate[1]()  # a socket that never connected must not hold the others back
    return result


def _apply_token(result: ChatResult, event: dict) -> None:
    """As docs/WEBSOCKET.md tells clients: skip text already held, append the new tail."""
    offset, text = event["offset"], event["text"]
    if offset > len(result.text):
        result.error = f"token gap: offset {offset} after {len(result.text)} characters"
    elif offset + len(text) > len(result.text):
        result.text = result.text[:offset] + text


async def _search_loop(port, token, done: asyncio.Event, go: asyncio.Event, result: LoadResult):
    import httpx

    await go.wait()
    headers = {"Authorization": f"Token {token}"}
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=60
    ) as http:
        i = 0
        while not done.is_set():
            started = time.perf_counter()
            try:
                response = await http.get("/api/search/", params={"q": SEARCHES[i % len(SEARCHES)]})
                if response.status_code == 200:
                    result.search_ms.append((time.perf_counter() - started) * 1000)
                else:
                    result.search_errors[f"HTTP {response.status_code}"] += 1
            except httpx.HTTPError as exc:
                result.search_errors[type(exc).__name__] += 1
            i += 1


# --- Plumbing ---------------------------------------------------------------------------------------
def _cpu(process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def _check_redis(url: str) -> None:
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        raise CommandError(f"bench_load needs Redis (REDIS_URL, now {url}): {exc}") from None


def _start(stack: ExitStack, argv, **kwargs) -> subprocess.Popen:
    process = subprocess.Popen(argv, cwd=settings.BASE_DIR, text=True, **kwargs)

    def stop():
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    stack.callback(stop)
    return process


def _wait_healthy(port: int, process: subprocess.Popen, timeout: float = 90) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise CommandError(
                f"daphne on port {port} exited; see bench-out/bench_load_daphne_*.log"
            )
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise CommandError(f"daphne on port {port} was not healthy within {timeout:.0f} s")


def _forget_redis_keys(url: str, prefix: str) -> None:
    """The run's channel-layer keys (groups, channels): they would otherwise linger a day."""
    import redis

    client = redis.Redis.from_url(url)
    for key in client.scan_iter(f"{prefix}*"):
        client.delete(key)

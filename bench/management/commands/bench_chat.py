"""`manage.py bench_chat`: how fast the chat answers, on the catalogue in the configured database.

Two measurements (docs/BENCHMARKS.md has the results and the exact commands):

overhead    Everything before the first token except the LLM's own latency: saving the turn,
            rewriting, temporal analysis, retrieval and reranking, building the prompt. Runs
            `chat.service.ask` in this process for a fixed list of questions (each in a fresh
            thread) with the extractive backend, and reports the pipeline's own `overhead_ms`
            (ask → request handed to the LLM) and the time to the first token.
concurrent  N chats at once over real WebSockets: a daphne child process serves the app, a local
            OpenAI-compatible fake (tests/fakes/openai_chat.py) streams every answer at a fixed rate,
            and N aiohttp clients (one user and thread each) ask together. Reports time to first
            token (socket send → first `token` frame), total time, errors, and checks, chat by
            chat, that the answer `done` announced was saved complete and equals the text
            streamed (bench/chat_tally.py), and who wrote it (the LLM, the gate, a fallback).

Bench users are named `bench-chat-*` and deleted afterwards (with their threads).
"""

import asyncio
import math
import os
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from bench import cpu
from bench.chat_tally import fake_answer, tally
from bench.evaluation import interpolated_percentile as percentile
from bench.questions import QUESTIONS, catalogue_questions
from chat import service
from chat.lanes import search_lanes
from chat.models import Message, Thread
from chat.retrieval.search import search
from papers.models import Paper

BENCH_USER_PREFIX = "bench-chat-"


def summary(name, values):
    return (
        f"{name}: n={len(values)} p50={percentile(values, 50):.1f} "
        f"p95={percentile(values, 95):.1f} max={max(values):.1f} ms"
    )


def _profiled(profile: str | None, path) -> list[str]:
    """How to start daphne: plain, under cProfile, or under bench.profiled_daphne (yappi)."""
    if profile == "cprofile":
        return ["-m", "cProfile", "-o", str(path), "-m", "daphne"]
    if profile == "yappi":
        return ["-m", "bench.profiled_daphne", str(path)]
    return ["-m", "daphne"]


# A profiled daphne is several times slower: give its handshakes more than daphne's 5 s.
PROFILED_CONNECT_TIMEOUT = ["--websocket_connect_timeout", "120"]


class Command(BaseCommand):
    help = "Benchmark the chat: overhead before the first token, and N concurrent socket chats."

    def add_arguments(self, parser):
        parser.add_argument("mode", choices=["overhead", "concurrent"])
        parser.add_argument(
            "--rounds", type=int, default=3, help="overhead: passes over the questions"
        )
        parser.add_argument("--chats", type=int, default=100, help="concurrent: how many at once")
        parser.add_argument("--tokens-per-second", type=float, default=30.0)
        parser.add_argument("--answer-words", type=int, default=60)
        parser.add_argument(
            "--ramp",
            type=float,
            default=0.0,
            help="concurrent: spread the asks over this many seconds (0: all at once)",
        )
        parser.add_argument(
            "--open-first",
            action="store_true",
            help="concurrent: open every socket first, then ask all at once (default: each chat "
            "asks as soon as its own socket is open, so the asks meet the other handshakes)",
        )
        parser.add_argument(
            "--questions",
            choices=["distinct", "repeat"],
            default="distinct",
            help="concurrent: a different catalogue paper's title per chat (distinct), or the 20 "
            "fixed questions in turn (repeat: the server's caches answer most of each search)",
        )
        parser.add_argument(
            "--servers",
            type=int,
            default=1,
            help="concurrent: daphne processes, clients spread over them (>1 needs REDIS_URL)",
        )

        parser.add_argument(
            "--profile",
            nargs="?",
            const="cprofile",
            choices=["cprofile", "yappi"],
            help="concurrent: run daphne under cProfile (its event loop thread, the whole process "
            "life) or yappi (CPU clock, every thread, the whole process life; needs yappi "
            "importable, e.g. on PYTHONPATH), written to bench-out/bench_chat_daphne-<port>.prof; "
            "read with pstats",
        )

    def handle(self, *args, mode, **options):
        papers = Paper.objects.count()
        if not papers:
            raise CommandError("The catalogue is empty: import papers first (README).")
        self.stdout.write(
            f"catalogue: {papers} papers; embedding backend {settings.EMBEDDING_BACKEND}; "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        try:
            if mode == "overhead":
                self._overhead(options["rounds"])
            else:
                self._concurrent(**options)
        finally:
            self._cleanup()

    # --- bench users --------------------------------------------------------------------------
    def _users(self, n):
        from django.contrib.auth import get_user_model

        User = get_user_model()
        self._cleanup()
        return [User.objects.create_user(f"{BENCH_USER_PREFIX}{i}") for i in range(n)]

    def _cleanup(self):
        from django.contrib.auth import get_user_model

        get_user_model().objects.filter(username__startswith=BENCH_USER_PREFIX).delete()

    # --- overhead -----------------------------------------------------------------------------
    def _overhead(self, rounds):
        settings.LLM_BACKEND = "extractive"
        settings.CHAT_RATE_LIMIT_PER_MINUTE = 0
        (user,) = self._users(1)
        threads = [Thread.objects.create(owner=user) for _ in range(len(QUESTIONS) * rounds + 3)]
        asyncio.run(self._overhead_run(user, threads, rounds))
        rows = Message.objects.filter(thread__owner=user, role="assistant", status="complete")
        rows = list(rows.order_by("created_at"))[3:]  # the first three warm caches up
        self._timings(rows)
        self.stdout.write(f"answers: {len(rows)} complete of {len(QUESTIONS) * rounds}")
        # Same-run baseline: retrieval alone (chat.retrieval.search) for the same questions.
        alone = asyncio.run(self._search_alone(rounds))
        self.stdout.write(summary("baseline: search() alone", alone))
        overhead = [m.timings["overhead_ms"] for m in rows if "overhead_ms" in m.timings]
        if overhead and alone:
            ratio = percentile(overhead, 50) / percentile(alone, 50)
            extra = percentile(overhead, 50) - percentile(alone, 50)
            self.stdout.write(
                f"overhead p50 / search p50 = {ratio:.2f} (the chat adds {extra:.0f} ms at p50)"
            )

    async def _overhead_run(self, user, threads, rounds):
        questions = QUESTIONS[:3] + QUESTIONS * rounds
        for thread, question in zip(threads, questions, strict=False):
            answer = await service.ask(user, thread.pk, question)
            await answer.done.wait()

    async def _search_alone(self, rounds) -> list[float]:
        times = []
        for question in QUESTIONS * rounds:
            async with search_lanes.context():  # the same database lanes the chat uses
                started = time.perf_counter()
                await search(question, k=settings.CHAT_SOURCES)
                times.append((time.perf_counter() - started) * 1000)
        return times

    # --- concurrent ---------------------------------------------------------------------------
    def _concurrent(
        self,
        chats,
        tokens_per_second,
        answer_words,
        ramp,
        servers,
        profile,
        questions,
        open_first,
        **_,
    ):
        from django.test import Client

        from tests.live_server import free_port

        users = self._users(chats + 2)  # two more warm the server up
        # The two warm-up chats ask fixed questions; the measured ones as --questions says.
        if questions == "distinct":
            asked = QUESTIONS[-2:] + catalogue_questions(chats)
        else:
            asked = QUESTIONS[:2] + [QUESTIONS[i % len(QUESTIONS)] for i in range(chats)]
        threads = [Thread.objects.create(owner=u) for u in users]
        cookies = []
        for user in users:
            client = Client()
            client.force_login(user)
            cookies.append(client.cookies[settings.SESSION_COOKIE_NAME].value)
        text = fake_answer(answer_words)

        out = settings.BASE_DIR / "bench-out"  # gitignored
        out.mkdir(exist_ok=True)
        # Three processes, so none steals the others' interpreter: the fake LLM, daphne, and
        # the clients (this one).
        fake = subprocess.Popen(
            [sys.executable, "-m", "bench.fake_llm", text, str(tokens_per_second)],
            cwd=settings.BASE_DIR,
            stdout=subprocess.PIPE,
            text=True,
        )
        fake_url = fake.stdout.readline().strip()
        if servers > 1 and not settings.REDIS_URL:
            raise CommandError(
                "--servers > 1 needs REDIS_URL: the processes share the channel layer"
            )
        ports = [free_port() for _ in range(servers)]
        env = {
            **os.environ,
            "LLM_BACKEND": "openai",
            "OPENAI_API_KEY": "bench",
            "OPENAI_BASE_URL": fake_url,
            "LLM_MODEL": "fake-gpt",
            "CHAT_RATE_LIMIT_PER_MINUTE": "0",
            "LOG_LEVEL": "WARNING",
        }
        log = open(out / "bench_chat_daphne.log", "w")
        children = [
            subprocess.Popen(
                [
                    sys.executable,
                    *_profiled(profile, out / f"bench_chat_daphne-{port}.prof"),
                    *(PROFILED_CONNECT_TIMEOUT if profile else ()),
                    "-b",
                    "127.0.0.1",
                    "-p",
                    str(port),
                    "flatuniverse.asgi:application",
                ],
                cwd=settings.BASE_DIR,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            for port in ports
        ]
        try:
            for port, server in zip(ports, children, strict=True):
                self._wait_for(port, server)
            results, cpu_s = asyncio.run(
                self._concurrent_run(
                    ports,
                    threads,
                    cookies,
                    asked,
                    ramp,
                    [c.pid for c in children],
                    cpu.postmaster_pid(),
                    open_first,
                )
            )
        finally:
            for child in [*children, fake]:
                child.terminate()
                child.wait(timeout=120 if profile else 15)  # a profile is written
            log.close()

        ttft = [r["ttft"] for r in results if r.get("ttft") is not None]
        total = [r["total"] for r in results if r.get("total") is not None]
        errors = [r for r in results if r.get("error")]
        threads = threads[2:]
        answers = {
            m.thread_id: m for m in Message.objects.filter(thread__in=threads, role="assistant")
        }
        kept = tally(results, answers)
        self.stdout.write(
            f"chats: {chats}, fake LLM {tokens_per_second:g} tokens/s, {answer_words} words each, "
            f"{questions} questions, ramp {ramp:g} s, {servers} daphne process(es), channel layer "
            f"{'redis' if settings.REDIS_URL else 'in-memory'}, load average {os.getloadavg()[0]:.1f}"
            f"{cpu.scheduler_note()}"
        )
        if ttft:
            self.stdout.write(summary("ttft (socket send -> first token)", ttft))
            for kind in ("start", "sources"):
                seen = [r["seen"][kind] for r in results if kind in r.get("seen", {})]
                if seen:
                    self.stdout.write("  " + summary(f"send -> first '{kind}' event", seen))
        if total:
            self.stdout.write(summary("total (send -> done)", total))
        self.stdout.write(f"{kept.line()}; errors: {len(errors)}")
        for r in errors[:5]:
            self.stdout.write(f"  error: {r['error']}")
        # Where client and server clocks meet (one machine): socket send -> question row saved.
        saved_at = dict(
            Message.objects.filter(thread__in=threads, role="user").values_list(
                "thread", "created_at"
            )
        )
        to_saved = [
            (saved_at[r["thread"]].timestamp() - r["sent_epoch"]) * 1000
            for r in results
            if r.get("thread") in saved_at
        ]
        if to_saved:
            self.stdout.write(summary("send -> question saved", to_saved))
        self.stdout.write("server-side timings of the same answers:")
        self._timings(Message.objects.filter(thread__in=threads, role="assistant"))
        self._cpu_floor(cpu_s, chats, ttft, asked[2:])

    def _cpu_floor(self, cpu_s: dict, chats: int, ttft: list[float], asked: list[str]) -> None:
        """What the burst cost in CPU, against the time-to-first-token floor that search sets:
        every question's search must run before the last first token, on os.cpu_count() cores.
        The CPU per search is measured here, after the burst: `search()` alone on the questions
        the chats asked, in this process (bench.search_cpu.once_each)."""
        from bench.search_cpu import once_each

        cores = os.cpu_count() or 1
        self.stdout.write(
            "CPU seconds during the measured chats: "
            + ", ".join(f"{name} {seconds:.2f}" for name, seconds in cpu_s.items())
        )
        spent = cpu_s["daphne"] + cpu_s["postgres"]
        # Per answer streamed: a chat refused at the handshake (daphne's connect timeout) costs
        # far less than an answer, and dividing by every chat would flatter a run that lost some.
        answered = max(len(ttft), 1)
        per_answer = spent / answered * 1000
        p95 = percentile(ttft, 95) / 1000 if ttft else 0.0
        self.stdout.write(
            f"per answer: {per_answer:.0f} ms of CPU (daphne + PostgreSQL, over the {len(ttft)}"
            f" answers streamed); the chats together needed {spent / cores:.2f} s of the {cores}"
            f" cores; p95 TTFT {p95:.2f} s"
        )
        if self.at_open is not None:
            elapsed, by_then = self.at_open
            self.stdout.write(
                f"all sockets open after {elapsed:.2f} s (--open-first): daphne had used"
                f" {by_then['daphne']:.2f} CPU-s ({by_then['daphne'] / chats * 1000:.1f} ms a"
                f" socket), PostgreSQL {by_then['postgres']:.2f} CPU-s; then the asks, together"
            )
        if self.by_p95 is not None:
            elapsed, by_then, count = self.by_p95
            self.stdout.write(
                f"by the {count}th first token ({elapsed:.2f} s after the sockets began to open): daphne had"
                f" used {by_then['daphne']:.2f} CPU-s ({by_then['daphne'] / chats * 1000:.0f} ms"
                f" a chat, {by_then['daphne'] / elapsed:.2f} of one core meanwhile), PostgreSQL"
                f" {by_then['postgres']:.2f} CPU-s ({by_then['postgres'] / elapsed:.2f} of one"
                f" core); load average {os.getloadavg()[0]:.1f}"
            )
        ends = self._search_burst(asked, warm_up=QUESTIONS[:3])
        searched = once_each(asked, settings.CHAT_SOURCES, warm_up=QUESTIONS[:3]).per(len(asked))
        per_search = searched["total_ms"]
        floor = chats * per_search / 1000 / cores
        self.stdout.write(
            f"CPU per search, the same {len(asked)} questions through search() alone: "
            f"{per_search:.1f} ms ({searched['python_ms']:.1f} Python + {searched['sql_ms']:.1f}"
            f" SQL; PostgreSQL's other processes +{searched['server_other_ms']:.1f})"
        )
        self.stdout.write(
            f"floor set by search: {chats} x {per_search:.1f} ms / {cores} cores = {floor:.2f} s;"
            f" p95 TTFT = {p95 / floor if floor else 0:.1f}x the floor; the answer path adds"
            f" {per_answer - per_search:.0f} ms of CPU per answer beyond its search"
        )
        burst_p95 = percentile(ends, 95) / 1000
        self.stdout.write(
            f"floor in wall-clock time, the same {len(asked)} searches all at once on the chat's"
            f" lanes in this process (load average {os.getloadavg()[0]:.1f}): p95 done at"
            f" {burst_p95:.2f} s, last at {ends[-1] / 1000:.2f} s; p95 TTFT ="
            f" {p95 / burst_p95 if burst_p95 else 0:.1f}x that"
        )

    def _search_burst(self, asked: list[str], warm_up: list[str]) -> list[float]:
        """Milliseconds from the start to each search's end, the chats' questions all at once
        through `search()` on the chat's database lanes, in this process: one interpreter, as
        the server, under the machine's load of the moment. The floor of the CPU ÷ cores assumes
        two idle cores and Python on both; this one is what search alone takes here and now.
        Each question's query vector is embedded anew, as it was in the server."""
        from papers.embeddings import query_cache

        async def burst() -> list[float]:
            for question in warm_up:  # the model loaded, its text not among `asked`
                async with search_lanes.context():
                    await search(question, k=settings.CHAT_SOURCES)
            query_cache.clear()
            started = time.perf_counter()
            ends: list[float] = []

            async def one(question):
                async with search_lanes.context():
                    await search(question, k=settings.CHAT_SOURCES)
                ends.append((time.perf_counter() - started) * 1000)

            await asyncio.gather(*(one(question) for question in asked))
            return sorted(ends)

        try:
            return asyncio.run(burst())
        finally:
            query_cache.clear()  # once_each meters each question's vector uncached too

    def _timings(self, messages):
        keys = ["setup_ms", "rewrite_ms", "retrieval_ms", "prompt_ms", "overhead_ms", "ttft_ms"]
        rows = list(messages)
        for key in keys:
            values = [m.timings[key] for m in rows if key in (m.timings or {})]
            if values:
                self.stdout.write("  " + summary(key, values))
        stages: dict[str, list] = {}
        for m in rows:
            for stage, ms in ((m.timings or {}).get("retrieval") or {}).items():
                if isinstance(ms, int | float):
                    stages.setdefault(stage, []).append(ms)
        for stage, values in stages.items():
            self.stdout.write("    retrieval." + summary(stage, values))

    def _wait_for(self, port, server):
        import httpx

        # /healthz summarises the catalogue: at 57k papers on a loaded machine, tens of seconds.
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise CommandError("daphne exited; see bench-out/bench_chat_daphne.log")
            try:
                httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
                return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise CommandError("daphne did not start within 180 s")

    async def _concurrent_run(
        self, ports, threads, cookies, asked, ramp, server_pids, postmaster, open_first=False
    ):

        # The first answers of a fresh process load the embedding model and import the LLM SDK:
        # warm the server up with two chats (not measured), as a running server would be.
        warm = await self._chats(ports, threads[:2], cookies[:2], asked[:2], 0)
        if any(r.get("error") for r in warm):
            raise CommandError(f"warm-up failed: {warm}")

        def spent() -> dict[str, float]:
            return {
                "daphne": sum(cpu.process_cpu_s(pid) for pid in server_pids),
                "postgres": cpu.server_cpu_s(postmaster) if postmaster else 0.0,
                "clients (this process)": cpu.process_cpu_s(os.getpid()),
            }

        # What the servers had spent when the 95th percentile's first token arrived: the work
        # before most first tokens, and the share of a core daphne got for it.
        measured = len(threads) - 2
        at_p95 = math.ceil(0.95 * measured)
        firsts = 0

        def first_token() -> None:
            nonlocal firsts
            firsts += 1
            if firsts == at_p95:
                self.by_p95 = (time.perf_counter() - started, spent())

        def all_open() -> None:
            self.at_open = (time.perf_counter() - started, spent())

        self.by_p95 = self.at_open = None
        before = spent()
        started = time.perf_counter()
        results = await self._chats(
            ports,
            threads[2:],
            cookies[2:],
            asked[2:],
            ramp,
            first_token=first_token,
            all_open=all_open if open_first else None,
        )
        if self.at_open is not None:
            elapsed, then = self.at_open
            self.at_open = (elapsed, {name: then[name] - before[name] for name in before})
        after = spent()
        if self.by_p95 is not None:
            elapsed, then = self.by_p95
            self.by_p95 = (elapsed, {name: then[name] - before[name] for name in before}, at_p95)
        return results, {name: after[name] - before[name] for name in before}

    async def _chats(self, ports, threads, cookies, asked, ramp, first_token=None, all_open=None):
        """Each chat opens its socket and asks; with `all_open`, every chat waits until all
        sockets are open (or failed), `all_open()` is called, and then they ask together."""
        import aiohttp

        opened, settled = asyncio.Event(), 0

        def settle() -> None:
            nonlocal settled
            settled += 1
            if settled == len(threads):
                all_open()
                opened.set()

        async def one(i, session):
            result = {}
            waiting = all_open is not None
            await asyncio.sleep(ramp * i / max(len(threads), 1))
            port = ports[i % len(ports)]  # round robin, as a load balancer would
            url = f"ws://127.0.0.1:{port}/ws/threads/{threads[i].pk}/"
            headers = {
                "Origin": f"http://127.0.0.1:{port}",
                "Cookie": f"{settings.SESSION_COOKIE_NAME}={cookies[i]}",
            }
            try:
                async with session.ws_connect(url, headers=headers, heartbeat=None) as ws:
                    while (await ws.receive_json(timeout=30))["type"] != "ready":
                        pass
                    if waiting:
                        waiting = False
                        settle()
                        await opened.wait()
                    sent = time.perf_counter()
                    result["sent_epoch"] = time.time()
                    result["thread"] = threads[i].pk
                    await ws.send_json({"type": "ask", "text": asked[i]})
                    text = ""
                    while True:
                        event = await ws.receive_json(timeout=60)
                        # When each kind of event first arrived: where a first token waited.
                        result.setdefault("seen", {}).setdefault(
                            event["type"], (time.perf_counter() - sent) * 1000
                        )
                        if event["type"] == "token":
                            if "ttft" not in result:
                                result["ttft"] = (time.perf_counter() - sent) * 1000
                                if first_token is not None:
                                    first_token()
                            text += event["text"]
                        elif event["type"] == "done":
                            result["total"] = (time.perf_counter() - sent) * 1000
                            result["done_content"] = event["content"]
                            break
                        elif event["type"] == "error":
                            result["error"] = f"{event.get('code')}: {event.get('message')}"
                            break
                    result["text"] = text
            except Exception as exc:  # a benchmark reports failures instead of stopping
                result["error"] = f"{type(exc).__name__}: {exc}"
            if waiting:  # failed before its socket was open: the others need not wait for it
                settle()
            return result

        async def bounded(i, session):
            # A chat that hangs (a handshake never answered) is an error, not a stuck benchmark.
            try:
                return await asyncio.wait_for(one(i, session), timeout=180)
            except TimeoutError:
                return {"error": "no answer within 180 s"}

        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:
            return await asyncio.gather(*(bounded(i, session) for i in range(len(threads))))

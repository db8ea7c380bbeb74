"""Database lanes: a few threads, each with its own PostgreSQL connection, lent to one job at a
time, so concurrent chat answers query the database in parallel.

Django's async ORM (and every `sync_to_async` call, retrieval's included) runs the queries of a
whole process on ONE thread unless the caller sets a `ThreadSensitiveContext`, as Django's ASGI
handler does per HTTP request. Answers run outside any request, so without lanes a hundred
concurrent questions would search one after another. Here each answer borrows a lane for what
needs the database before its first token (saving the turn, rewriting, searching) and gives it
back before the LLM streams; `DB_LANES` bounds the parallelism (and the connections used) to what
two cores and PostgreSQL can use. A lane keeps its connection between jobs (no reconnect per
question) and drops it after a database error, so a restarted database heals on the next job.

Within one search, BM25 and dense retrieval run at the same time on lanes of their own
(`search_db_lanes`; the answer holds a `search_lanes` one meanwhile), except inside a transaction
(another connection would not see its uncommitted rows) or with `SEARCH_DB_THREADS` = 0: then on
the caller's connection. Every lane has the same retry policy (`_guarded`).

Three pools besides: `write_lane` for the saves of streaming answers, `socket_lanes` for the
reads a socket waits on (who is asking, may they), so neither queues behind the other or a search.
"""

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.conf import settings
from django.db import InterfaceError, OperationalError, connections

# Answers in parallel before their first token. A lane spends most of its time waiting, not
# computing: on PostgreSQL, on the commit reaching the disk, on the GIL (in a burst of 100 chats
# saving a turn took 25-70 ms on its lane for 3-4 ms of the thread's CPU, and a search ~100 ms for
# ~20 ms), so with 3 lanes the answers queued for a lane while the CPU was not all used:
# `manage.py bench_chat concurrent`, 8 lanes against 3, docs/BENCHMARKS.md (session 11).
DB_LANES = 8
# Lanes for the socket's reads (`socket_lanes`): two, so one slow read does not hold up the rest.
SOCKET_LANES = 2


def _kept_connection_is_dead() -> bool:
    connection = connections["default"]
    return connection.connection is not None and not connection.is_usable()


def _guarded(fn, *args):
    kept = connections["default"].connection  # the lane's connection from an earlier job, if any
    try:
        return fn(*args)
    except (InterfaceError, OperationalError):
        # Dead, not merely failing: the server closed it (Django may already have opened a
        # new one while leaving a transaction, so look at the one the job started on).
        died = kept is not None and kept.closed
        connections.close_all()  # a broken connection is replaced on the lane's next job
        if not died:
            raise
    # The connection kept from an earlier job had died (the database restarted since): the job
    # failed on its first query, before anything committed, so it runs once more on a new one.
    return fn(*args)


def _replace_dead_connection() -> None:
    """Django's health check (CONN_HEALTH_CHECKS), which only runs per HTTP request: a lane
    lends its connection to a whole block of async code, whose first query must not fail on a
    connection the database closed while the lane was idle."""
    if _kept_connection_is_dead():
        connections.close_all()


class Lanes:
    def __init__(self, count: int, name: str):
        self.executors = [
            ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{name}-{i}") for i in range(count)
        ]
        self._free: tuple[asyncio.AbstractEventLoop, asyncio.Queue] | None = None

    def _queue(self) -> asyncio.Queue:
        # A queue belongs to one event loop: the server has one, a test suite one per test.
        loop = asyncio.get_running_loop()
        if self._free is None or self._free[0] is not loop:
            queue: asyncio.Queue = asyncio.Queue()
            for executor in self.executors:
                queue.put_nowait(executor)
            self._free = (loop, queue)
        return self._free[1]

    @contextlib.asynccontextmanager
    async def lane(self) -> AsyncIterator[ThreadPoolExecutor]:
        queue = self._queue()
        executor = await queue.get()
        try:
            yield executor
        finally:
            queue.put_nowait(executor)

    async def run(self, fn, *args):
        """`fn(*args)` (sync ORM code) on a free lane."""
        async with self.lane() as executor:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(executor, functools.partial(_guarded, fn, *args))

    @contextlib.asynccontextmanager
    async def context(self) -> AsyncIterator[None]:
        """Borrow a lane for a block of async code: its thread-sensitive calls (the async ORM,
        `sync_to_async`) run on the lane's thread, with the lane's connection."""
        async with self.lane() as executor:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(executor, _replace_dead_connection)
            try:
                async with ThreadSensitiveContext(executor=executor):
                    yield
            except (InterfaceError, OperationalError):
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(executor, connections.close_all)
                raise

    def close_connections(self) -> None:
        # Only lanes whose thread has started hold a connection.
        for future in [e.submit(connections.close_all) for e in self.executors if e._threads]:
            future.result()


# Saving the turn, searching and rewriting: the work before the first token.
search_lanes = Lanes(DB_LANES, "chat-lane")
# Partial and final saves of streaming answers: short writes that should never wait for a search.
write_lane = Lanes(1, "chat-write")
# The socket's own reads, each awaited by a user: the user's look-up at the handshake, ownership,
# the session check before each frame, the saved state of an answer in progress. Never behind an
# answer's saves (each of which waits for its commit to reach the disk), nor behind a search: in
# a burst of 100 new chats on the write lane, the check before each `ask` waited 0.4-1.2 s (p50)
# behind ~400 saves (docs/BENCHMARKS.md, session 11).
socket_lanes = Lanes(SOCKET_LANES, "chat-socket")
# BM25 beside dense retrieval, within one search.
search_db_lanes = Lanes(settings.SEARCH_DB_THREADS, "search-db")


def close_connections() -> None:
    """Close every lane's connection (tests and scratch databases, before a database is dropped;
    from async code, through `sync_to_async(..., thread_sensitive=False)`)."""
    for lanes in (search_lanes, write_lane, socket_lanes, search_db_lanes):
        lanes.close_connections()


def _in_transaction() -> bool:
    return connections["default"].in_atomic_block


async def may_run_in_parallel() -> bool:
    """Whether a search may use `search_db_lanes` (see the module docstring)."""
    if settings.SEARCH_DB_THREADS <= 0:
        return False
    return not await sync_to_async(_in_transaction)()


async def run_search_sql(fn, *args, parallel: bool):
    """`fn(*args)` on a search lane (parallel) or on the caller's connection (not parallel)."""
    if parallel:
        return await search_db_lanes.run(fn, *args)
    return await sync_to_async(fn)(*args)

"""Where search runs its SQL without blocking the event loop.

BM25 and dense retrieval are independent once the query is embedded, so they run at the same
time on two connections: each in a thread of a small pool (`SEARCH_DB_THREADS`) that keeps its
own connection open between searches. Two exceptions run on the caller's connection, one query
after the other (Django's thread-sensitive executor):

- the caller is inside a transaction (`atomic`): another connection would not see its
  uncommitted rows (tests, a job that writes then searches);
- `SEARCH_DB_THREADS` is 0.

A pooled connection that broke (server restart) is closed and the work retried once.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, connections

_executor: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(
                max_workers=settings.SEARCH_DB_THREADS, thread_name_prefix="search-db"
            )
        return _executor


def _in_transaction() -> bool:
    return connection.in_atomic_block


async def may_run_in_parallel() -> bool:
    """Whether this search may use the pooled connections (see the module docstring)."""
    if settings.SEARCH_DB_THREADS <= 0:
        return False
    return not await sync_to_async(_in_transaction)()


def _retrying(fn):
    def run(*args):
        kept = connection.connection  # this thread's connection from an earlier search, if any
        try:
            return fn(*args)
        except (OperationalError, InterfaceError):
            # Look at the connection the work started on: leaving a transaction, Django may
            # already have replaced a dead one with a new (usable) connection.
            if kept is None or not kept.closed:
                raise  # a real error, not a dead connection
            connection.close()
            return fn(*args)

    return run


async def run(fn, *args, parallel: bool):
    """`fn(*args)` on a pooled connection (parallel) or on the caller's (not parallel)."""
    if parallel:
        return await sync_to_async(_retrying(fn), thread_sensitive=False, executor=_pool())(*args)
    return await sync_to_async(fn)(*args)


def close_connections() -> None:
    """Close every pooled thread's connection (before dropping a database, at a test's end).

    One task per live thread, held at a barrier so that each thread takes exactly one."""
    with _lock:
        executor = _executor
    if executor is None:
        return
    threads = len(executor._threads)
    if threads == 0:
        return
    barrier = threading.Barrier(threads)

    def close():
        barrier.wait(timeout=10)
        connections.close_all()

    for future in [executor.submit(close) for _ in range(threads)]:
        future.result()

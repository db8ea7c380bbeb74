"""PostgreSQL from the event loop itself: a few psycopg AsyncConnections per event loop, lent to
one job at a time, for the short reads and writes a socket or an ask waits on (chat.turn_store).

Why not the ORM or chat.lanes: Django's async ORM methods still run each query on a thread
(`sync_to_async`), as a lane job does, and in a burst of 100 chats one daphne process spent more
CPU on the ORM's query building and the hand-offs to threads and back than on the SQL
(docs/BENCHMARKS.md, "TTFT, session 18"). Here the SQL is written once per model from its
fields (`select`, `insert`), and the rows come back as model instances with Django's own
conversions, so the models stay the one home of columns, defaults and JSON encoding.

The same rules as the lanes: a connection is kept between jobs, dropped after a database error,
and a job whose kept connection had died (the database restarted since) runs once more on a new
one. psycopg's errors come out as Django's (IntegrityError, OperationalError, InterfaceError) with
psycopg's as the cause, so callers handle one family (security.errors.DATABASE_DOWN).
"""

import asyncio
import contextlib
import weakref
from collections.abc import Sequence

import psycopg
from django.db import IntegrityError, InterfaceError, OperationalError, connections

# Connections per event loop: the turns and socket reads of a burst in parallel, as many as
# chat.lanes.DB_LANES lets answers search at once.
CONNECTIONS = 8

# Statements executed on these connections (tests hold the turn's statements to a ceiling).
statements = 0


class CountingCursor(psycopg.AsyncCursor):
    async def execute(self, query, params=None, **kwargs):
        global statements
        statements += 1
        return await super().execute(query, params, **kwargs)


class _Pool:
    def __init__(self):
        self.queue: asyncio.Queue = asyncio.Queue()
        self.open: set[psycopg.AsyncConnection] = set()
        for _ in range(CONNECTIONS):
            self.queue.put_nowait(None)  # a free place, connected on first use

    def finish(self) -> None:
        """Close every connection at once, without the loop (which may be closed): libpq's own."""
        for conn in self.open:
            conn.pgconn.finish()
        self.open.clear()


# One pool per event loop: a connection belongs to the loop it was opened on (the server has
# one; a test suite one per test, and async_to_sync one per call).
_pools: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Pool]" = weakref.WeakKeyDictionary()


def _pool() -> _Pool:
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None:
        for other, old in list(_pools.items()):
            if other.is_closed():
                old.finish()
                del _pools[other]
        pool = _pools[loop] = _Pool()
    return pool


def close_connections() -> None:
    """Close every pool's connections (tests and scratch databases, before a database is
    dropped; see chat.lanes.close_connections)."""
    for pool in list(_pools.values()):
        pool.finish()


@contextlib.contextmanager
def as_django_errors():
    try:
        yield
    except psycopg.IntegrityError as exc:
        raise IntegrityError(*exc.args) from exc
    except psycopg.OperationalError as exc:
        raise OperationalError(*exc.args) from exc
    except psycopg.InterfaceError as exc:
        raise InterfaceError(*exc.args) from exc


async def _connect() -> psycopg.AsyncConnection:
    params = connections["default"].get_connection_params()
    params.pop("cursor_factory", None)  # Django's is a sync cursor
    # Django's `context` stays: its adapters (JSON as text for the fields' own decoding,
    # datetimes in its time zone) are what the models' conversions expect.
    with as_django_errors():
        conn = await psycopg.AsyncConnection.connect(**params, autocommit=True)
        await conn.execute("SET TIME ZONE 'UTC'")  # as Django's connections: timestamps in UTC
    conn.cursor_factory = CountingCursor  # the jobs' statements from here on
    return conn


async def run(job, *args):
    """`await job(connection, *args)` on a lent connection (autocommit: a job opens its own
    transaction with `connection.transaction()`)."""
    pool = _pool()
    conn = await pool.queue.get()
    try:
        kept = conn is not None and not conn.closed
        if not kept:
            conn = None
            conn = await _connect()
            pool.open.add(conn)
        try:
            with as_django_errors():
                return await job(conn, *args)
        except (OperationalError, InterfaceError):
            if not conn.closed:
                raise  # a failing query on a live connection: the caller's to handle
            pool.open.discard(conn)
            conn = None
            if not kept:
                raise
        # The connection kept from an earlier job had died: the job failed on its first query,
        # before anything committed, so it runs once more on a new one.
        conn = await _connect()
        pool.open.add(conn)
        with as_django_errors():
            return await job(conn, *args)
    except BaseException:
        # A job cancelled mid-query, or a dead connection: never lend it again.
        if conn is not None and (conn.closed or conn.info.transaction_status != 0):
            pool.open.discard(conn)
            await _close_quietly(conn)
            conn = None
        raise
    finally:
        pool.queue.put_nowait(conn)


async def _close_quietly(conn: psycopg.AsyncConnection) -> None:
    with contextlib.suppress(Exception):
        conn.pgconn.finish()


# --- SQL from the models ------------------------------------------------------------------------


def _columns(model, fields: Sequence[str]):
    """The fields named, in the model's order (`Model.from_db` takes the values in that order)."""
    wanted = {model._meta.get_field(name) for name in fields}
    return [field for field in model._meta.concrete_fields if field in wanted]


def select_sql(model, fields: Sequence[str], where: str, suffix: str = "") -> str:
    """`SELECT <fields' columns> FROM <model's table> WHERE <where> <suffix>`; `where` and
    `suffix` name columns (their `column`, e.g. thread_id) with %s placeholders."""
    columns = ", ".join(f'"{f.column}"' for f in _columns(model, fields))
    return f'SELECT {columns} FROM "{model._meta.db_table}" WHERE {where} {suffix}'


async def select(cursor, model, fields: Sequence[str], where: str, params, suffix: str = ""):
    """Instances of `model` with only `fields` loaded, as the ORM's `.only(*fields)` gives them
    (each value through its field's `from_db_value`, as the ORM does)."""
    await cursor.execute(select_sql(model, fields, where, suffix), params)
    return await fetch(cursor, model, fields)


async def fetch(cursor, model, fields: Sequence[str]):
    """`select`'s instances, from a cursor that executed `select_sql(model, fields, …)` (in a
    pipeline, several statements are sent before the first result is read)."""
    columns = _columns(model, fields)
    wrapper = connections["default"]
    converters = [
        (i, field.from_db_value) for i, field in enumerate(columns) if hasattr(field, "from_db_value")
    ]
    names = [field.attname for field in columns]
    instances = []
    for row in await cursor.fetchall():
        values = list(row)
        for i, convert in converters:
            values[i] = convert(values[i], None, wrapper)
        instances.append(model.from_db("default", names, values))
    return instances


async def insert(cursor, instance) -> None:
    """INSERT `instance` as `save()` would a new row: every concrete field, its `pre_save`
    (auto_now, auto_now_add) and its database value, defaults set by the model."""
    wrapper = connections["default"]
    meta = instance._meta
    # An auto-increment key is the database's to give, as in the ORM's INSERT.
    fields = [
        f for f in meta.concrete_fields
        if not (f is meta.auto_field and getattr(instance, f.attname) is None)
    ]
    values = [f.get_db_prep_save(f.pre_save(instance, add=True), wrapper) for f in fields]
    columns = ", ".join(f'"{f.column}"' for f in fields)
    places = ", ".join(["%s"] * len(fields))
    await cursor.execute(
        f'INSERT INTO "{instance._meta.db_table}" ({columns}) VALUES ({places})', values
    )
    instance._state.adding = False


async def update(cursor, model, where: str, params, **fields) -> int:
    """UPDATE `model`'s rows matching `where` with `fields` (field names); the row count."""
    wrapper = connections["default"]
    sets, values = [], []
    for name, value in fields.items():
        field = model._meta.get_field(name)
        sets.append(f'"{field.column}" = %s')
        values.append(field.get_db_prep_save(value, wrapper))
    await cursor.execute(
        f'UPDATE "{model._meta.db_table}" SET {", ".join(sets)} WHERE {where}', [*values, *params]
    )
    return cursor.rowcount

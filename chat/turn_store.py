"""What an ask and a socket's opening wait on in the database, run on the event loop's own
connections (chat.async_db) instead of a thread: saving a turn (with the socket's session check),
whether a user owns a thread, and the state of its answer in progress.

The SQL is the ORM's of chat.turns before (session 18, docs/BENCHMARKS.md): the same rows, locks,
order and transaction; the rules around it (stale answers, history, limits) are chat.turns'.
"""

import math
from importlib import import_module

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.db import IntegrityError
from django.utils import timezone

from chat import async_db, events, processes
from chat.models import Ask, Message, Thread
from chat.references import labels_of
from chat.scopes import scope_of
from chat.signed_in import session_signs_in
from chat.turns import (
    CHECKED,
    INTERRUPTED,
    RATE_WINDOW,
    AskRefused,
    NewTurn,
    SignedOut,
    dead_answers,
    history_of,
)

Status = Message.Status
Role = Message.Role

NOT_FOUND = "This chat does not exist (it may have been deleted)."


async def create_turn(user_id: int, thread_id, question: str, session_key=CHECKED) -> NewTurn:
    """Save the question and a streaming answer row; with `session_key` (a socket's), first check
    that this session still signs the user in (raises SignedOut), behind the user's lock, so a
    password change that commits first is seen. Raises AskRefused (not_found, busy,
    rate_limited)."""
    return await async_db.run(_create_turn, user_id, thread_id, question, session_key)


# The turn's reads, sent together (one round trip in a pipeline): in a burst the event loop
# serves every socket between two round trips of a turn, so a turn of ten sequential statements
# held its connection and its locks for ten turns of a saturated loop.
MESSAGE_FIELDS = (
    "id", "role", "content", "query", "analysis", "sources", "status", "runner", "updated_at",
)
THREAD_FIELDS = ("id", "title", "scope")


async def _create_turn(conn, user_id, thread_id, question, session_key) -> NewTurn:
    now = timezone.now()
    limit = settings.CHAT_RATE_LIMIT_PER_MINUTE
    checks_session = session_key is not CHECKED
    async with conn.pipeline() as pipeline, conn.transaction():
        # Lock the user first, then the thread (always this order, so no deadlock): parallel asks
        # from several sockets or processes then count each other in the rate limit.
        user_model = get_user_model()
        await conn.cursor().execute(
            f'SELECT 1 FROM "{user_model._meta.db_table}" WHERE "{user_model._meta.pk.column}" = %s'
            " FOR UPDATE",
            [user_id],
        )
        session_reads = await _send_session_reads(conn, session_key, user_id, now) if checks_session else None
        thread_rows = conn.cursor()
        await thread_rows.execute(
            async_db.select_sql(Thread, THREAD_FIELDS, "id = %s AND owner_id = %s", "FOR UPDATE"),
            [thread_id, user_id],
        )
        # One read of the thread for the answer in progress, the history (its last turns) and
        # the reference numbers (every answer's sources).
        message_rows = conn.cursor()
        await message_rows.execute(
            async_db.select_sql(Message, MESSAGE_FIELDS, "thread_id = %s", "ORDER BY created_at"),
            [thread_id],
        )
        ask_rows = conn.cursor()
        if limit > 0:
            await ask_rows.execute(
                async_db.select_sql(Ask, ("asked_at",), "user_id = %s", "ORDER BY asked_at"), [user_id]
            )
        # The first read waits for them all.
        if checks_session and not await _signed_in(session_reads, user_id):
            raise SignedOut
        found = await async_db.fetch(thread_rows, Thread, THREAD_FIELDS)
        if not found:
            raise AskRefused("not_found", NOT_FOUND)
        thread = found[0]
        messages = await async_db.fetch(message_rows, Message, MESSAGE_FIELDS)
        streaming = [m for m in messages if m.status == Status.STREAMING]
        if len(await _fail_dead(conn.cursor(), streaming, now)) < len(streaming):
            raise AskRefused("busy", "An answer is already being written in this chat; wait or stop it.")
        if limit > 0:
            asks = await async_db.fetch(ask_rows, Ask, ("asked_at",))
            await _check_rate(conn.cursor(), [ask.asked_at for ask in asks], user_id, now, limit)
        history = history_of(messages)
        earlier_labels = labels_of(m.sources for m in messages if m.role == Role.ASSISTANT)
        user_message = Message(
            thread_id=thread.pk, role=Role.USER, content=question, status=Status.COMPLETE
        )
        message = Message(
            thread_id=thread.pk, role=Role.ASSISTANT, status=Status.STREAMING,
            runner=processes.this_process(),
        )
        cursor = conn.cursor()
        try:
            await async_db.insert(cursor, user_message)
            await async_db.insert(cursor, message)
            await pipeline.sync()  # a refusal is raised here, inside the transaction
        except IntegrityError:
            # The partial unique constraint: another process got there first. Leaving the
            # transaction rolls the question back too.
            raise AskRefused("busy", "An answer is already being written in this chat.") from None
        if limit > 0:
            await async_db.insert(cursor, Ask(user_id=user_id, asked_at=now))
        title = thread.title or Thread.title_from_question(question)
        await async_db.update(cursor, Thread, "id = %s", [thread.pk], title=title, updated_at=timezone.now())
    scope = scope_of(thread)
    return NewTurn(
        thread.pk, user_message.pk, message.pk, question, history,
        scope_ids=scope.paper_ids if scope is not None else None,
        earlier_labels=earlier_labels,
    )


async def _check_rate(cursor, times: list, user_id, now, limit: int) -> None:
    # Asks, not Message rows: deleting threads must not give the quota back. Older asks are
    # deleted when there are some (at most once a minute per user).
    if times and times[0] < now - RATE_WINDOW:
        await cursor.execute(
            f'DELETE FROM "{Ask._meta.db_table}" WHERE user_id = %s AND asked_at < %s',
            [user_id, now - RATE_WINDOW],
        )
        times = [t for t in times if t >= now - RATE_WINDOW]
    if len(times) >= limit:
        retry_after = max(1, math.ceil((times[-limit] + RATE_WINDOW - now).total_seconds()))
        raise AskRefused(
            "rate_limited",
            f"You can ask {limit} questions a minute; try again in {retry_after} s.",
            retry_after=retry_after,
        )


async def _fail_dead(cursor, rows: list, now) -> list:
    """chat.turns' stale answers, failed: the pks of `rows` (streaming) whose process is gone."""
    dead = dead_answers(rows, now)
    if dead:
        await async_db.update(
            cursor, Message, "id = ANY(%s) AND status = %s", [dead, Status.STREAMING],
            status=Status.FAILED, error=INTERRUPTED,
        )
    return dead


SESSION_FIELDS = ("session_data",)


async def _send_session_reads(conn, session_key, user_id: int, now):
    """The two reads of chat.signed_in.still_signed_in, sent: the session row as Django's
    database session engine reads it (unexpired), and the user row."""
    store = import_module(settings.SESSION_ENGINE).SessionStore
    sessions, users = conn.cursor(), conn.cursor()
    await sessions.execute(
        async_db.select_sql(
            store.get_model_class(), SESSION_FIELDS, "session_key = %s AND expire_date > %s"
        ),
        [session_key or "", now],
    )
    user_model = get_user_model()
    await users.execute(
        async_db.select_sql(user_model, _user_fields(), f'"{user_model._meta.pk.column}" = %s'),
        [user_id],
    )
    return store, sessions, users


def _user_fields() -> tuple[str, ...]:
    return (get_user_model()._meta.pk.name, "password", "is_active")


async def _signed_in(reads, user_id: int) -> bool:
    """chat.signed_in.still_signed_in on the rows `_send_session_reads` asked for: the session
    decoded by its engine; the user as ModelBackend.get_user gives it (the project's backends;
    any other signs nobody in here)."""
    store, sessions, users = reads
    found = await async_db.fetch(sessions, store.get_model_class(), SESSION_FIELDS)
    user = await async_db.fetch(users, get_user_model(), _user_fields())
    if not found:  # no session key, or the session was flushed or expired
        return False
    session = store().decode(found[0].session_data)

    def user_of(backend):
        if not user or not isinstance(backend, ModelBackend):
            return None
        return user[0] if backend.user_can_authenticate(user[0]) else None

    return session_signs_in(session, user_id, user_of)


async def owns_thread(user_id: int, thread_id) -> bool:
    """Whether the thread exists and is the user's."""
    return await async_db.run(_owns_thread, user_id, thread_id)


async def _owns_thread(conn, user_id, thread_id) -> bool:
    cursor = conn.cursor()
    await cursor.execute(
        f'SELECT 1 FROM "{Thread._meta.db_table}" WHERE id = %s AND owner_id = %s',
        [thread_id, user_id],
    )
    return await cursor.fetchone() is not None


async def streaming_snapshot(thread_id) -> dict | None:
    """The `resume` of the thread's answer in progress as last saved, or None (an answer whose
    process is gone is failed, not resumed)."""
    return await async_db.run(_streaming_snapshot, thread_id)


async def _streaming_snapshot(conn, thread_id) -> dict | None:
    cursor = conn.cursor()
    rows = await async_db.select(
        cursor, Message,
        ("id", "runner", "updated_at", "created_at", "query", "analysis", "sources", "content", "status"),
        "thread_id = %s AND status = %s", [thread_id, Status.STREAMING], "ORDER BY created_at",
    )
    dead = await _fail_dead(cursor, rows, timezone.now())
    live = [row for row in rows if row.pk not in dead]
    if not live:
        return None
    message = live[0]
    questions = await async_db.select(
        cursor, Message, ("id", "content"),
        "thread_id = %s AND role = %s AND created_at <= %s", [thread_id, Role.USER, message.created_at],
        "ORDER BY created_at DESC LIMIT 1",
    )
    question = questions[0] if questions else None
    return events.resume(
        message.pk, str(question.pk) if question else None, question.content if question else "",
        message.query, message.analysis, message.sources, message.content, message.status,
    )

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


async def _create_turn(conn, user_id, thread_id, question, session_key) -> NewTurn:
    now = timezone.now()
    async with conn.transaction():
        cursor = conn.cursor()
        # Lock the user first, then the thread (always this order, so no deadlock): parallel asks
        # from several sockets or processes then count each other in the rate limit.
        user_model = get_user_model()
        await cursor.execute(
            f'SELECT 1 FROM "{user_model._meta.db_table}" WHERE "{user_model._meta.pk.column}" = %s'
            " FOR UPDATE",
            [user_id],
        )
        if session_key is not CHECKED and not await _signed_in(cursor, session_key, user_id, now):
            raise SignedOut
        found = await async_db.select(
            cursor, Thread, ("id", "title", "scope"), "id = %s AND owner_id = %s", [thread_id, user_id],
            "FOR UPDATE",
        )
        if not found:
            raise AskRefused("not_found", NOT_FOUND)
        thread = found[0]
        # One read of the thread for the answer in progress, the history (its last turns) and
        # the reference numbers (every answer's sources).
        messages = await async_db.select(
            cursor, Message,
            ("id", "role", "content", "query", "analysis", "sources", "status", "runner", "updated_at"),
            "thread_id = %s", [thread.pk], "ORDER BY created_at",
        )
        streaming = [m for m in messages if m.status == Status.STREAMING]
        if len(await _fail_dead(cursor, streaming, now)) < len(streaming):
            raise AskRefused("busy", "An answer is already being written in this chat; wait or stop it.")
        limit = settings.CHAT_RATE_LIMIT_PER_MINUTE
        if limit > 0:
            await _check_rate(cursor, user_id, now, limit)
        history = history_of(messages)
        earlier_labels = labels_of(m.sources for m in messages if m.role == Role.ASSISTANT)
        user_message = Message(
            thread_id=thread.pk, role=Role.USER, content=question, status=Status.COMPLETE
        )
        message = Message(
            thread_id=thread.pk, role=Role.ASSISTANT, status=Status.STREAMING,
            runner=processes.this_process(),
        )
        try:
            await async_db.insert(cursor, user_message)
            await async_db.insert(cursor, message)
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


async def _check_rate(cursor, user_id, now, limit: int) -> None:
    # Asks, not Message rows: deleting threads must not give the quota back. Older asks are
    # deleted when there are some (at most once a minute per user).
    asks = await async_db.select(cursor, Ask, ("asked_at",), "user_id = %s", [user_id], "ORDER BY asked_at")
    times = [ask.asked_at for ask in asks]
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


async def _signed_in(cursor, session_key, user_id: int, now) -> bool:
    """chat.signed_in.still_signed_in, its two reads on this connection: the session row as
    Django's database session engine reads it (unexpired), decoded by that engine; the user as
    ModelBackend.get_user gives it (the project's backends; any other signs nobody in here)."""
    if not session_key:
        return False
    store = import_module(settings.SESSION_ENGINE).SessionStore
    session_model = store.get_model_class()
    sessions = await async_db.select(
        cursor, session_model, ("session_data",), "session_key = %s AND expire_date > %s",
        [session_key, now],
    )
    if not sessions:
        return False
    session = store().decode(sessions[0].session_data)
    user_model = get_user_model()
    users = await async_db.select(
        cursor, user_model, (user_model._meta.pk.name, "password", "is_active"),
        f'"{user_model._meta.pk.column}" = %s', [user_id],
    )

    def user_of(backend):
        if not users or not isinstance(backend, ModelBackend):
            return None
        return users[0] if backend.user_can_authenticate(users[0]) else None

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

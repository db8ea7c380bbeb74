"""The database side of answers: limits, the rows of a turn, history, stale answers (sync code,
each function in one transaction, run on chat.lanes).

One answer in progress per thread is held by the database (a partial unique constraint on
streaming messages). A streaming row whose process is gone is marked failed when someone next
asks, stops or opens the thread, so a crash never locks a thread: at once when the row's process
ran on this host and has died (chat.processes), else once nobody has saved the row for
STALE_AFTER (its heartbeat, chat.runner.HEARTBEAT_INTERVAL, stopped).
"""

import math
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from chat import events, processes
from chat.models import Ask, Message, Thread
from chat.pipeline.rewrite import TOPIC_TURNS, Turn
from chat.references import labels_of
from chat.scopes import scope_of
from chat.signed_in import still_signed_in
from chat.understanding.overrides import parse_filters
from security import inputs
from security.errors import DATABASE_DOWN, DATABASE_DOWN_MESSAGE, reason  # noqa: F401 (used by callers)

# A streaming row untouched this long belongs to a process that died (for a process on another
# host; one on this host is checked directly). Well over the final save's patience with a
# restarting database (chat.runner.FINAL_SAVE_PATIENCE).
STALE_AFTER = timedelta(seconds=60)
INTERRUPTED = "Interrupted: the server stopped while answering."
RATE_WINDOW = timedelta(minutes=1)

Status = Message.Status
Role = Message.Role


class AskRefused(Exception):
    """An ask or stop the service will not carry out; becomes an `error` event as it is."""

    def __init__(self, code: str, message: str, **extra: Any):
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra

    def event(self) -> dict:
        return events.error(self.code, self.message, **self.extra)


def validate_question(text: Any) -> str:
    if not isinstance(text, str):
        raise AskRefused("invalid_question", "The question must be text.")
    if (problem := inputs.problem(text)) is not None:
        raise AskRefused("invalid_question", problem)
    question = text.strip()
    if not question:
        raise AskRefused("empty_question", "Type a question first.")
    limit = settings.CHAT_MAX_QUESTION_CHARS
    if len(question) > limit:
        raise AskRefused(
            "question_too_long",
            f"Questions are limited to {limit} characters; this one has {len(question)}.",
            limit=limit,
        )
    return question


def validate_filters(data: Any) -> dict:
    """The filters sent with a question (an edited chip), checked; {} when none were sent."""
    try:
        return parse_filters(data)
    except (ValueError, TypeError) as exc:
        raise AskRefused("invalid_filters", f"These filters cannot be used: {exc}.") from None


def update_message(message_id, only_streaming: bool = False, durable: bool = True, **fields) -> int:
    """Write `fields` on the message (only while it is streaming, with `only_streaming`).

    `durable=False` for the saves made while an answer streams (its sources, its partial text),
    which its final save writes again: the commit does not wait for the disk (PostgreSQL's
    `synchronous_commit` off for this transaction only). With many answers at once those waits
    were most of the write lane's time, ~300 a burst of 100 chats, each 1-4 ms on this machine
    (docs/BENCHMARKS.md, session 11). What it risks: a crash of PostgreSQL itself (not of this
    process) within a fraction of a second may lose the last partial save, as a crash of this
    process loses up to chat.runner.SAVE_INTERVAL of text anyway; later commits never land
    before earlier ones."""
    rows = Message.objects.filter(pk=message_id)
    if only_streaming:
        rows = rows.filter(status=Status.STREAMING)
    if durable:
        return rows.update(**fields)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
        return rows.update(**fields)


def finish_message(message_id, thread_id, **fields) -> None:
    """An answer's last save and its thread's `updated_at`, in one transaction: one commit that
    waits for the disk, where two did."""
    with transaction.atomic():
        update_message(message_id, **fields)
        Thread.objects.filter(pk=thread_id).update(updated_at=timezone.now())


@dataclass
class NewTurn:
    thread_id: uuid.UUID
    user_message_id: uuid.UUID
    message_id: uuid.UUID
    question: str
    history: list[Turn] = field(default_factory=list)
    filters: dict = field(default_factory=dict)  # set on the chips; {}: as the question says
    # A scoped thread's papers (chat.scopes): the only ones searched and cited; None: all.
    scope_ids: tuple[int, ...] | None = None
    # The thread's reference numbers so far (chat.references): paper key -> label.
    earlier_labels: dict[str, int] = field(default_factory=dict)


def _streaming(thread_id, now, fields=("pk", "runner", "updated_at")) -> tuple[int, list]:
    """Fail the thread's streaming answers whose process is gone (known dead: it ran on this
    host; or silent for STALE_AFTER) and return how many, with the rows still streaming: one
    query when none is stale, the usual case."""
    rows = list(Message.objects.filter(thread_id=thread_id, status=Status.STREAMING).only(*fields))
    return _fail_dead(rows, now)


def _fail_dead(rows: list, now) -> tuple[int, list]:
    """`_streaming` for streaming rows already read (pk, runner, updated_at)."""
    dead = [
        row.pk for row in rows
        if row.updated_at < now - STALE_AFTER or processes.is_gone(row.runner)
    ]
    if not dead:
        return 0, rows
    failed = Message.objects.filter(pk__in=dead, status=Status.STREAMING).update(
        status=Status.FAILED, error=INTERRUPTED
    )
    return failed, [row for row in rows if row.pk not in dead]


def fail_stale(thread_id, now=None) -> int:
    """Mark failed the thread's streaming answer if its process is gone: known dead (it ran on
    this host), or silent for STALE_AFTER."""
    return _streaming(thread_id, now or timezone.now())[0]


def _of_all(previous: dict) -> bool:
    """Whether a follow-up on an answer's papers (its analysis's `previous`) asked something of
    all of them (several), picking none: no filter, no window, no places."""
    return (
        previous.get("referred", 0) > 1
        and previous.get("referred") == previous.get("shown")
        and not previous.get("filtered")
        and not previous.get("windowed")
    )


def _named(named: dict) -> tuple[tuple[str, str], ...]:
    """The papers an answer's question named (its analysis's `named`): (name as asked, arXiv
    id), one a paper."""
    by_paper = {p.get("arxiv_id"): p.get("asked") for p in named.get("papers", []) if p.get("asked")}
    return tuple((asked, arxiv_id) for arxiv_id, asked in by_paper.items())


def _history(messages: list) -> list[Turn]:
    """The last TOPIC_TURNS turns of the thread's `messages` (oldest first)."""
    turns = []
    for message in messages[-2 * TOPIC_TURNS :]:
        if message.role == Role.USER:
            turns.append(Turn(question=message.content))
        elif turns:
            last = turns[-1]
            turns[-1] = Turn(
                question=last.question,
                query=message.query,
                answer=message.content,
                # The analysis's `query` is the topic with the time phrase cut out.
                topic=str((message.analysis or {}).get("query") or ""),
                # What "which of these…" and "the second one" refer to.
                sources=tuple(message.sources or ()),
                on_sources=(message.analysis or {}).get("followup_of") is not None,
                of_all=_of_all((message.analysis or {}).get("previous") or {}),
                named=_named((message.analysis or {}).get("named") or {}),
            )
    return turns


class SignedOut(Exception):
    """The session a socket asks with no longer signs its user in (chat.signed_in)."""


# `create_turn`'s caller has checked who is asking (an HTTP request, at its start).
CHECKED = object()


def create_turn(user_id: int, thread_id, question: str, session_key=CHECKED) -> NewTurn:
    """Save the question and a streaming answer row; with `session_key` (a socket's), first check
    that this session still signs the user in (raises SignedOut). The check is here, not in a
    job of its own before this one, so an ask queues for one lane, not two (docs/BENCHMARKS.md,
    session 13); behind the user's lock, so a password change that commits first is seen."""
    now = timezone.now()
    with transaction.atomic():
        # Lock the user first, then the thread (always this order, so no deadlock): parallel asks
        # from several sockets or processes then count each other in the rate limit.
        list(get_user_model().objects.select_for_update().filter(pk=user_id).values_list("pk"))
        if session_key is not CHECKED and not still_signed_in(session_key, user_id):
            raise SignedOut
        thread = Thread.objects.select_for_update().filter(pk=thread_id, owner_id=user_id).first()
        if thread is None:
            raise AskRefused("not_found", "This chat does not exist (it may have been deleted).")
        # One read of the thread for the answer in progress, the history (its last turns) and
        # the reference numbers (every answer's sources).
        messages = list(
            Message.objects.filter(thread=thread)
            .order_by("created_at")
            .only("role", "content", "query", "analysis", "sources", "status", "runner",
                  "updated_at")
        )
        if _fail_dead([m for m in messages if m.status == Status.STREAMING], now)[1]:
            raise AskRefused("busy", "An answer is already being written in this chat; wait or stop it.")
        limit = settings.CHAT_RATE_LIMIT_PER_MINUTE
        if limit > 0:
            # Asks, not Message rows: deleting threads must not give the quota back. Older asks
            # are deleted when there are some (at most once a minute per user).
            asks = Ask.objects.filter(user_id=user_id)
            times = list(asks.order_by("asked_at").values_list("asked_at", flat=True))
            if times and times[0] < now - RATE_WINDOW:
                asks.filter(asked_at__lt=now - RATE_WINDOW).delete()
                times = [t for t in times if t >= now - RATE_WINDOW]
            if len(times) >= limit:
                retry_after = max(1, math.ceil((times[-limit] + RATE_WINDOW - now).total_seconds()))
                raise AskRefused(
                    "rate_limited",
                    f"You can ask {limit} questions a minute; try again in {retry_after} s.",
                    retry_after=retry_after,
                )
        history = _history(messages)
        earlier_labels = labels_of(m.sources for m in messages if m.role == Role.ASSISTANT)
        try:
            user_message = Message.objects.create(
                thread=thread, role=Role.USER, content=question, status=Status.COMPLETE
            )
            message = Message.objects.create(
                thread=thread, role=Role.ASSISTANT, status=Status.STREAMING,
                runner=processes.this_process(),
            )
        except IntegrityError:
            # The partial unique constraint: another process got there first. No savepoint is
            # needed: the refusal leaves the transaction, which rolls the question back too.
            raise AskRefused("busy", "An answer is already being written in this chat.") from None
        if limit > 0:
            Ask.objects.create(user_id=user_id, asked_at=now)
        if not thread.title:
            thread.title = Thread.title_from_question(question)
        thread.save(update_fields=["title", "updated_at"])
    scope = scope_of(thread)
    return NewTurn(
        thread.pk, user_message.pk, message.pk, question, history,
        scope_ids=scope.paper_ids if scope is not None else None,
        earlier_labels=earlier_labels,
    )


def streaming_snapshot(thread_id) -> dict | None:
    """The `resume` of the thread's answer in progress as last saved, or None."""
    # A dead answer is not resumed: it is failed.
    _, live = _streaming(
        thread_id, timezone.now(),
        fields=("pk", "runner", "updated_at", "created_at", "query", "analysis", "sources",
                "content", "status"),
    )
    if not live:
        return None
    message = live[0]
    question = (
        Message.objects.filter(thread_id=thread_id, role=Role.USER, created_at__lte=message.created_at)
        .order_by("-created_at")
        .first()
    )
    return events.resume(
        message.pk, str(question.pk) if question else None, question.content if question else "",
        message.query, message.analysis, message.sources, message.content, message.status,
    )


def streaming_state(user_id: int, thread_id) -> tuple[int, Message | None]:
    """For a stop: how many stale answers were just failed, and the answer in progress."""
    now = timezone.now()
    if not Thread.objects.filter(pk=thread_id, owner_id=user_id).exists():
        raise AskRefused("not_found", "This chat does not exist (it may have been deleted).")
    stale, live = _streaming(thread_id, now)
    return stale, live[0] if live else None

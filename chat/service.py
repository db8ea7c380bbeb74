"""Answers run here, as background asyncio tasks that no socket owns.

`ask()` checks the limits and saves the question and an assistant message with status
"streaming" in one transaction, then starts a task that runs the answer pipeline and:
- publishes every event to the thread's channel-layer group (`thread.<uuid hex>`), which each
  socket open on the thread has joined, so a second tab sees the same stream and a closed tab
  loses nothing (tokens are coalesced to at most one message per TOKEN_INTERVAL per thread);
- saves the text every SAVE_INTERVAL and once more at the end (complete / stopped / failed);
- listens on the thread's control group (`thread.<uuid hex>.control`) for `stop` and for
  "send me what you have so far" (a socket that joins mid-answer). Both travel through the
  channel layer, so they reach the task from any process sharing Redis.

One answer in progress per thread is held by the database (a partial unique constraint on
streaming messages). A streaming row nobody has saved for STALE_AFTER (its process died) is
marked failed when someone next asks or stops, so a crash never locks a thread.
"""

import asyncio
import contextlib
import functools
import logging
import math
import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, InterfaceError, OperationalError, transaction
from django.utils import timezone

from chat.lanes import search_lanes, write_lane
from chat.markdown import render_answer
from chat.models import Message, Thread
from chat.pipeline.citations import check_citations
from chat.pipeline.followups import suggest_followups
from chat.pipeline.rewrite import HISTORY_TURNS, Turn

logger = logging.getLogger(__name__)

# At most one token message per thread this often: 20 updates a second read as smooth text, and
# it keeps a fast backend (the extractive one streams as fast as it can) from flooding the channel
# layer. Each frame costs the server about as much as parsing an LLM chunk does (profiled with
# `bench_chat concurrent`), so merging tokens frees the event loop for more concurrent answers.
TOKEN_INTERVAL = 0.05
# Partial text is written this often while streaming; a crash loses at most this much.
SAVE_INTERVAL = 1.0
# A streaming row is also touched this often when no text came, as a heartbeat.
HEARTBEAT_INTERVAL = 10.0
# A streaming row untouched this long belongs to a process that died.
STALE_AFTER = timedelta(seconds=60)
RATE_WINDOW = timedelta(minutes=1)
# How long the final save of an answer waits for a restarting database (a restart takes
# seconds); well under STALE_AFTER, after which the row would be failed as abandoned.
FINAL_SAVE_PATIENCE = 20.0
# The database went away (restart, failover, network): not a bug, no traceback.
DATABASE_DOWN = (OperationalError, InterfaceError)
DATABASE_DOWN_MESSAGE = "The database cannot be reached right now; try again in a moment."

Status = Message.Status
Role = Message.Role


def _reason(exc: Exception) -> str:
    """The first line of a database error, for a log line without a traceback."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class AskRefused(Exception):
    """An ask or stop the service will not carry out; becomes an `error` event as it is."""

    def __init__(self, code: str, message: str, **extra: Any):
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra

    def event(self) -> dict:
        return {"type": "error", "code": self.code, "message": self.message, **self.extra}


def group_name(thread_id) -> str:
    return f"thread.{uuid.UUID(str(thread_id)).hex}"


def control_group_name(thread_id) -> str:
    return f"{group_name(thread_id)}.control"


async def publish(thread_id, event: dict) -> None:
    """Send one protocol event to every socket watching the thread."""
    await get_channel_layer().group_send(
        group_name(thread_id), {"type": "chat.event", "event": event}
    )


def validate_question(text: Any) -> str:
    if not isinstance(text, str):
        raise AskRefused("invalid_question", "The question must be text.")
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


# --- The database side (sync, each in one transaction) -------------------------------------------
# Work before the first token runs on chat.lanes.search_lanes (in parallel across answers); saves
# while streaming, and the short reads a socket waits on (snapshot, stop), on chat.lanes.write_lane
# so they never queue behind searches. See chat/lanes.py for why not Django's default thread.
run_db = search_lanes.run
save_db = write_lane.run


async def close_db_connections() -> None:
    """Close the service threads' connections (tests, before the test database is dropped)."""
    await search_lanes.close_connections()
    await write_lane.close_connections()


def _update_message(message_id, only_streaming: bool = False, **fields) -> int:
    rows = Message.objects.filter(pk=message_id)
    if only_streaming:
        rows = rows.filter(status=Status.STREAMING)
    return rows.update(**fields)


@dataclass
class NewTurn:
    thread_id: uuid.UUID
    user_message_id: uuid.UUID
    message_id: uuid.UUID
    question: str
    history: list[Turn] = field(default_factory=list)


def fail_stale(thread_id, now=None) -> int:
    """Mark failed the streaming answers of a thread that no process has saved for STALE_AFTER."""
    now = now or timezone.now()
    return Message.objects.filter(
        thread_id=thread_id, status=Status.STREAMING, updated_at__lt=now - STALE_AFTER
    ).update(status=Status.FAILED, error="Interrupted: the server stopped while answering.")


def _history(thread_id) -> list[Turn]:
    recent = list(
        Message.objects.filter(thread_id=thread_id).order_by("-created_at")[: 2 * HISTORY_TURNS]
    )[::-1]
    turns = []
    for message in recent:
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
            )
    return turns


def _create_turn(user_id: int, thread_id, question: str) -> NewTurn:
    now = timezone.now()
    with transaction.atomic():
        # Lock the user first, then the thread (always this order, so no deadlock): parallel asks
        # from several sockets or processes then count each other in the rate limit.
        list(get_user_model().objects.select_for_update().filter(pk=user_id).values_list("pk"))
        thread = Thread.objects.select_for_update().filter(pk=thread_id, owner_id=user_id).first()
        if thread is None:
            raise AskRefused("not_found", "This chat does not exist (it may have been deleted).")
        fail_stale(thread.pk, now)
        if Message.objects.filter(thread=thread, status=Status.STREAMING).exists():
            raise AskRefused("busy", "An answer is already being written in this chat; wait or stop it.")
        limit = settings.CHAT_RATE_LIMIT_PER_MINUTE
        if limit > 0:
            recent = Message.objects.filter(
                thread__owner_id=user_id, role=Role.USER, created_at__gte=now - RATE_WINDOW
            )
            times = list(recent.order_by("created_at").values_list("created_at", flat=True))
            if len(times) >= limit:
                retry_after = max(1, math.ceil((times[-limit] + RATE_WINDOW - now).total_seconds()))
                raise AskRefused(
                    "rate_limited",
                    f"You can ask {limit} questions a minute; try again in {retry_after} s.",
                    retry_after=retry_after,
                )
        history = _history(thread.pk)
        try:
            with transaction.atomic():
                user_message = Message.objects.create(
                    thread=thread, role=Role.USER, content=question, status=Status.COMPLETE
                )
                message = Message.objects.create(
                    thread=thread, role=Role.ASSISTANT, status=Status.STREAMING
                )
        except IntegrityError:  # the partial unique constraint: another process got there first
            raise AskRefused("busy", "An answer is already being written in this chat.") from None
        if not thread.title:
            thread.title = Thread.title_from_question(question)
        thread.save(update_fields=["title", "updated_at"])
    return NewTurn(thread.pk, user_message.pk, message.pk, question, history)


def _streaming_snapshot(thread_id) -> dict | None:
    fail_stale(thread_id, timezone.now())  # a dead answer is not resumed: it is failed
    message = Message.objects.filter(thread_id=thread_id, status=Status.STREAMING).first()
    if message is None:
        return None
    question = (
        Message.objects.filter(thread_id=thread_id, role=Role.USER, created_at__lte=message.created_at)
        .order_by("-created_at")
        .first()
    )
    return {
        "type": "resume",
        "message_id": str(message.pk),
        "user_message_id": str(question.pk) if question else None,
        "question": question.content if question else "",
        "query": message.query,
        "analysis": message.analysis,
        "sources": message.sources,
        "content": message.content,
        "status": message.status,
    }


# --- The running answer ------------------------------------------------------------------------
# Answers running in this process, by message id. Holding the task here also keeps it from being
# garbage-collected while no socket refers to it.
_running: dict[uuid.UUID, "RunningAnswer"] = {}


class RunningAnswer:
    def __init__(self, turn: NewTurn, asked_at: float):
        self.turn = turn
        self.thread_id = turn.thread_id
        self.message_id = turn.message_id
        self.asked_at = asked_at
        self.layer = get_channel_layer()
        self.text = ""  # raw text streamed so far
        self.sent = 0  # characters of it already published
        self.saved = ""
        self.query = ""
        self.analysis: dict = {}
        self.sources: list[dict] = []
        self.started = 0.0
        self.wakeup = asyncio.Event()
        self.generation: asyncio.Task | None = None
        self.task: asyncio.Task | None = None
        self.done = asyncio.Event()
        self.pending_saves: list[asyncio.Task] = []
        self.closing = False

    # Snapshot for a socket that joins mid-answer.
    def snapshot(self) -> dict:
        return {
            "type": "resume",
            "message_id": str(self.message_id),
            "user_message_id": str(self.turn.user_message_id),
            "question": self.turn.question,
            "query": self.query,
            "analysis": self.analysis,
            "sources": self.sources,
            "content": self.text,
            "status": Status.STREAMING,
        }

    async def run(self) -> None:
        publisher = asyncio.create_task(self._publish_tokens())
        helpers = [
            asyncio.create_task(self._listen_control()),
            asyncio.create_task(self._save_periodically()),
        ]
        self.generation = asyncio.create_task(self._generate())
        try:
            final = await self.generation
        except asyncio.CancelledError:
            # `stop` cancelled the generation (or the process is shutting down): keep the text.
            self.generation.cancel()
            final = self._final_event("done", Status.STOPPED)
        except DATABASE_DOWN as exc:
            logger.warning(
                "answer_failed message=%s database unavailable: %s", self.message_id, _reason(exc)
            )
            final = self._final_event(
                "error", Status.FAILED, code="database_unavailable", message=DATABASE_DOWN_MESSAGE
            )
        except Exception:
            logger.exception("answer_crashed message=%s", self.message_id)
            final = self._final_event(
                "error", Status.FAILED, code="internal_error",
                message="Something went wrong while answering; what was written is kept.",
            )
        # The publisher is asked to finish, never cancelled: a cancel in the middle of a send
        # (an await with the Redis layer) would lose the text it was sending.
        self.closing = True
        self.wakeup.set()
        for helper in helpers:
            helper.cancel()
        await asyncio.gather(publisher, *helpers, return_exceptions=True)
        try:
            await self._flush_tokens()
            try:
                await self._save_final_patiently(final)
            except DATABASE_DOWN:
                # The sockets still get the text they were shown, and why it is not kept; the
                # row stays "streaming" until fail_stale marks it failed.
                logger.warning("answer_not_saved message=%s database unavailable", self.message_id)
                final = {
                    **final, "type": "error", "status": Status.FAILED,
                    "code": "database_unavailable",
                    "message": "The answer could not be saved: the database cannot be reached.",
                }
            try:
                await publish(self.thread_id, final)
            except Exception:  # the channel layer is down: the row is saved, a reload shows it
                logger.exception("answer_end_not_published message=%s", self.message_id)
        finally:
            self.done.set()
            _running.pop(self.message_id, None)

    async def _generate(self) -> dict:
        from chat.pipeline.answer import answer_events

        self.started = time.perf_counter()
        # A database lane for rewriting and searching, given back once the sources are known
        # (the LLM needs none): see chat/lanes.py.
        async with contextlib.AsyncExitStack() as lane:
            await lane.enter_async_context(search_lanes.context())
            async for event in answer_events(self.turn.question, history=self.turn.history):
                kind = event["type"]
                if kind == "token":
                    self.text += event["text"]
                    self.wakeup.set()
                elif kind == "analysis":
                    self.query, self.analysis = event["query"], event["analysis"]
                    await publish(self.thread_id, {**event, "message_id": str(self.message_id)})
                elif kind == "sources":
                    await lane.aclose()
                    self.sources = event["sources"]
                    # Saved beside the LLM's start, not before it: a socket joining now reads
                    # them from the running answer anyway, and the final save writes them again.
                    self._save_soon(query=self.query, analysis=self.analysis, sources=self.sources)
                    await publish(self.thread_id, {**event, "message_id": str(self.message_id)})
                elif kind == "done":
                    return self._final_event("done", Status.COMPLETE, pipeline=event)
                elif kind == "error":
                    return self._final_event(
                        "error", Status.FAILED, pipeline=event,
                        code=event["code"], message=event["message"],
                    )
        raise RuntimeError("the answer pipeline ended without done or error")

    def _save_soon(self, **fields) -> None:
        fields["updated_at"] = timezone.now()
        update = save_db(functools.partial(_update_message, self.message_id, **fields))
        self.pending_saves.append(asyncio.create_task(update))

    def _final_event(self, kind: str, status: str, pipeline: dict | None = None, **extra) -> dict:
        """The last event of an answer; `pipeline` is the pipeline's own done/error if it got
        that far (a stopped answer has none, so its text is checked here)."""
        if pipeline is not None:
            content, citations = pipeline["content"], pipeline["citations"]
            dropped = pipeline["dropped_citations"]
            timings = dict(pipeline["timings"])
            usage, backend, model = pipeline["usage"], pipeline["backend"], pipeline["model"]
        else:
            checked = check_citations(self.text, len(self.sources))
            content, citations, dropped = checked.text, checked.kept, checked.dropped
            since = self.started or self.asked_at
            timings = {"total_ms": round((time.perf_counter() - since) * 1000)}
            usage, backend, model = {}, "", ""
        # The pipeline's clock starts when it does; the user's starts at the ask.
        setup_ms = round((self.started - self.asked_at) * 1000) if self.started else 0
        timings["setup_ms"] = setup_ms
        for key in ("ttft_ms", "total_ms", "overhead_ms"):
            if key in timings:
                timings[key] += setup_ms
        event = {
            "type": kind,
            "message_id": str(self.message_id),
            "status": status,
            "content": content,
            "html": str(render_answer(content, len(self.sources), self.message_id)),
            "citations": citations,
            "dropped_citations": dropped,
            "timings": timings,
            "usage": usage,
            "backend": backend,
            "model": model,
            "followups": suggest_followups(self.query, self.analysis, self.sources)
            if status == Status.COMPLETE
            else [],
        }
        event.update(extra)
        return event

    async def _save_final_patiently(self, final: dict) -> None:
        deadline, pause = time.monotonic() + FINAL_SAVE_PATIENCE, 0.25
        while True:
            try:
                return await self._save_final(final)
            except DATABASE_DOWN:
                if time.monotonic() + pause > deadline:
                    raise
                await asyncio.sleep(pause)
                pause = min(pause * 2, 2.0)

    async def _save_final(self, final: dict) -> None:
        await asyncio.gather(*self.pending_saves, return_exceptions=True)
        usage, timings = final["usage"] or {}, final["timings"]
        save = functools.partial(
            _update_message,
            self.message_id,
            status=final["status"],
            query=self.query,
            analysis=self.analysis,
            sources=self.sources,
            content=final["content"],
            citations=final["citations"],
            timings=timings,
            backend=final["backend"],
            model=final["model"],
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            time_to_first_token_ms=timings.get("ttft_ms"),
            total_ms=timings.get("total_ms"),
            error=final.get("message", "") if final["type"] == "error" else "",
            updated_at=timezone.now(),
        )
        await save_db(save)
        await save_db(
            lambda: Thread.objects.filter(pk=self.thread_id).update(updated_at=timezone.now())
        )

    async def _flush_tokens(self) -> None:
        if self.sent >= len(self.text):
            return
        offset, chunk = self.sent, self.text[self.sent :]
        self.sent = len(self.text)
        await publish(
            self.thread_id,
            {"type": "token", "message_id": str(self.message_id), "offset": offset, "text": chunk},
        )

    async def _publish_tokens(self) -> None:
        while True:
            await self.wakeup.wait()
            self.wakeup.clear()
            await self._flush_tokens()
            if self.closing:
                return
            await asyncio.sleep(TOKEN_INTERVAL)

    async def _save_periodically(self) -> None:
        last_write = time.monotonic()
        while True:
            await asyncio.sleep(SAVE_INTERVAL)
            changed = self.text != self.saved
            if changed or time.monotonic() - last_write >= HEARTBEAT_INTERVAL:
                text = self.text
                try:
                    await save_db(
                        functools.partial(
                            _update_message, self.message_id, only_streaming=True,
                            content=text, updated_at=timezone.now(),
                        )
                    )
                except DATABASE_DOWN:
                    continue  # the database is restarting: the next tick (or the final save) saves
                self.saved, last_write = text, time.monotonic()

    async def _listen_control(self) -> None:
        channel = await self.layer.new_channel()
        control = control_group_name(self.thread_id)
        await self.layer.group_add(control, channel)
        try:
            while True:
                message = await self.layer.receive(channel)
                if message.get("message_id") not in (None, str(self.message_id)):
                    continue
                if message["type"] == "chat.stop" and self.generation:
                    self.generation.cancel()
                elif message["type"] == "chat.sync" and message.get("reply_channel"):
                    await self.layer.send(
                        message["reply_channel"], {"type": "chat.event", "event": self.snapshot()}
                    )
        finally:
            await self.layer.group_discard(control, channel)


# --- What the consumer (or any caller) uses ------------------------------------------------------
async def ask(user, thread_id, text: Any) -> RunningAnswer:
    """Start answering `text` in the user's thread; raises AskRefused with the reason."""
    asked_at = time.perf_counter()
    question = validate_question(text)
    try:
        turn = await run_db(_create_turn, user.pk, thread_id, question)
    except DATABASE_DOWN as exc:
        logger.warning("ask_refused thread=%s database unavailable: %s", thread_id, _reason(exc))
        raise AskRefused("database_unavailable", DATABASE_DOWN_MESSAGE) from None
    await publish(
        turn.thread_id,
        {
            "type": "start",
            "message_id": str(turn.message_id),
            "user_message_id": str(turn.user_message_id),
            "question": question,
        },
    )
    answer = RunningAnswer(turn, asked_at)
    _running[turn.message_id] = answer
    answer.task = asyncio.create_task(answer.run(), name=f"answer-{turn.message_id}")
    logger.info("answer_started thread=%s message=%s", turn.thread_id, turn.message_id)
    return answer


async def stop(user, thread_id) -> None:
    """Ask whichever process runs the thread's answer to stop it (it keeps what was written)."""

    def streaming_state():
        now = timezone.now()
        if not Thread.objects.filter(pk=thread_id, owner_id=user.pk).exists():
            raise AskRefused("not_found", "This chat does not exist (it may have been deleted).")
        stale = fail_stale(thread_id, now)
        return stale, Message.objects.filter(thread_id=thread_id, status=Status.STREAMING).first()

    stale, message = await save_db(streaming_state)  # short: never behind a search
    if message is None:
        if stale:  # nobody was running it: the row is marked failed; tell the sockets
            await publish(thread_id, {"type": "error", "code": "interrupted",
                                      "message": "The answer was interrupted."})
            return
        raise AskRefused("not_streaming", "No answer is being written in this chat.")
    await get_channel_layer().group_send(
        control_group_name(thread_id), {"type": "chat.stop", "message_id": str(message.pk)}
    )


async def request_snapshot(thread_id, reply_channel: str) -> dict | None:
    """What a socket joining the thread should see of an answer in progress: the saved state now,
    and (through the control group) the live text from the process running it, sent later to
    `reply_channel` as a second `resume` event."""
    snapshot = await save_db(_streaming_snapshot, thread_id)  # a socket is waiting to open
    if snapshot is not None:
        await get_channel_layer().group_send(
            control_group_name(thread_id),
            {"type": "chat.sync", "reply_channel": reply_channel,
             "message_id": snapshot["message_id"]},
        )
    return snapshot


async def wait_for_running_answers(timeout: float = 30.0) -> None:
    """Wait until every answer started in this process has finished (tests, shutdown)."""
    pending = [answer.done.wait() for answer in list(_running.values())]
    if pending:
        await asyncio.wait_for(asyncio.gather(*pending), timeout)

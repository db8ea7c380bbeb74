"""A running answer: the background asyncio task, owned by no socket, that turns the pipeline's
events into a saved message and the thread's event stream.

While the pipeline (chat.pipeline.answer) runs, `RunningAnswer`:
- publishes every event to the thread's channel-layer group (chat.events), which each socket open
  on the thread has joined, so a second tab sees the same stream and a closed tab loses nothing
  (tokens are coalesced to at most one message per TOKEN_INTERVAL per thread, longer when many
  answers run at once: `token_interval`);
- saves the text every SAVE_INTERVAL and once more at the end (complete / stopped / failed);
- listens on the thread's control group for `stop` and for "send me what you have so far" (a
  socket that joins mid-answer). Both travel through the channel layer, so they reach the task
  from any process sharing Redis.
"""

import asyncio
import contextlib
import functools
import logging
import time
import uuid

from channels.layers import get_channel_layer
from django.utils import timezone

from chat import events
from chat.lanes import search_lanes, write_lane
from chat.markdown import render_answer
from chat.models import Message
from chat.pipeline.answer import answer_events
from chat.pipeline.citations import check_citations
from chat.pipeline.followups import suggest_followups
from chat.references import cite_labels, label_cards
from chat.turns import (
    DATABASE_DOWN,
    DATABASE_DOWN_MESSAGE,
    NewTurn,
    finish_message,
    reason,
    update_message,
)

logger = logging.getLogger(__name__)

# At most one token message per thread this often: 20 updates a second read as smooth text, and
# it keeps a fast backend (the extractive one streams as fast as it can) from flooding the channel
# layer. Each frame costs the server about as much as parsing an LLM chunk does (profiled with
# `bench_chat concurrent`), so merging tokens frees the event loop for more concurrent answers.
TOKEN_INTERVAL = 0.05
# And at most this many token messages a second for all the answers of a process together: with
# many answers at once each one's interval grows (100 answers: one message per 0.2 s, a few words
# each), so a burst spends its CPU on answering rather than on framing.
TOKEN_FRAMES_PER_SECOND = 500
# Partial text is written this often while streaming; a crash loses at most this much.
SAVE_INTERVAL = 1.0
# A streaming row is also touched this often when no text came, as a heartbeat.
HEARTBEAT_INTERVAL = 10.0
# How long the final save of an answer waits for a restarting database (a restart takes
# seconds); well under turns.STALE_AFTER, after which the row would be failed as abandoned.
FINAL_SAVE_PATIENCE = 20.0
# Saves while streaming go to chat.lanes.write_lane, so they never queue behind searches.
save_db = write_lane.run

Status = Message.Status

# Answers running in this process, by message id. Holding the task here also keeps it from being
# garbage-collected while no socket refers to it.
running: dict[uuid.UUID, "RunningAnswer"] = {}


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
        self.stop_requested = False

    def stop(self) -> None:
        """End the answer as `stopped`, keeping what was written (a user's `stop`, a shutdown)."""
        self.stop_requested = True
        if self.generation:
            self.generation.cancel()

    # Snapshot for a socket that joins mid-answer.
    def snapshot(self) -> dict:
        return events.resume(
            self.message_id, str(self.turn.user_message_id), self.turn.question, self.query,
            self.analysis, self.sources, self.text, Status.STREAMING,
        )

    async def run(self) -> None:
        publisher = asyncio.create_task(self._publish_tokens())
        helpers = [
            asyncio.create_task(self._listen_control()),
            asyncio.create_task(self._save_periodically()),
        ]
        self.generation = asyncio.create_task(self._generate())
        if self.stop_requested:  # stopped before it began
            self.generation.cancel()
        try:
            final = await self.generation
        except asyncio.CancelledError:
            # `stop` cancelled the generation (or the process is shutting down): keep the text.
            self.generation.cancel()
            final = self._final_event("done", Status.STOPPED)
        except DATABASE_DOWN as exc:
            logger.warning(
                "answer_failed message=%s database unavailable: %s", self.message_id, reason(exc)
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
                final = events.not_saved(final)
            try:
                await events.publish(self.thread_id, final)
            except Exception:  # the channel layer is down: the row is saved, a reload shows it
                logger.exception("answer_end_not_published message=%s", self.message_id)
        finally:
            self.done.set()
            running.pop(self.message_id, None)

    async def _generate(self) -> dict:
        self.started = time.perf_counter()
        # A database lane for rewriting and searching, given back once the sources are known
        # (the LLM needs none): see chat/lanes.py.
        async with contextlib.AsyncExitStack() as lane:
            await lane.enter_async_context(search_lanes.context())
            answer = answer_events(
                self.turn.question, history=self.turn.history, filters=self.turn.filters or None,
                scope_ids=self.turn.scope_ids,
            )
            async for event in answer:
                kind = event["type"]
                if kind == "token":
                    self.text += event["text"]
                    self.wakeup.set()
                elif kind == "analysis":
                    self.query, self.analysis = event["query"], event["analysis"]
                    await events.publish(self.thread_id, events.for_answer(event, self.message_id))
                elif kind == "sources":
                    await lane.aclose()
                    # Numbered as the thread's one reference list (chat.references).
                    self.sources = label_cards(event["sources"], dict(self.turn.earlier_labels))
                    event = {**event, "sources": self.sources}
                    # Saved beside the LLM's start, not before it: a socket joining now reads
                    # them from the running answer anyway, and the final save writes them again.
                    self._save_soon(query=self.query, analysis=self.analysis, sources=self.sources)
                    await events.publish(self.thread_id, events.for_answer(event, self.message_id))
                elif kind == "stage":
                    await events.publish(self.thread_id, events.for_answer(event, self.message_id))
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
        update = save_db(functools.partial(update_message, self.message_id, durable=False, **fields))
        self.pending_saves.append(asyncio.create_task(update))

    def _final_event(self, kind: str, status: str, pipeline: dict | None = None, **extra) -> dict:
        """The last event of an answer; `pipeline` is the pipeline's own done/error if it got
        that far (a stopped answer has none, so its text is checked here)."""
        if pipeline is not None:
            if pipeline.get("nothing_relevant"):
                extra["nothing_relevant"] = True
            content, citations = pipeline["content"], pipeline["citations"]
            dropped = pipeline["dropped_citations"]
            timings = dict(pipeline["timings"])
            usage, backend, model = pipeline["usage"], pipeline["backend"], pipeline["model"]
            if "unsupported" in pipeline:
                extra["unsupported"] = pipeline["unsupported"]
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
        html = render_answer(
            content, len(self.sources), self.message_id, extra.get("unsupported", ()),
            labels=cite_labels(self.sources),
        )
        return events.final(
            kind, self.message_id, status, content, str(html), citations, dropped,
            timings, usage, backend, model,
            suggest_followups(self.query, self.analysis, self.sources)
            if status == Status.COMPLETE
            else [],
            **extra,
        )

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
            finish_message,
            self.message_id,
            self.thread_id,
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
            unsupported=final.get("unsupported", []),
            total_ms=timings.get("total_ms"),
            error=final.get("message", "") if final["type"] == "error" else "",
            updated_at=timezone.now(),
        )
        await save_db(save)

    async def _flush_tokens(self) -> None:
        if self.sent >= len(self.text):
            return
        offset, chunk = self.sent, self.text[self.sent :]
        self.sent = len(self.text)
        await events.publish(self.thread_id, events.token(self.message_id, offset, chunk))

    async def _publish_tokens(self) -> None:
        while True:
            await self.wakeup.wait()
            self.wakeup.clear()
            await self._flush_tokens()
            if self.closing:
                return
            await asyncio.sleep(token_interval())

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
                            update_message, self.message_id, only_streaming=True,
                            durable=False, content=text, updated_at=timezone.now(),
                        )
                    )
                except DATABASE_DOWN:
                    continue  # the database is restarting: the next tick (or the final save) saves
                self.saved, last_write = text, time.monotonic()

    async def _listen_control(self) -> None:
        channel = await self.layer.new_channel()
        control = events.control_group_name(self.thread_id)
        await self.layer.group_add(control, channel)
        try:
            while True:
                message = await self.layer.receive(channel)
                if message.get("message_id") not in (None, str(self.message_id)):
                    continue
                if message["type"] == "chat.stop":
                    self.stop()
                elif message["type"] == "chat.sync" and message.get("reply_channel"):
                    await events.send_to(message["reply_channel"], self.snapshot())
        finally:
            await self.layer.group_discard(control, channel)


def token_interval() -> float:
    """Seconds between two token messages of one answer (TOKEN_FRAMES_PER_SECOND)."""
    return max(TOKEN_INTERVAL, len(running) / TOKEN_FRAMES_PER_SECOND)


async def stop_all(timeout: float) -> int:
    """Stop every answer running in this process and wait (at most `timeout` seconds) until each
    has saved its text as `stopped`; returns how many did not finish in time."""
    answers = list(running.values())
    for answer in answers:
        answer.stop()
    waits = [asyncio.create_task(answer.done.wait()) for answer in answers]
    if not waits:
        return 0
    _, late = await asyncio.wait(waits, timeout=timeout)
    for wait in late:
        wait.cancel()
    return len(late)


def start(turn: NewTurn, asked_at: float) -> RunningAnswer:
    """Run the answer of a saved turn in the background."""
    answer = RunningAnswer(turn, asked_at)
    running[turn.message_id] = answer
    answer.task = asyncio.create_task(answer.run(), name=f"answer-{turn.message_id}")
    return answer

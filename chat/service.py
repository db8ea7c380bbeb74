"""The one entry point of the chat runtime for its callers (the socket, the API, the pages).

`ask()` checks the limits and saves the question and an assistant message with status
"streaming" in one transaction (chat.turns), then starts the answer as a background asyncio task
that no socket owns (chat.runner), whose events reach every socket and stream on the thread
through the channel layer (chat.events). `stop()`, `delete_thread()` and `request_snapshot()`
reach that task from any process through the thread's control group.
"""

import asyncio
import logging
import time
from typing import Any

from asgiref.sync import async_to_sync

from chat import events, runner, turns
from chat.lanes import search_lanes, socket_lanes
from chat.models import Thread
from chat.runner import RunningAnswer
from chat.turns import AskRefused

logger = logging.getLogger(__name__)


async def ask(
    user, thread_id, text: Any, filters: Any = None, session_key=turns.CHECKED
) -> RunningAnswer:
    """Start answering `text` in the user's thread, searched with `filters` (an edited chip:
    chat.understanding.overrides) when given; raises AskRefused with the reason. A socket passes
    its `session_key`, checked with the turn (raises turns.SignedOut when it has ended)."""
    asked_at = time.perf_counter()
    question = turns.validate_question(text)
    checked_filters = turns.validate_filters(filters)
    try:
        # Work before the first token runs on chat.lanes.search_lanes (in parallel across
        # answers); see chat/lanes.py for why not Django's default thread.
        turn = await search_lanes.run(
            turns.create_turn, user.pk, thread_id, question, session_key
        )
    except turns.DATABASE_DOWN as exc:
        logger.warning(
            "ask_refused thread=%s database unavailable: %s", thread_id, turns.reason(exc)
        )
        raise AskRefused("database_unavailable", turns.DATABASE_DOWN_MESSAGE) from None
    turn.filters = checked_filters
    await events.publish(
        turn.thread_id, events.start(turn.message_id, turn.user_message_id, question)
    )
    answer = runner.start(turn, asked_at)
    logger.info("answer_started thread=%s message=%s", turn.thread_id, turn.message_id)
    return answer


async def stop(user, thread_id) -> None:
    """Ask whichever process runs the thread's answer to stop it (it keeps what was written)."""
    # The short reads a socket waits on have lanes of their own: never behind a search or a save.
    stale, message = await socket_lanes.run(turns.streaming_state, user.pk, thread_id)
    if message is None:
        if stale:  # nobody was running it: the row is marked failed; tell the sockets
            interrupted = events.error("interrupted", "The answer was interrupted.")
            await events.publish(thread_id, interrupted)
            return
        raise AskRefused("not_streaming", "No answer is being written in this chat.")
    await events.send_stop(thread_id, message.pk)


def delete_thread(thread: Thread) -> None:
    """Delete a thread its owner asked to delete (the caller checked ownership), first stopping
    its answer in progress, which would otherwise only write into a deleted row."""
    async_to_sync(events.send_stop)(thread.pk)
    thread.delete()


async def request_snapshot(thread_id, reply_channel: str) -> dict | None:
    """What a socket joining the thread should see of an answer in progress: the saved state now,
    and (through the control group) the live text from the process running it, sent later to
    `reply_channel` as a second `resume` event."""
    snapshot = await socket_lanes.run(turns.streaming_snapshot, thread_id)  # a socket is waiting
    if snapshot is not None:
        await events.request_live_text(thread_id, reply_channel, snapshot["message_id"])
    return snapshot


# How long a shutting-down server waits for its answers' final saves (the supervisor,
# `manage.py serve`, kills it after 15 s).
SHUTDOWN_PATIENCE = 5.0


async def stop_running_answers(timeout: float = SHUTDOWN_PATIENCE) -> None:
    """At shutdown (see flatuniverse/asgi.py): end every answer this process is writing as
    `stopped`, its text saved, so no thread is left "Writing…" by a server that went away."""
    count = len(runner.running)
    if not count:
        return
    logger.info("shutdown: stopping %d running answer(s)", count)
    late = await runner.stop_all(timeout)
    if late:  # their rows stay "streaming"; the next process sees this one is gone
        logger.warning("shutdown: %d answer(s) not saved within %.0f s", late, timeout)


async def wait_for_running_answers(timeout: float = 30.0) -> None:
    """Wait until every answer started in this process has finished (tests, shutdown)."""
    pending = [answer.done.wait() for answer in list(runner.running.values())]
    if pending:
        await asyncio.wait_for(asyncio.gather(*pending), timeout)

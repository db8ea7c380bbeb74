"""A server that goes away mid-answer, against real processes: what the thread shows afterwards.

Ctrl-C of `manage.py serve` (SIGTERM to daphne) saves the answer being written as `stopped`, with
its text. A SIGKILL saves nothing, but the other processes and the restarted server see at once
that the process writing the answer is gone: the thread is neither locked ("busy") nor shown
"Writing…" for a minute.
"""

import asyncio
import signal
import time

import pytest

from chat.models import Message
from tests.fakes.openai_chat import Reply
from tests.live_server import LiveServer
from tests.ops.client import Tab, logged_in_client, login_cookie
from tests.ops.conftest import ANSWER, QUESTION, unique_prefix

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]

# Slow enough that the answer is still being written when the server goes away, with a partial
# save (every second) behind it.
SLOW = Reply(ANSWER, tokens_per_second=8)
WRITTEN_FOR = 1.6  # seconds of streaming before the server goes away


def own_env(server_env) -> dict[str, str]:
    """The drill server's environment, with channel-layer groups of its own."""
    env = dict(server_env)
    if "REDIS_URL" in env:
        env["CHANNELS_PREFIX"] = unique_prefix("interrupted")
    return env


async def ask_and_read_a_while(tab: Tab) -> str:
    """Ask, and read tokens for WRITTEN_FOR seconds; the text seen so far."""
    await tab.ask(QUESTION)
    answer = await tab.answer(until_first_token=True)
    deadline = time.monotonic() + WRITTEN_FOR
    while time.monotonic() < deadline:
        try:
            answer.apply(await tab.next_event(timeout=deadline - time.monotonic()))
        except TimeoutError:
            break
    assert answer.final["type"] == "token", "the answer ended before the server went away"
    return answer.text


def test_server_killed_mid_answer_frees_the_thread_and_a_stopped_server_saves_its_answer(
    catalogue, server, server_env, fake_llm, owner, password, thread
):
    """SIGKILL mid-answer: a tab on another process (`server`) that still shows the answer
    presses stop and is told the answer was interrupted. The killed server restarts: the page
    shows the answer failed, not "Writing…", and the same thread takes a new question at once.
    Then SIGTERM (what `manage.py serve` sends on Ctrl-C) mid-answer: the answer is saved as
    stopped, with all the text the tab was shown."""
    fake_llm.default = SLOW
    env = own_env(server_env)
    with LiveServer(env=env) as victim:
        cookie = login_cookie(victim.url, owner.username, password)

        async def until_killed():
            tab = await Tab.open(victim.ws_url, thread.pk, cookie, origin=victim.url)
            seen = await ask_and_read_a_while(tab)
            elsewhere = await Tab.open(server.ws_url, thread.pk, cookie, origin=server.url)
            assert elsewhere.ready["streaming"], "the other process sees the answer being written"
            victim.process.send_signal(signal.SIGKILL)
            victim.process.wait()
            await elsewhere.send({"type": "stop"})
            stopped = await elsewhere.refusal()
            await elsewhere.close()
            return seen, stopped

        seen, stopped = asyncio.run(until_killed())
    assert stopped["code"] == "interrupted"
    killed = Message.objects.get(thread=thread, role="assistant")
    assert killed.status == "failed" and killed.error.startswith("Interrupted")
    # What was saved before the kill (every second) is kept.
    assert killed.content and seen.startswith(killed.content[:20])

    with LiveServer(env=env, port=victim.port) as restarted:
        with logged_in_client(restarted.url, owner.username, password) as page:
            html = page.get(f"/chat/{thread.pk}/").text
        assert "Writing…" not in html and "Failed" in html
        cookie = login_cookie(restarted.url, owner.username, password)

        async def ask_again_then_sigterm():
            tab = await Tab.open(restarted.ws_url, thread.pk, cookie, origin=restarted.url)
            seen = await ask_and_read_a_while(tab)
            restarted.process.send_signal(signal.SIGTERM)
            return seen

        seen = asyncio.run(ask_again_then_sigterm())
        pressed = time.monotonic()
        restarted.process.wait(timeout=30)
        stopped_in = time.monotonic() - pressed
    assert stopped_in < 10, f"daphne took {stopped_in:.1f} s to stop"
    answer = Message.objects.filter(thread=thread, role="assistant").latest("created_at")
    assert answer.pk != killed.pk and answer.status == "stopped"
    # Everything the tab was shown is saved, not only the last periodic save.
    assert len(answer.content) >= len(seen) and answer.content.startswith(seen[:40])

"""The database restarting under a live daphne process.

A restart, as the app sees it, is every connection cut at once and, for a moment, new ones
refused. The drill does exactly that to this test run's database only (other test runs and the
developer's catalogue share the embedded server): `ALLOW_CONNECTIONS false` plus
`pg_terminate_backend` on every other session, then connections allowed again.
"""

import asyncio
import time

import psycopg
import pytest
from django.db import connection

from chat.models import Message
from tests.fakes.openai_chat import Reply
from tests.ops.client import Tab, login_cookie
from tests.ops.conftest import ANSWER, QUESTION, SERVER_APP_NAME

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True), pytest.mark.timeout(90)]


APP_NAME = SERVER_APP_NAME  # the drill server's sessions, and no other


class DatabaseSwitch:
    """A connection of its own (autocommit, usable from any thread) that cuts the app's sessions
    and refuses new ones, then lets them back: a restart of this database, as the app sees it."""

    def __init__(self):
        cfg = connection.settings_dict
        # From the maintenance database: PostgreSQL will not close a database to new
        # connections from a session inside it.
        options = {
            "dbname": "postgres", "host": cfg.get("HOST") or None,
            "port": cfg.get("PORT") or None, "user": cfg.get("USER") or None,
            "password": cfg.get("PASSWORD") or None,
        }
        self.name = cfg["NAME"]
        self.database = connection.ops.quote_name(self.name)
        self.conn = psycopg.connect(
            **{k: v for k, v in options.items() if v is not None}, autocommit=True
        )

    def cut(self, refuse_new: bool) -> int:
        """Terminate the app's sessions; with `refuse_new`, new connections fail until allow()."""
        if refuse_new:
            self.conn.execute(f"ALTER DATABASE {self.database} WITH ALLOW_CONNECTIONS false")
        return self.conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = %s AND application_name = %s",
            [self.name, APP_NAME],
        ).fetchone()[0]

    def allow(self) -> None:
        self.conn.execute(f"ALTER DATABASE {self.database} WITH ALLOW_CONNECTIONS true")

    def close(self) -> None:
        self.allow()
        self.conn.close()


@pytest.fixture
def switch(django_db_setup):
    switch = DatabaseSwitch()
    yield switch
    switch.close()  # connections allowed again, whatever the drill did


@pytest.fixture
def cookie(server, owner, password):
    return login_cookie(server.url, owner.username, password)


def test_connections_cut_mid_answer_the_answer_is_still_saved_and_the_next_one_works(
    server, fake_llm, catalogue, owner, thread, cookie, switch
):
    fake_llm.default = Reply(ANSWER, tokens_per_second=15)  # about 3 s of streaming

    async def scenario():
        tab = await Tab.open(server.ws_url, thread.pk, cookie, origin=server.url)
        await tab.ask(QUESTION)
        answer = await tab.answer(until_first_token=True)
        cut = await asyncio.to_thread(switch.cut, False)
        answer = await tab.finish(answer)
        await tab.ask("And what about video generation with diffusion?")
        following = await tab.answer()
        await tab.close()
        return cut, answer, following

    cut, answer, following = asyncio.run(scenario())
    assert cut >= 1, "the server's connections were cut"
    assert answer.final["type"] == "done" and answer.text == ANSWER, (answer.kinds, answer.final)
    row = Message.objects.get(pk=answer.message_id)
    assert (row.status, row.content) == (Message.Status.COMPLETE, ANSWER)
    assert following.final["type"] == "done", following.kinds
    assert Message.objects.get(pk=following.message_id).status == Message.Status.COMPLETE


def test_database_down_when_asking_is_reported_and_the_same_socket_asks_again(
    server, fake_llm, catalogue, owner, thread, cookie, switch
):
    async def ask_while_down(tab):
        await asyncio.to_thread(switch.cut, True)
        try:
            await tab.ask(QUESTION)
            refusal = await tab.refusal()
        finally:
            await asyncio.to_thread(switch.allow)
        await tab.ask(QUESTION)
        answer = await tab.answer()
        await tab.close()
        return refusal, answer

    async def run():
        tab = await Tab.open(server.ws_url, thread.pk, cookie, origin=server.url)
        return await ask_while_down(tab)

    refusal, answer = asyncio.run(run())
    assert refusal["code"] == "database_unavailable", refusal
    assert "try again" in refusal["message"]
    assert answer.final["type"] == "done" and answer.text == ANSWER, (answer.kinds, answer.final)
    # The refused question left nothing behind; the second one is there once, answered.
    messages = list(Message.objects.filter(thread=thread).order_by("created_at"))
    assert [(m.role, m.status) for m in messages] == [("user", "complete"), ("assistant", "complete")]


def test_database_restarting_mid_answer_the_answer_is_saved_once_it_is_back(
    server, fake_llm, catalogue, owner, thread, cookie, switch
):
    fake_llm.default = Reply(ANSWER, tokens_per_second=20)  # about 2 s of streaming
    outage = 3.0  # longer than the rest of the stream: the final save meets a closed door

    async def scenario():
        tab = await Tab.open(server.ws_url, thread.pk, cookie, origin=server.url)
        await tab.ask(QUESTION)
        answer = await tab.answer(until_first_token=True)
        await asyncio.to_thread(switch.cut, True)
        down_since = time.monotonic()
        try:
            await asyncio.sleep(outage)
        finally:
            await asyncio.to_thread(switch.allow)
        answer = await tab.finish(answer)
        waited = time.monotonic() - down_since
        await tab.ask("And what about video generation with diffusion?")
        following = await tab.answer()
        await tab.close()
        return answer, following, waited

    answer, following, waited = asyncio.run(scenario())
    assert waited >= outage
    assert answer.final["type"] == "done" and answer.text == ANSWER, (answer.kinds, answer.final)
    row = Message.objects.get(pk=answer.message_id)
    assert (row.status, row.content) == (Message.Status.COMPLETE, ANSWER)
    assert following.final["type"] == "done", following.kinds

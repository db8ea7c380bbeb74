"""What an answer costs the server besides its search: the queries that save a turn and open a
socket, and how many token messages a fast stream makes (docs/BENCHMARKS.md, "Cutting the answer
path's CPU"). Each number is a ceiling a regression would cross, not a timing."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from chat import events, runner, service, turns
from chat.models import Message, Thread
from tests.chat.conftest import slow_reply

CARD = {"number": 1, "paper_id": 1, "arxiv_id": "2401.00001", "title": "A paper",
        "passage": "Text.", "url": "https://arxiv.org/abs/2401.00001"}


def earlier_turns(thread, n):
    for i in range(n):
        Message.objects.create(thread=thread, role="user", content=f"question {i}")
        Message.objects.create(
            thread=thread, role="assistant", status="complete", content=f"answer {i} [1].",
            query=f"topic {i}", analysis={"query": f"topic {i}"},
            sources=[{**CARD, "paper_id": i, "arxiv_id": f"2401.0000{i}"}],
        )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("earlier", [0, 6])
def test_saving_a_turn_takes_six_statements_however_long_the_thread(
    owner, settings, django_assert_max_num_queries, earlier
):
    settings.CHAT_RATE_LIMIT_PER_MINUTE = 0
    thread = Thread.objects.create(owner=owner)
    earlier_turns(thread, earlier)

    # Lock the user and the thread, the thread's messages (the answer in progress, history and
    # reference numbers at once), the question, the answer row, the thread's title; and the
    # transaction's BEGIN and COMMIT (13 statements and a savepoint in session 7, 7 in session 8).
    with django_assert_max_num_queries(6 + 2):
        turn = turns.create_turn(owner.pk, thread.pk, "What is new?")

    # What the one read of the thread gives is still all there.
    last = -turns.TOPIC_TURNS
    assert [t.question for t in turn.history] == [f"question {i}" for i in range(earlier)][last:]
    assert [t.topic for t in turn.history] == [f"topic {i}" for i in range(earlier)][last:]
    assert turn.earlier_labels == {f"2401.0000{i}": i + 1 for i in range(earlier)} or earlier == 0
    assert thread.messages.filter(status="streaming").count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_rate_limit_adds_two_queries_and_still_counts(
    owner, settings, django_assert_max_num_queries
):
    settings.CHAT_RATE_LIMIT_PER_MINUTE = 2
    threads = [Thread.objects.create(owner=owner) for _ in range(3)]
    turns.create_turn(owner.pk, threads[0].pk, "one")

    with django_assert_max_num_queries(8 + 2):  # the recent asks, and this one's
        turns.create_turn(owner.pk, threads[1].pk, "two")
    with pytest.raises(turns.AskRefused) as refused:
        turns.create_turn(owner.pk, threads[2].pk, "three")
    assert refused.value.code == "rate_limited"


@pytest.mark.django_db(transaction=True)
def test_a_socket_s_session_is_checked_in_the_same_transaction_as_its_turn(
    owner, settings, django_assert_max_num_queries
):
    # A socket's ask was two lane jobs, the session check and then the turn, each queued on its
    # own lanes (docs/BENCHMARKS.md, session 13): now one, two reads more (the session, the user).
    from django.test import Client

    settings.CHAT_RATE_LIMIT_PER_MINUTE = 0
    client = Client()
    client.force_login(owner)
    session_key = client.session.session_key
    thread = Thread.objects.create(owner=owner)

    with django_assert_max_num_queries(6 + 2 + 2):
        turns.create_turn(owner.pk, thread.pk, "What is new?", session_key)
    Message.objects.filter(thread=thread, status="streaming").update(status="complete")

    client.logout()
    with pytest.raises(turns.SignedOut):
        turns.create_turn(owner.pk, thread.pk, "And now?", session_key)
    with pytest.raises(turns.SignedOut):  # a socket without a session
        turns.create_turn(owner.pk, thread.pk, "And now?", None)
    assert thread.messages.count() == 2  # the first turn's question and answer only


@pytest.mark.django_db(transaction=True)
def test_a_stale_answer_is_still_failed_before_a_new_turn(owner, settings):
    settings.CHAT_RATE_LIMIT_PER_MINUTE = 0
    thread = Thread.objects.create(owner=owner)
    old = Message.objects.create(thread=thread, role="assistant", status="streaming")
    Message.objects.filter(pk=old.pk).update(updated_at=old.updated_at - turns.STALE_AFTER * 2)

    turns.create_turn(owner.pk, thread.pk, "Again?")

    old.refresh_from_db()
    assert old.status == "failed" and old.error == turns.INTERRUPTED


@pytest.mark.django_db(transaction=True)
def test_opening_a_socket_on_an_idle_thread_reads_the_database_once(
    owner, django_assert_max_num_queries
):
    thread = Thread.objects.create(owner=owner)
    earlier_turns(thread, 2)

    with django_assert_max_num_queries(1):
        assert turns.streaming_snapshot(thread.pk) is None


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_fast_stream_is_sent_in_few_token_messages_that_add_up(
    catalogue, owner, slow_openai
):
    # 120 words at 2,000 tokens a second: ~60 ms of streaming, so a few messages at most
    # (one per TOKEN_INTERVAL), never one per token.
    text = " ".join(["diffusion"] * 119) + " [1]."
    slow_openai.default = slow_reply(text, 2000)
    thread = await sync_to_async(Thread.objects.create)(owner=owner)
    layer = get_channel_layer()
    listener = await layer.new_channel()
    await layer.group_add(events.group_name(thread.pk), listener)

    answer = await service.ask(owner, thread.pk, "diffusion transformers")
    await asyncio.wait_for(answer.done.wait(), 30)
    tokens = []
    while True:
        event = (await asyncio.wait_for(layer.receive(listener), 5))["event"]
        if event["type"] == "token":
            tokens.append(event)
        if event["type"] in ("done", "error"):
            break

    assert "".join(t["text"] for t in tokens) == text
    assert [t["offset"] for t in tokens] == [sum(len(t["text"]) for t in tokens[:i])
                                             for i in range(len(tokens))]
    assert len(tokens) <= 10  # 120 chunks streamed


def test_many_answers_at_once_send_fewer_token_messages_each(monkeypatch):
    monkeypatch.setattr(runner, "running", {})
    assert runner.token_interval() == runner.TOKEN_INTERVAL
    monkeypatch.setattr(runner, "running", {i: None for i in range(100)})
    assert runner.token_interval() == pytest.approx(0.2)  # 500 messages a second in all


@pytest.mark.django_db(transaction=True)
def test_saves_while_streaming_do_not_wait_for_the_disk_and_the_final_save_does(owner):
    # With 100 answers at once the write lane spent most of its time waiting for commits to
    # reach the disk (1-4 ms each here); the saves made while streaming are written again by the
    # final save, so only that one waits (docs/BENCHMARKS.md, session 11).
    from django.db import connection
    from django.utils import timezone

    thread = Thread.objects.create(owner=owner)
    message = Message.objects.create(thread=thread, role="assistant", status="streaming")
    statements = []

    def record(execute, sql, params, many, context):
        statements.append((sql, connection.in_atomic_block))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        turns.update_message(message.pk, only_streaming=True, durable=False, content="partial")
    assert statements[0][0] == "SET LOCAL synchronous_commit TO OFF"
    assert len(statements) == 2 and all(atomic for _, atomic in statements)
    with connection.cursor() as cursor:  # for that transaction only
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"

    statements.clear()
    with connection.execute_wrapper(record):
        turns.finish_message(
            message.pk, thread.pk, status="complete", content="final", updated_at=timezone.now()
        )
    # The message and the thread's updated_at in one transaction: one commit, durable.
    assert len(statements) == 2 and all(atomic for _, atomic in statements)
    assert not any("synchronous_commit" in sql for sql, _ in statements)
    turns.update_message(message.pk, only_streaming=True, durable=False, content="late")
    message.refresh_from_db()
    thread_updated = Thread.objects.get(pk=thread.pk).updated_at
    assert (message.status, message.content) == ("complete", "final")
    assert thread_updated >= message.updated_at

"""Answers whose process is gone (chat.processes, chat.turns.fail_stale) and answers stopped by a
shutdown (chat.service.stop_running_answers), in-process; tests/ops/test_interrupted_answers.py
drills the same with real processes killed and stopped."""

import socket
import subprocess
import sys
from datetime import timedelta

import pytest
from django.utils import timezone

from chat import processes, turns
from chat.models import Message, Thread
from chat.turns import AskRefused


def dead_process() -> str:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    identity = processes.identity(child.pid)
    child.wait()
    return identity


def test_a_process_is_gone_once_its_pid_is_free_or_reused():
    assert not processes.is_gone(processes.this_process())
    assert processes.is_gone(dead_process())
    host, pid, started = processes.this_process().rsplit(":", 2)
    assert started, "Linux: the start time is known"
    assert processes.is_gone(f"{host}:{pid}:{int(started) + 1}"), "same pid, another process"


def test_a_process_on_another_host_or_unrecorded_is_never_judged_gone():
    assert not processes.is_gone(f"not-{socket.gethostname()}:1:1")
    assert not processes.is_gone("")
    assert not processes.is_gone("garbage")


@pytest.fixture
def thread(owner):
    return Thread.objects.create(owner=owner)


def streaming(thread, runner: str, saved_ago: timedelta = timedelta(0)) -> Message:
    row = Message.objects.create(
        thread=thread, role="assistant", status="streaming", content="Partial", runner=runner
    )
    Message.objects.filter(pk=row.pk).update(updated_at=timezone.now() - saved_ago)
    return row


@pytest.mark.django_db
def test_answer_of_a_dead_process_frees_the_thread_at_once(owner, thread):
    dead = streaming(thread, dead_process())
    turn = turns.create_turn(owner.pk, thread.pk, "next question")
    dead.refresh_from_db()
    assert dead.status == "failed" and dead.error == turns.INTERRUPTED
    assert dead.content == "Partial", "what was saved is kept"
    assert Message.objects.get(pk=turn.message_id).runner == processes.this_process()


@pytest.mark.django_db
def test_answer_of_a_live_process_locks_the_thread(owner, thread):
    streaming(thread, processes.this_process())
    with pytest.raises(AskRefused) as refused:
        turns.create_turn(owner.pk, thread.pk, "next question")
    assert refused.value.code == "busy"
    assert turns.streaming_snapshot(thread.pk) is not None


@pytest.mark.django_db
def test_answer_on_another_host_is_judged_by_its_heartbeat(owner, thread):
    elsewhere = f"not-{socket.gethostname()}:1234:99"
    live = streaming(thread, elsewhere, saved_ago=turns.STALE_AFTER / 2)
    assert turns.fail_stale(thread.pk) == 0
    Message.objects.filter(pk=live.pk).update(
        updated_at=timezone.now() - turns.STALE_AFTER - timedelta(seconds=1)
    )
    assert turns.fail_stale(thread.pk) == 1

"""Scale-out on Redis: two daphne processes share one thread's stream; a job worker takes its
jobs from the Redis broker.

Real processes on loopback, a real Redis (skipped with the reason where none answers), the real
WebSocket protocol with a session cookie from the login form.
"""

import asyncio
import os
import subprocess
import sys
import time
import uuid

import pytest

from chat.models import Message
from papers.models import Paper, Passage
from tests import live_server
from tests.ops.client import Tab, login_cookie
from tests.ops.conftest import ANSWER, QUESTION, live_servers, unique_prefix

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.mark.timeout(120)
def test_tabs_on_two_processes_see_one_answer_saved_once(
    catalogue, owner, password, thread, fake_llm, redis_url, server, server_env
):
    from tests.fakes.openai_chat import Reply

    assert server_env.get("REDIS_URL"), "the drill server runs on Redis when Redis answers"
    # Slow enough that both tabs are watching long before the answer ends (about 2 s).
    fake_llm.default = Reply(ANSWER, tokens_per_second=20)
    asked_before = len(fake_llm.chat_requests())
    with live_servers(server_env) as (b,):  # a second process: same Redis, same prefix
        a = server
        cookie = login_cookie(a.url, owner.username, password)

        async def scenario():
            tab_a = await Tab.open(a.ws_url, thread.pk, cookie, origin=a.url)
            tab_b = await Tab.open(b.ws_url, thread.pk, cookie, origin=b.url)
            await tab_a.ask(QUESTION)
            seen = await asyncio.gather(tab_a.answer(), tab_b.answer())
            await tab_a.close()
            await tab_b.close()
            return seen

        on_a, on_b = asyncio.run(scenario())

    assert on_a.message_id == on_b.message_id
    for seen in (on_a, on_b):
        assert seen.kinds[0] == "start" and seen.final["type"] == "done", (seen.kinds, seen.final)
        assert seen.kinds.count("token") > 1, "the text arrived as a stream, not in one piece"
        assert seen.kinds.index("sources") < seen.kinds.index("token")
        assert seen.text == ANSWER
        assert seen.final["content"] == ANSWER
    # One process generated it: the model was asked once, and one assistant row exists.
    asked = fake_llm.chat_requests()[asked_before:]
    assert len([r for r in asked if r.stream]) == 1
    answers = Message.objects.filter(thread=thread, role=Message.Role.ASSISTANT)
    assert [(str(m.pk), m.status, m.content) for m in answers] == [
        (on_a.message_id, Message.Status.COMPLETE, ANSWER)
    ]
    assert Message.objects.filter(thread=thread, role=Message.Role.USER).count() == 1


@pytest.mark.timeout(90)
def test_a_job_queued_on_redis_is_run_by_a_qcluster_process(catalogue, settings, redis_url):
    """The indexing job (BM25 + vectors), queued through the Redis broker by one process and run
    by `manage.py qcluster` in another, against this test's database."""
    from django_q.models import Task

    Passage.objects.all().delete()  # the catalogue came embedded: give the job work
    queue = unique_prefix("jobs")
    env = {
        **os.environ,
        "DATABASE_URL": live_server.test_database_url(),
        "FLATUNIVERSE_TESTING": "1",
        "REDIS_URL": redis_url,
        "Q_CLUSTER_NAME": queue,  # the broker's queue: only this test's cluster reads it
        "Q_WORKERS": "1",
        "EMBEDDING_BACKEND": "hashing",
    }
    task_name = f"ops-index-{uuid.uuid4().hex[:8]}"
    enqueue = (
        "from django_q.tasks import async_task; "
        f"async_task('papers.jobs.index_new_papers_job', task_name={task_name!r})"
    )
    queued = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", enqueue],
        cwd=live_server.ROOT, env=env, timeout=60, capture_output=True, text=True,
    )
    assert queued.returncode == 0, queued.stderr
    assert not Task.objects.filter(name=task_name).exists(), "queued in Redis, not yet run"

    log = open(live_server.ROOT / "test-artifacts" / f"qcluster-{queue}.log", "w")
    cluster = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"], cwd=live_server.ROOT, env=env,
        stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not Task.objects.filter(name=task_name).exists():
            assert cluster.poll() is None, "qcluster exited early"
            time.sleep(0.3)
    finally:
        cluster.terminate()
        try:
            cluster.wait(timeout=15)
        except subprocess.TimeoutExpired:
            cluster.kill()
            cluster.wait()
        log.close()

    task = Task.objects.get(name=task_name)
    assert task.success, task.result
    embedded = Passage.objects.values("paper").distinct().count()
    assert embedded == Paper.objects.count() > 0

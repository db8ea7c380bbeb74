"""Ctrl-C of `manage.py serve` stops an idle job cluster in seconds, not by the 15 s kill.

A real `manage.py qcluster` (ORM broker, two workers, against this test's database) is stopped
by serve's own `stop_children`, as on Ctrl-C.
"""

import os
import signal
import subprocess
import sys
import time

import pytest

from chat.management.commands.serve import stop_children
from tests import live_server

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]


def group_members(pid: int) -> list[str]:
    found = subprocess.run(["pgrep", "-g", str(pid)], capture_output=True, text=True)
    return found.stdout.split()


def test_an_idle_job_cluster_stops_within_five_seconds_and_leaves_nothing():
    env = {
        **os.environ,
        "DATABASE_URL": live_server.test_database_url(),
        "FLATUNIVERSE_TESTING": "1",
        "Q_WORKERS": "2",
    }
    env.pop("REDIS_URL", None)  # the ORM broker, as `scripts/run` uses by default
    env.pop("PYTEST_CURRENT_TEST", None)
    log_path = live_server.ROOT / "test-artifacts" / "qcluster-stop.log"
    log_path.parent.mkdir(exist_ok=True)
    with open(log_path, "w") as log:
        cluster = subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=live_server.ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # as serve starts it
        )
        try:
            # Running: the leader, the sentinel, two workers, the monitor and the pusher.
            deadline = time.monotonic() + 90
            while len(group_members(cluster.pid)) < 6 and time.monotonic() < deadline:
                assert cluster.poll() is None, log_path.read_text()
                time.sleep(0.2)
            time.sleep(1)  # idle for a moment: the guard loop and the pusher are polling
            warnings = []
            pressed = time.monotonic()
            stop_children({"jobs": cluster}, warnings.append)
            took = time.monotonic() - pressed
        finally:
            if cluster.poll() is None:
                os.killpg(cluster.pid, signal.SIGKILL)
                cluster.wait()
    assert warnings == [], warnings
    assert took < 5, f"the job cluster took {took:.1f} s to stop"
    assert cluster.returncode == 0, "it stopped by itself, not killed"
    assert group_members(cluster.pid) == [], "no worker left behind"

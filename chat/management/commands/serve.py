"""`manage.py serve`: the whole app in one command (what `scripts/run` calls).

Migrates, makes the schedules, then runs daphne (HTTP + WebSockets) and the django-q2 job cluster
as child processes. Ctrl-C (or SIGTERM) stops both; the embedded PostgreSQL stops with the last
process that uses it. With an empty catalogue it queues an ingest of recent arXiv papers.
"""

import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from flatuniverse.settings.database import forget_dead_users
from papers.jobs import enqueue_ingest
from papers.models import Paper


class Command(BaseCommand):
    help = "Run the web server (daphne) and the job cluster (qcluster) together."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument(
            "--no-jobs", action="store_true", help="Serve the web app only (no job cluster)."
        )

    def handle(self, *args, host, port, no_jobs, **options):
        call_command("migrate", interactive=False, verbosity=0)
        call_command("createcachetable", verbosity=0)
        self.stdout.write("flatuniverse: database ready (migrations applied)")
        call_command("setup_schedules")
        if not no_jobs:
            self._ingest_if_empty()

        python = sys.executable
        children = {
            "web": subprocess.Popen(
                [python, "-m", "daphne", "-b", host, "-p", str(port),
                 "--proxy-headers", "flatuniverse.asgi:application"],
                start_new_session=True,
            ),
        }
        if not no_jobs:
            children["jobs"] = subprocess.Popen(
                [python, str(settings.BASE_DIR / "manage.py"), "qcluster"],
                # Its own process group: the cluster forks workers, and a worker busy with a
                # long job (an ingest) must be stopped with it, never left behind.
                start_new_session=True,
            )
        self.stdout.write(
            self.style.SUCCESS(f"flatuniverse: serving on http://{host}:{port}/ (Ctrl-C stops)")
        )
        self._supervise(children)

    def _ingest_if_empty(self):
        if Paper.objects.exists() or not settings.INGEST_ON_EMPTY_START:
            return
        enqueue_ingest("initial-ingest")
        self.stdout.write(
            "flatuniverse: the catalogue is empty; fetching recent papers from arXiv in the"
            f" background ({', '.join(settings.ARXIV_CATEGORIES)}). Offline? Import a snapshot:"
            " python manage.py import_arxiv_snapshot PATH"
        )

    def _supervise(self, children: dict[str, subprocess.Popen]):
        stopping = False

        def stop(signum, frame):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        try:
            while not stopping:
                for name, child in children.items():
                    if child.poll() is not None:
                        self.stderr.write(f"flatuniverse: {name} exited ({child.returncode}); stopping")
                        stopping = True
                time.sleep(0.2)
        finally:
            self.stdout.write("flatuniverse: stopping…")
            stop_children(children, self.stderr.write)
            if settings.EMBEDDED_DATABASE:
                # Killed processes never said goodbye to the embedded server; forget them so
                # it stops when this last process exits.
                forget_dead_users(settings.DATA_DIR / "postgres")
            self.stdout.write("flatuniverse: stopped")


# How long the children get to stop before they are killed: daphne saves the answers it is
# writing (at most chat.service.SHUTDOWN_PATIENCE), an idle job cluster stops in about 2 s.
STOP_PATIENCE = 15


def stop_children(children: dict[str, subprocess.Popen], warn, patience: float = STOP_PATIENCE):
    """SIGTERM each child process, wait, then SIGKILL whatever is left in their groups.

    Only the leader gets SIGTERM: qcluster stops its own processes in order (the pusher, then
    each worker once its current job is done, then the monitor). Sent to its whole group, the
    signal kills the sentinel and workers outright (their SIGTERM is left at the default) and the
    leader then waits for them until it is killed: 15 s on every Ctrl-C. A job still running at
    the deadline is killed; ingest and indexing jobs resume from their checkpoints next run.
    """
    for child in children.values():
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + patience
    for name, child in children.items():
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            warn(f"flatuniverse: {name} did not stop in time; killing it")
    # Whatever is left in the groups (a worker mid-job, a child that ignored SIGTERM).
    for child in children.values():
        _signal_group(child, signal.SIGKILL)
        child.wait()


def _signal_group(child: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(child.pid, sig)
    except ProcessLookupError:
        pass

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
from django.utils import timezone

from chat.jobs import enqueue_sketches
from chat.retrieval.sentence_sketch import stale_papers
from flatuniverse.settings.database import forget_dead_users
from papers.catalogue import catalogue_status
from papers.jobs import enqueue_indexing, enqueue_ingest, enqueue_recut
from papers.models import IngestRun, Paper


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
        self._say_catalogue(jobs=not no_jobs)

        python = sys.executable
        children = {
            "web": subprocess.Popen(daphne_command(python, host, port), start_new_session=True),
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
        self._watching_since = timezone.now()
        self.stdout.write(
            "flatuniverse: the catalogue is empty; fetching recent papers from arXiv in the"
            f" background ({', '.join(settings.ARXIV_CATEGORIES)}). Offline? Import a snapshot:"
            " python manage.py import_arxiv_snapshot PATH"
        )

    def _say_catalogue(self, jobs: bool):
        """Once, at start: what the catalogue holds, how the last ingest went, what indexing is
        left (queued now: a run interrupted by the last stop is finished by this one)."""
        catalogue = catalogue_status(categories=0)
        if catalogue.papers:
            self.stdout.write(
                f"flatuniverse: catalogue: {catalogue.papers:,} papers published "
                f"{catalogue.oldest_published:%Y-%m-%d} .. {catalogue.newest_published:%Y-%m-%d}"
            )
        elif not settings.INGEST_ON_EMPTY_START or not jobs:
            self.stdout.write(
                "flatuniverse: the catalogue is empty; import a snapshot:"
                " python manage.py import_arxiv_snapshot PATH --since 2024-01-01"
            )
        last = catalogue.last_ingest
        if last and last.status == "failed":
            self.stdout.write(
                f"flatuniverse: the last ingest (run #{last.run_id}) failed: {last.reason}"
            )
        if catalogue.pending_index:
            if jobs:
                enqueue_indexing("at start")
                self.stdout.write(
                    f"flatuniverse: indexing {catalogue.pending_index:,} papers in the background"
                    " (progress on the home page)"
                )
            else:
                self.stdout.write(
                    f"flatuniverse: {catalogue.pending_index:,} papers wait for indexing"
                    " (no job cluster: run manage.py embed_papers)"
                )
        # After an upgrade of the chunker: papers read before are re-cut from their stored text.
        if catalogue.fulltext and catalogue.fulltext.stale and not catalogue.fulltext.recutting:
            stale = catalogue.fulltext.stale
            papers = f"{stale:,} paper{'s' if stale != 1 else ''}"
            if jobs:
                enqueue_recut()
                self.stdout.write(
                    f"flatuniverse: re-cutting the full text of {papers} read by an older"
                    " chunker, in the background (progress on the home page)"
                )
            else:
                self.stdout.write(
                    f"flatuniverse: the full text of {papers} was cut by an older chunker"
                    " (no job cluster: run manage.py fetch_fulltext --rechunk)"
                )

        # After an upgrade of the sentence analysis: read papers' sketches made again.
        stale = len(stale_papers())
        if stale:
            papers = f"{stale:,} read paper{'s' if stale != 1 else ''}"
            if jobs:
                enqueue_sketches()
                self.stdout.write(
                    f"flatuniverse: sketching the sentences of {papers} in the background"
                )
            else:
                self.stdout.write(
                    f"flatuniverse: {papers} lack a current sentence sketch"
                    " (no job cluster: run manage.py sketch_chunks)"
                )

    _watching_since = None  # set when the first ingest is queued: its outcome is said once
    _last_look = 0.0

    def _report_first_ingest(self):
        if self._watching_since is None or time.monotonic() - self._last_look < 5:
            return
        self._last_look = time.monotonic()
        run = (
            IngestRun.objects.filter(
                source=IngestRun.Source.ARXIV_API, started_at__gte=self._watching_since
            )
            .exclude(status=IngestRun.Status.RUNNING)
            .first()
        )
        if run is None:
            return
        self._watching_since = None
        if run.status == IngestRun.Status.FAILED:
            reason = run.errors[-1]["error"] if run.errors else "see /admin/ → Ingest runs"
            self.stdout.write(
                f"flatuniverse: the first ingest failed: {reason}. Offline? Import a snapshot:"
                " python manage.py import_arxiv_snapshot PATH --since 2024-01-01"
            )
        else:
            self.stdout.write(
                f"flatuniverse: the first ingest fetched {run.new:,} papers; indexing them in the"
                " background (progress on the home page)"
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
                self._report_first_ingest()
        finally:
            self.stdout.write("flatuniverse: stopping…")
            stop_children(children, self.stderr.write)
            if settings.EMBEDDED_DATABASE:
                # Killed processes never said goodbye to the embedded server; forget them so
                # it stops when this last process exits.
                forget_dead_users(settings.DATA_DIR / "postgres")
            self.stdout.write("flatuniverse: stopped")


def daphne_command(python: str, host: str, port: int) -> list[str]:
    """daphne without `--proxy-headers`: that flag believes X-Forwarded-For from any client, so
    anyone could pick the address in logs and throttles. The app reads the header itself, and
    only from TRUSTED_PROXIES (security/client.py)."""
    return [python, "-m", "daphne", "-b", host, "-p", str(port), "flatuniverse.asgi:application"]


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

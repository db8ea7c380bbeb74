"""Chat jobs: plain functions returning small results; django-q2 runs them. The only module that
names a chat job's path.

The watch job runs when the catalogue has new searchable papers: the indexing job that follows
each nightly ingest sends papers.signals.catalogue_indexed (papers never imports chat), and the
receiver queues the job."""

from django_q.tasks import async_task

WATCH_JOB = "chat.jobs.watch_followed_threads_job"


def enqueue_watch(sender=None, **kwargs) -> None:
    """Receiver of catalogue_indexed: queue the re-run of followed threads."""
    async_task(WATCH_JOB, task_name="watch-followed-threads", group="watch")


def watch_followed_threads_job() -> dict:
    """Re-run followed threads' last questions on the new papers, then send the day's digests."""
    from chat import digest, watch  # the search stack: loaded by the job, not at start-up

    result = watch.run_watches()
    sent = digest.send_digests(result.updated_threads)
    return {**result.as_dict(), "digests": sent}


def connect_signals() -> None:
    from papers.signals import catalogue_indexed

    catalogue_indexed.connect(enqueue_watch, dispatch_uid="chat.watch")

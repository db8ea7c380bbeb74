"""Chat jobs: plain functions returning small results; django-q2 runs them. The only module that
names a chat job's path.

The watch job runs when the catalogue has new searchable papers: the indexing job that follows
each nightly ingest sends papers.signals.catalogue_indexed (papers never imports chat), and the
receiver queues the job; so does the job that remakes sentence sketches made by older code. A
paper's chunks are sketched as soon as they have their words (papers.signals.fulltext_indexed)."""

from django_q.tasks import async_task

WATCH_JOB = "chat.jobs.watch_followed_threads_job"
SKETCH_JOB = "chat.jobs.sketch_stale_job"


def enqueue_watch(sender=None, **kwargs) -> None:
    """Receiver of catalogue_indexed: queue the re-run of followed threads."""
    async_task(WATCH_JOB, task_name="watch-followed-threads", group="watch")


def watch_followed_threads_job() -> dict:
    """Re-run followed threads' last questions on the new papers, then send the day's digests."""
    from chat import digest, watch  # the search stack: loaded by the job, not at start-up

    result = watch.run_watches()
    sent = digest.send_digests(result.updated_threads)
    return {**result.as_dict(), "digests": sent}


def sketch_read_papers(sender=None, paper_ids=(), **kwargs) -> None:
    """Receiver of fulltext_indexed: the papers' chunks' sentence sketches, made at once (~0.5
    ms a chunk, beside the seconds their embedding took)."""
    from chat.retrieval.sentence_sketch import sketch_papers

    sketch_papers(paper_ids)


def enqueue_sketches(sender=None, **kwargs) -> None:
    """Receiver of catalogue_indexed: remake the sketches that older code made."""
    async_task(SKETCH_JOB, task_name="sketch-stale-chunks", group="sketch")


def sketch_stale_job() -> dict:
    from chat.retrieval.sentence_sketch import sketch_stale

    return sketch_stale()


def connect_signals() -> None:
    from papers.signals import catalogue_indexed, fulltext_indexed

    catalogue_indexed.connect(enqueue_watch, dispatch_uid="chat.watch")
    catalogue_indexed.connect(enqueue_sketches, dispatch_uid="chat.sketches")
    fulltext_indexed.connect(sketch_read_papers, dispatch_uid="chat.sketch_read_papers")

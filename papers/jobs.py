"""Jobs: plain functions returning small results. django-q2 schedules and runs them (see
papers/schedules.py, the admin's buttons, `manage.py serve`); tests call them directly.

This is the only module that names a job's path: everyone else queues through `enqueue_*`."""

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone
from django_q.tasks import async_task

from papers.fulltext.read import read_paper
from papers.fulltext.rechunk import recut_papers, select_stale, stale_count
from papers.fulltext.runs import read_papers, select_papers
from papers.indexing.periods import ensure_lexicon_year_indexes, ensure_year_indexes
from papers.indexing.run import run_indexing
from papers.ingest.arxiv_api import ingest_arxiv, refresh_papers
from papers.ingest.runs import RunBusy
from papers.models import Paper
from papers.signals import catalogue_indexed

INGEST_JOB = "papers.jobs.ingest_recent_job"
REFRESH_JOB = "papers.jobs.refresh_papers_job"
INDEX_JOB = "papers.jobs.index_new_papers_job"
FULLTEXT_JOB = "papers.jobs.read_fulltext_job"
NEW_FULLTEXT_JOB = "papers.jobs.read_new_fulltext_job"
RECUT_JOB = "papers.jobs.recut_fulltext_job"


def enqueue_ingest(task_name: str, **kwargs) -> str:
    """Queue the nightly ingest now; returns the cluster's task id."""
    return async_task(INGEST_JOB, task_name=task_name, group="ingest", **kwargs)


def enqueue_refresh(arxiv_ids: list[str]) -> str:
    return async_task(REFRESH_JOB, arxiv_ids, task_name="refresh-papers", group="ingest")


def enqueue_indexing(reason: str) -> None:
    async_task(INDEX_JOB, task_name=f"index-new-papers ({reason})", group="index")


def enqueue_fulltext(paper_id: int) -> str:
    """Read one paper's full text soon (papers.fulltext.queue.request_fulltext calls this)."""
    return async_task(
        FULLTEXT_JOB, paper_id, task_name=f"read-fulltext ({paper_id})", group="fulltext"
    )


def enqueue_recut(arxiv_ids: list[str] | None = None) -> str:
    """Re-cut stale full texts from their stored text: these papers, or the next batch of
    FULLTEXT_RECUT_BATCH (papers.fulltext.rechunk)."""
    return async_task(RECUT_JOB, arxiv_ids or [], task_name="recut-fulltext", group="fulltext")


def ingest_recent_job(categories: list[str] | None = None) -> dict:
    """The nightly ingest (also the first start's): new arXiv papers, then their vectors."""
    result = ingest_arxiv(categories=categories)
    if result.changed:
        enqueue_indexing("after ingest")
    fulltext_queued = bool(result.changed and settings.FULLTEXT_CATEGORIES)
    if fulltext_queued:
        since = result.window_start or timezone.now() - timedelta(days=2)
        async_task(
            NEW_FULLTEXT_JOB, since.isoformat(), task_name="read-new-fulltext", group="fulltext"
        )
    # Papers read before an upgrade of the chunker: the next batch of their re-cut.
    recut_queued = stale_count() > 0
    if recut_queued:
        enqueue_recut()
    return {
        "status": result.status,
        "run": result.run_id,
        **result.counts.as_dict(),
        "indexing_queued": result.changed,
        "fulltext_queued": fulltext_queued,
        "recut_queued": recut_queued,
        "message": result.message,
    }


def refresh_papers_job(arxiv_ids: list[str]) -> dict:
    """The admin's "refresh from arXiv": fetch these ids and apply newer versions."""
    result = refresh_papers(list(arxiv_ids))
    if result.changed:
        enqueue_indexing("after refresh")
    return {"status": result.status, "run": result.run_id, **result.counts.as_dict()}


def index_new_papers_job() -> dict:
    """Make new and changed papers searchable: the BM25 index, then vectors for the active model.
    Queued jobs coalesce: while one runs, the others return at once ("busy") and leave their
    papers to it (papers.indexing.run)."""
    result = run_indexing()
    if result.embedded:
        ensure_year_indexes()  # a year that just reached DENSE_YEAR_INDEX_MIN abstracts
    if result.lexical:
        ensure_lexicon_year_indexes()  # a year's first papers (1 January, or an old import)
    if result.lexical or result.embedded:
        # Followed threads ask again (chat.watch): the new papers are searchable now.
        catalogue_indexed.send(sender=index_new_papers_job, result=result)
    return result.as_dict()


def read_fulltext_job(paper_id: int) -> dict:
    """One paper's full text, on demand: fetch, parse, chunk, embed (papers.fulltext.read)."""
    paper = Paper.objects.filter(pk=paper_id).first()
    if paper is None:
        return {"status": "gone", "paper": paper_id}
    fulltext = read_paper(paper)
    return {"status": fulltext.status, "paper": paper_id, "reason": fulltext.reason}


def read_new_fulltext_job(since: str) -> dict:
    """After the nightly ingest: the full text of new papers in FULLTEXT_CATEGORIES."""
    selection = select_papers(
        since=datetime.fromisoformat(since), categories=settings.FULLTEXT_CATEGORIES
    )
    run = read_papers(selection, params={"since": since, "nightly": True})
    return {
        "status": run.status,
        "run": run.pk,
        "read": run.new + run.updated,
        "errors": len(run.errors),
    }


def recut_fulltext_job(arxiv_ids: list[str] | None = None) -> dict:
    """Re-cut stale full texts from their stored text (no PDF fetched): the papers named (the
    admin's action), or a batch of FULLTEXT_RECUT_BATCH, the next batch queued while stale
    papers remain (the nightly ingest and `serve` start the chain)."""
    rows, _ = select_stale(
        arxiv_ids or (), limit=None if arxiv_ids else settings.FULLTEXT_RECUT_BATCH
    )
    if not rows:
        return {"status": "nothing stale"}
    try:
        run = recut_papers(rows, params={"arxiv_ids": arxiv_ids or [], "batch": not arxiv_ids})
    except RunBusy as exc:
        return {"status": "busy", "message": str(exc)}
    # Only when this batch settled something: a batch of failures would queue itself forever
    # (failed papers leave the selection, so this is belt and braces).
    more = not arxiv_ids and (run.updated + run.unchanged + len(run.errors)) > 0
    if more and stale_count() > 0:
        enqueue_recut()
    return {
        "status": run.status,
        "run": run.pk,
        "recut": run.updated,
        "unchanged": run.unchanged,
        "errors": len(run.errors),
    }

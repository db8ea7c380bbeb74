"""Jobs: plain functions returning small results. django-q2 schedules and runs them (see
papers/schedules.py, the admin's buttons, `manage.py serve`); tests call them directly."""

import logging

from django_q.tasks import async_task

from papers.ingest.arxiv_api import ingest_arxiv, refresh_papers

logger = logging.getLogger("papers.jobs")

INDEX_JOB = "papers.jobs.index_new_papers_job"


def enqueue_indexing(reason: str) -> None:
    async_task(INDEX_JOB, task_name=f"index-new-papers ({reason})", group="index")


def ingest_recent_job(categories: list[str] | None = None) -> dict:
    """The nightly ingest (also the first start's): new arXiv papers, then their vectors."""
    result = ingest_arxiv(categories=categories)
    if result.changed:
        enqueue_indexing("after ingest")
    return {
        "status": result.status,
        "run": result.run_id,
        **result.counts.as_dict(),
        "indexing_queued": result.changed,
        "message": result.message,
    }


def refresh_papers_job(arxiv_ids: list[str]) -> dict:
    """The admin's "refresh from arXiv": fetch these ids and apply newer versions."""
    result = refresh_papers(list(arxiv_ids))
    if result.changed:
        enqueue_indexing("after refresh")
    return {"status": result.status, "run": result.run_id, **result.counts.as_dict()}


def index_new_papers_job() -> dict:
    """Make new and changed papers searchable: the BM25 index, then vectors for the active model."""
    outcome: dict = {}
    try:
        from papers.indexing.lexical import index_missing
    except ImportError as exc:
        logger.warning("lexical indexing skipped: papers.indexing.lexical is not available (%s)", exc)
    else:
        outcome["lexical"] = index_missing()
    try:
        from papers.indexing.vectors import embed_missing
    except ImportError as exc:
        # The embedding module ships separately; ingest must not fail without it.
        logger.warning("embedding skipped: papers.indexing.vectors is not available (%s)", exc)
        outcome["embedding"] = "skipped"
    else:
        result = embed_missing()
        outcome["embedding"] = result.as_dict() if hasattr(result, "as_dict") else str(result)
    return outcome

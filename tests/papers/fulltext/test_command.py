"""manage.py fetch_fulltext, the selection behind it, and request_fulltext (on demand)."""

from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command
from django_q.models import OrmQ

from papers.fulltext.queue import request_fulltext
from papers.fulltext.runs import select_papers
from papers.models import FullText, IngestRun, Passage
from tests.papers.fulltext.conftest import SHORT


def test_fetch_fulltext_records_a_run_and_goes_on_past_failures(
    pdf_server, shared_papers, add_paper, capsys
):
    add_paper("2401.00005")  # in the catalogue, not on "arXiv": 404
    call_command("fetch_fulltext", SHORT, "2401.00005", "9999.99999", "--no-progress")

    run = IngestRun.objects.get(source=IngestRun.Source.FULLTEXT)
    assert run.status == IngestRun.Status.PARTIAL
    assert (run.new, run.updated, run.unchanged, run.skipped) == (1, 0, 0, 1)
    assert {e["arxiv_id"]: e["error"] for e in run.errors} == {
        "9999.99999": "not in the catalogue",
        "2401.00005": "v1: no PDF at arXiv (HTTP 404): withdrawn or never posted",
    }
    assert run.progress["done"] == run.progress["total"] == 2
    assert {"fetch", "parse", "embed", "total"} <= set(run.timings)
    out = capsys.readouterr().out
    assert "1 read" in out and "1 failed" in out and "2401.00005: v1: no PDF" in out

    # Idempotent: the second run makes no request for the paper already read.
    served = len(pdf_server.requests)
    call_command("fetch_fulltext", SHORT, "--no-progress")
    again = IngestRun.objects.filter(source=IngestRun.Source.FULLTEXT).first()
    assert (again.new, again.unchanged, again.status) == (0, 1, IngestRun.Status.SUCCEEDED)
    assert len(pdf_server.requests) == served


def test_fetch_fulltext_wants_to_be_told_which_papers(db):
    with pytest.raises(CommandError, match="say which papers"):
        call_command("fetch_fulltext", "--no-progress")


def test_selection_by_category_and_date_leaves_out_read_and_failed_papers(shared_papers):
    quantum = select_papers(categories=["quant-ph"])
    assert len(quantum.papers) == 7
    assert all("quant-ph" in p.categories for p in quantum.papers)
    assert quantum.papers == sorted(quantum.papers, key=lambda p: p.published, reverse=True)

    newest, second = quantum.papers[:2]
    FullText.objects.create(paper=newest, version=newest.version, status=FullText.Status.OK)
    FullText.objects.create(paper=second, version=second.version, status=FullText.Status.FAILED)
    left = select_papers(categories=["quant-ph"]).papers
    assert newest not in left and second not in left and len(left) == 5
    assert second in select_papers(categories=["quant-ph"], retry_failed=True).papers

    since = datetime(2025, 1, 1, tzinfo=UTC)
    recent = select_papers(since=since, categories=["cs"], limit=2).papers
    assert len(recent) <= 2 and all(p.published >= since for p in recent)


def test_request_fulltext_queues_once_and_again_after_a_failure(
    shared_papers, django_capture_on_commit_callbacks
):
    paper = shared_papers[SHORT]
    with django_capture_on_commit_callbacks(execute=True):
        first = request_fulltext(paper)
        second = request_fulltext(paper)
    assert first.status == second.status == FullText.Status.QUEUED
    assert OrmQ.objects.count() == 1

    FullText.objects.filter(pk=first.pk).update(status=FullText.Status.FAILED, reason="v2: x")
    with django_capture_on_commit_callbacks(execute=True):
        again = request_fulltext(paper)
    assert again.status == FullText.Status.QUEUED and again.reason == ""
    assert OrmQ.objects.count() == 2
    assert not Passage.objects.chunks().exists()


def test_the_queued_job_reads_the_paper(pdf_server, shared_papers):
    from papers.jobs import read_fulltext_job

    paper = shared_papers[SHORT]
    result = read_fulltext_job(paper.pk)
    assert result["status"] == FullText.Status.OK
    assert Passage.objects.chunks().filter(paper=paper).exists()

"""An upgraded installation: papers read by an older chunker are re-cut from their stored text
(fetch_fulltext --rechunk, the batch job, the admin's action), with no request to arXiv, and end
up with the chunks a fresh read makes; a paper whose re-cut fails keeps its chunks and says why.
Real PDFs from the shared set, read over HTTP from the local arXiv stand-in."""

import pytest
from django.core.management import call_command

from papers.catalogue import catalogue_status
from papers.embeddings import get_embedder
from papers.embeddings.openai_api import OpenAIEmbedder
from papers.fulltext.chunk import CHUNKER_VERSION, chunker_signature
from papers.fulltext.read import read_paper
from papers.fulltext.rechunk import recut_papers, select_stale, stale_fulltexts
from papers.jobs import recut_fulltext_job
from papers.models import FullText, IngestRun, PaperName, Passage
from tests.fakes.openai_embeddings import FakeOpenAIEmbeddings
from tests.papers.fulltext.conftest import SHORT, SHORT_2


def _chunks(paper):
    return list(
        Passage.objects.chunks()
        .filter(paper=paper)
        .order_by("position")
        .values_list("start", "end", "page", "page_end", "section")
    )


def _read_by_an_older_release(paper, settings, tokens=200):
    """What an installation from before the upgrade kept: chunks of another size, no chunker
    recorded, headings and names found by older rules (here: none)."""
    settings.FULLTEXT_CHUNK_TOKENS = tokens
    assert read_paper(paper).status == FullText.Status.OK
    FullText.objects.filter(paper=paper).update(chunker="", sections=[])
    PaperName.objects.filter(paper=paper).delete()
    settings.FULLTEXT_CHUNK_TOKENS = 300


def test_rechunk_recuts_stale_papers_from_their_text_like_a_fresh_read(
    pdf_server, shared_papers, settings, capsys
):
    paper, other = shared_papers[SHORT], shared_papers[SHORT_2]
    _read_by_an_older_release(paper, settings)
    _read_by_an_older_release(other, settings)
    old = _chunks(paper)
    requests = len(pdf_server.requests)
    names = set(PaperName.objects.filter(paper__in=[paper, other]).values_list("paper_id", "key"))
    assert catalogue_status().fulltext.stale == 2

    call_command("fetch_fulltext", "--rechunk", "--no-progress")

    assert len(pdf_server.requests) == requests  # no PDF fetched
    run = IngestRun.objects.get(source=IngestRun.Source.RECHUNK)
    assert (run.status, run.updated, run.unchanged, run.errors) == ("succeeded", 2, 0, [])
    assert run.progress["done"] == run.progress["total"] == 2
    assert 0 < run.progress["embedded"] <= run.progress["chunks"]
    out = capsys.readouterr().out
    assert f"re-cut run #{run.pk} succeeded: 2 re-cut" in out and "s a paper" in out
    fulltext = FullText.objects.get(paper=paper)
    assert fulltext.chunker == chunker_signature(get_embedder()) == f"{CHUNKER_VERSION}/256"
    assert "1 Introduction" in [s["title"] for s in fulltext.sections]
    # The names its title and body introduce are back (FiD's "fusion in decoder").
    assert (paper.pk, "fusion in decoder") in set(
        PaperName.objects.filter(paper__in=[paper, other]).values_list("paper_id", "key")
    ) - names
    recut = _chunks(paper)
    assert recut != old and {c[4] for c in recut} >= {"1 Introduction", "3 Method"}
    vectors = dict(Passage.objects.chunks().filter(paper=paper).values_list("start", "embedding"))
    words = Passage.objects.chunks().filter(paper=paper, lexemes__isnull=True).count()
    assert words == 0  # the lexical chunk search finds the new chunks
    summary = catalogue_status().fulltext
    assert (summary.read, summary.stale) == (2, 0)
    assert summary.text == "Full text read for 2 papers."

    # The same as reading the PDF afresh with today's chunker: spans, headings and vectors.
    fresh = read_paper(paper, force=True)
    assert fresh.sections == fulltext.sections
    assert _chunks(paper) == recut
    for start, vector in (
        Passage.objects.chunks().filter(paper=paper).values_list("start", "embedding")
    ):
        assert list(vector) == list(vectors[start])

    # Idempotent: nothing is stale any more, no run is recorded.
    call_command("fetch_fulltext", "--rechunk", "--no-progress")
    assert "nothing to re-cut" in capsys.readouterr().out
    assert IngestRun.objects.filter(source=IngestRun.Source.RECHUNK).count() == 1


def test_chunks_that_come_out_the_same_keep_their_rows_and_vectors(pdf_server, shared_papers):
    paper = shared_papers[SHORT]
    read_paper(paper)
    FullText.objects.filter(paper=paper).update(chunker="")  # read before the signature existed
    rows = set(Passage.objects.chunks().filter(paper=paper).values_list("pk", flat=True))

    rows_to_recut, not_stale = select_stale([SHORT, SHORT_2, "not-an-id"])
    assert [r.paper_id for r in rows_to_recut] == [paper.pk]
    assert not_stale == ["not-an-id", SHORT_2]  # never read
    run = recut_papers(rows_to_recut)

    assert (run.updated, run.unchanged, run.progress["embedded"]) == (0, 1, 0)
    assert set(Passage.objects.chunks().filter(paper=paper).values_list("pk", flat=True)) == rows
    assert not stale_fulltexts().exists()


def test_a_paper_whose_recut_fails_keeps_its_chunks_and_says_why(
    pdf_server, shared_papers, settings
):
    paper = shared_papers[SHORT]
    with FakeOpenAIEmbeddings() as fake:
        embedder = OpenAIEmbedder(api_key="test", base_url=fake.base_url, max_retries=0)
        settings.FULLTEXT_CHUNK_TOKENS = 200
        assert read_paper(paper, embedder=embedder).status == FullText.Status.OK
        settings.FULLTEXT_CHUNK_TOKENS = 300
        old = set(Passage.objects.chunks().filter(paper=paper).values_list("pk", flat=True))
        rows, _ = select_stale(embedder=embedder)
        assert len(rows) == 1

        fake.fail_next(500)
        run = recut_papers(rows, embedder=embedder)

        assert run.status == IngestRun.Status.PARTIAL
        assert run.errors[0]["arxiv_id"] == SHORT
        assert "the embedder failed" in run.errors[0]["error"]
        fulltext = FullText.objects.get(paper=paper)
        assert fulltext.status == FullText.Status.OK  # still read: its old chunks answer
        assert fulltext.recut_failed == chunker_signature(embedder) == f"{CHUNKER_VERSION}/300"
        assert "the embedder failed" in fulltext.recut_reason
        assert set(Passage.objects.chunks().filter(paper=paper).values_list("pk", flat=True)) == (
            old
        )
        # The batches leave it alone; naming it tries again, and then it is re-cut.
        assert select_stale(embedder=embedder)[0] == []
        rows, _ = select_stale([SHORT], embedder=embedder)
        again = recut_papers(rows, embedder=embedder)
        assert (again.updated, again.errors) == (1, [])
        fulltext.refresh_from_db()
        assert (fulltext.chunker, fulltext.recut_failed, fulltext.recut_reason) == (
            f"{CHUNKER_VERSION}/300", "", ""
        )


def test_the_batch_job_recuts_a_batch_and_queues_the_next(pdf_server, shared_papers, settings):
    from django_q.models import OrmQ

    for arxiv_id in (SHORT, SHORT_2):
        _read_by_an_older_release(shared_papers[arxiv_id], settings)
    settings.FULLTEXT_RECUT_BATCH = 1

    first = recut_fulltext_job()
    assert (first["recut"], first["errors"]) == (1, 0)
    queued = [task.func() for task in OrmQ.objects.all()]
    assert queued == ["papers.jobs.recut_fulltext_job"]  # one stale paper left: the next batch

    OrmQ.objects.all().delete()
    assert recut_fulltext_job()["recut"] == 1
    assert not OrmQ.objects.exists()  # nothing left to queue
    assert recut_fulltext_job() == {"status": "nothing stale"}


def test_staff_action_queues_a_recut_of_the_stale_papers_selected(
    staff_client, pdf_server, shared_papers, settings
):
    from django.urls import reverse
    from django_q.models import OrmQ

    stale, current = shared_papers[SHORT], shared_papers[SHORT_2]
    _read_by_an_older_release(stale, settings)
    read_paper(current)
    response = staff_client.post(
        reverse("admin:papers_paper_changelist"),
        {"action": "recut_full_text", "_selected_action": [stale.pk, current.pk]},
        follow=True,
    )
    assert "Re-cutting the chunks of 1 paper queued (1 current or not read)" in (
        response.content.decode()
    )
    [task] = OrmQ.objects.all()
    assert task.func() == "papers.jobs.recut_fulltext_job"
    assert sorted(task.task["args"][0]) == sorted([SHORT, SHORT_2])

    # The job the action queued re-cuts the stale one; the current one is left alone.
    assert recut_fulltext_job(*task.task["args"])["recut"] == 1
    assert not stale_fulltexts().exists()


def test_the_catalogue_shows_how_many_papers_wait_for_a_recut(
    anonymous, pdf_server, shared_papers, settings
):
    from django.urls import reverse

    _read_by_an_older_release(shared_papers[SHORT], settings)
    read_paper(shared_papers[SHORT_2])
    html = anonymous.get(reverse("papers:list")).content.decode()
    assert (
        "Full text read for 2 papers; 1 of them cut into passages by an older chunker, waiting to"
        " be re-cut." in html
    )
    body = anonymous.get(reverse("papers:catalogue")).json()["fulltext"]
    assert (body["read"], body["stale"], body["recutting"], body["progress"]) == (2, 1, False, None)

    # While a re-cut runs, the progress it records is what the page says.
    run = IngestRun.objects.create(
        source=IngestRun.Source.RECHUNK,
        progress={"stage": "re-cutting", "done": 40, "total": 95, "per_second": 1.0},
    )
    from papers.ingest.runs import exclusive

    with exclusive("rechunk"):
        body = anonymous.get(reverse("papers:catalogue")).json()["fulltext"]
    assert body["recutting"] is True and body["progress"]["run"] == run.pk
    assert body["text"] == (
        "Full text read for 2 papers; re-cutting the full text of 40 of 95 papers, about a minute"
        " left."
    )


def test_reread_fetches_a_read_paper_again_for_what_a_recut_cannot_recover(
    pdf_server, shared_papers
):
    from django.core.management import CommandError

    read_paper(shared_papers[SHORT])
    requests = len(pdf_server.requests)
    call_command("fetch_fulltext", SHORT, "--no-progress")  # read at its version: no request
    assert len(pdf_server.requests) == requests

    call_command("fetch_fulltext", SHORT, "--reread", "--no-progress")
    assert len(pdf_server.requests) == requests + 1
    run = IngestRun.objects.filter(source=IngestRun.Source.FULLTEXT).first()
    assert (run.updated, run.unchanged, run.errors) == (1, 0, [])
    with pytest.raises(CommandError, match="name them"):
        call_command("fetch_fulltext", "--reread", "--limit", "3", "--no-progress")


def test_serve_starts_the_recut_of_an_upgraded_install(pdf_server, shared_papers, settings):
    from io import StringIO

    from django_q.models import OrmQ

    from chat.management.commands.serve import Command

    _read_by_an_older_release(shared_papers[SHORT], settings)
    out = StringIO()
    Command(stdout=out)._say_catalogue(jobs=True)
    assert "re-cutting the full text of 1 paper read by an older chunker" in out.getvalue()
    assert "papers.jobs.recut_fulltext_job" in [task.func() for task in OrmQ.objects.all()]

    out = StringIO()
    Command(stdout=out)._say_catalogue(jobs=False)
    assert "no job cluster: run manage.py fetch_fulltext --rechunk" in out.getvalue()

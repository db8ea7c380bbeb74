"""The paper page's full-text line and its JSON, the admin's "Read full text", the nightly job."""

from datetime import UTC, datetime

from django.urls import reverse
from django_q.models import OrmQ

from papers.jobs import NEW_FULLTEXT_JOB, read_new_fulltext_job
from papers.models import FullText, IngestRun, Passage
from tests.papers.fulltext.conftest import SHORT


def _status(client, paper):
    return client.get(reverse("papers:fulltext-status", kwargs={"arxiv_id": paper.arxiv_id}))


def test_paper_page_shows_each_full_text_state_and_its_json(anonymous, shared_papers):
    paper = shared_papers[SHORT]
    page_url = reverse("papers:detail", kwargs={"arxiv_id": paper.arxiv_id})
    html = anonymous.get(page_url).content.decode()
    assert "Full text: not read yet" in html
    assert 'data-role="fulltext-status"' in html and "js/fulltext.js" in html
    assert f'href="https://arxiv.org/pdf/{SHORT}"' in html  # arXiv's PDF, never ours
    assert _status(anonymous, paper).json() == {
        "status": "none",
        "label": "Full text: not read yet",
        "polling": False,
    }

    fulltext = FullText.objects.create(paper=paper, version=2)
    body = _status(anonymous, paper).json()
    assert (body["status"], body["label"], body["polling"]) == ("queued", "Full text: queued", True)

    fulltext.status = FullText.Status.FETCHING
    fulltext.save()
    assert _status(anonymous, paper).json()["label"] == "Full text: reading…"

    fulltext.status, fulltext.reason = FullText.Status.FAILED, "v2: <b>the PDF is encrypted</b>"
    fulltext.save()
    body = _status(anonymous, paper).json()
    assert body["label"] == "Full text: failed: v2: <b>the PDF is encrypted</b>"
    assert body["polling"] is False
    html = anonymous.get(page_url).content.decode()
    assert "failed: v2: &lt;b&gt;the PDF is encrypted&lt;/b&gt;" in html

    fulltext.status, fulltext.pages = FullText.Status.OK, 6
    fulltext.save()
    assert _status(anonymous, paper).json()["label"] == "Full text: read, 6 pages"
    assert 'data-state="ok"' in anonymous.get(page_url).content.decode()


def test_status_of_a_hidden_paper_is_not_found(anonymous, shared_papers):
    paper = shared_papers[SHORT]
    paper.hidden = True
    paper.save(update_fields=["hidden"])
    assert _status(anonymous, paper).status_code == 404


def test_staff_action_queues_reading_once_per_paper(
    staff_client, shared_papers, django_capture_on_commit_callbacks
):
    papers = [shared_papers[SHORT], shared_papers["2212.08410"]]
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            reverse("admin:papers_paper_changelist"),
            {"action": "read_full_text", "_selected_action": [p.pk for p in papers]},
            follow=True,
        )
    assert "Reading the full text of 2 papers queued" in response.content.decode()
    assert OrmQ.objects.count() == 2
    assert set(FullText.objects.values_list("status", flat=True)) == {"queued"}


def test_nightly_job_reads_new_papers_of_the_fulltext_categories(
    pdf_server, shared_papers, settings
):
    settings.FULLTEXT_CATEGORIES = ["cs.CV"]
    since = datetime(2022, 6, 1, tzinfo=UTC)
    wanted = [p for p in shared_papers.values() if p.published >= since and "cs.CV" in p.categories]
    assert [p.arxiv_id for p in wanted] == ["2301.01531"]
    result = read_new_fulltext_job(since.isoformat())
    run = IngestRun.objects.get(pk=result["run"])
    assert run.source == IngestRun.Source.FULLTEXT and run.params["nightly"] is True
    assert run.new + len(run.errors) == len(wanted)
    read = set(Passage.objects.chunks().values_list("paper__arxiv_id", flat=True))
    assert read and read <= {p.arxiv_id for p in wanted}
    assert NEW_FULLTEXT_JOB == "papers.jobs.read_new_fulltext_job"

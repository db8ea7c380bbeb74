"""Staff start an arXiv ingest through the API and follow it to its ingest run."""

import pytest
from django.conf import settings as django_settings
from django_q.conf import Conf
from django_q.models import OrmQ

from papers.models import IngestRun, Paper
from tests.fakes.arxiv_replay import ReplayArxiv


@pytest.mark.django_db
def test_users_cannot_start_or_read_ingests(owner_api, anonymous_api):
    assert owner_api.post("/api/ingest/", {}, format="json").status_code == 403
    assert anonymous_api.post("/api/ingest/", {}, format="json").status_code == 401
    assert owner_api.get(f"/api/ingest/{'a' * 32}/").status_code == 403
    assert not OrmQ.objects.exists()


orm_broker_only = pytest.mark.skipif(
    "orm" not in django_settings.Q_CLUSTER, reason="looks into the ORM broker's queue"
)


@pytest.mark.django_db
def test_staff_start_queues_an_ingest_and_can_follow_it(staff_api):
    response = staff_api.post("/api/ingest/", {"categories": ["cs.CL"]}, format="json")
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["status"] == "queued" and body["run"] is None
    status = staff_api.get(f"/api/ingest/{body['id']}/")
    assert status.status_code == 200 and status.json()["status"] == "queued"


@orm_broker_only
@pytest.mark.django_db
def test_start_queues_the_nightly_job_once(staff_api):
    body = staff_api.post("/api/ingest/", {"categories": ["cs.CL"]}, format="json").json()
    [queued] = OrmQ.objects.all()
    assert queued.task_id() == body["id"]
    assert queued.func() == "papers.jobs.ingest_recent_job"
    assert queued.kwargs() == {"categories": ["cs.CL"]}
    # Asking again while it waits returns the same ingest instead of queueing a second one.
    again = staff_api.post("/api/ingest/", {}, format="json")
    assert again.status_code == 200 and again.json()["id"] == body["id"]
    assert OrmQ.objects.count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize("body", [{"categories": []}, {"categories": ["not a category"]},
                                  {"categories": "cs.CL"}])
def test_bad_ingest_requests_get_400(staff_api, body):
    response = staff_api.post("/api/ingest/", body, format="json")
    assert response.status_code == 400
    assert "categories" in response.json()["error"]["fields"]


@pytest.mark.django_db
def test_unknown_ingest_is_404(staff_api):
    assert staff_api.get(f"/api/ingest/{'0' * 32}/").status_code == 404
    assert staff_api.get("/api/ingest/not-hex/").status_code == 404


@pytest.mark.django_db
def test_finished_ingest_reports_its_run(staff_api, shared_data, settings, monkeypatch):
    """The job runs for real (synchronously, as django-q2's sync mode does) against a local
    server replaying recorded arXiv responses."""
    settings.ARXIV_PAGE_SIZE = 10
    settings.ARXIV_DELAY_SECONDS = 0
    monkeypatch.setattr(Conf, "SYNC", True)
    with ReplayArxiv(categories={"cs.CL": "q_testing"}, total_results=20) as replay:
        settings.ARXIV_API_URL = replay.url
        response = staff_api.post("/api/ingest/", {"categories": ["cs.CL"]}, format="json")
    assert response.status_code == 202, response.content
    status = staff_api.get(f"/api/ingest/{response.json()['id']}/").json()
    assert status["status"] == "succeeded", status
    run = IngestRun.objects.get(pk=status["run"]["id"])
    assert run.source == IngestRun.Source.ARXIV_API
    assert status["run"]["new"] == run.new == Paper.objects.count() > 0
    assert status["result"]["run"] == run.pk


def test_staff_without_the_start_ingest_permission_get_403(token_client, django_user_model):
    """is_staff alone is not enough to fetch from arXiv (issue #13, finding 2)."""
    from django.contrib.auth.models import Permission

    clerk = django_user_model.objects.create_user("clerk", "c@example.org", "pw", is_staff=True)
    api = token_client(clerk)
    refused = api.post("/api/ingest/", {}, format="json")
    assert refused.status_code == 403
    assert "papers.start_ingest" in refused.json()["error"]["message"]
    clerk.user_permissions.add(Permission.objects.get(codename="start_ingest"))
    assert token_client(clerk).post("/api/ingest/", {}, format="json").status_code == 202

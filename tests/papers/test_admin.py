"""Curation in the admin: staff can search, filter, hide, re-embed, refresh, start an ingest."""

import numpy as np
import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.urls import reverse
from django_q.models import OrmQ

from papers.models import IngestRun, Paper, Passage

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:papers_paper_changelist"
START_INGEST = "admin:papers_ingestrun_start"


def _queued() -> list[tuple[str, tuple]]:
    return [(task.func(), tuple(task.task.get("args", ()))) for task in OrmQ.objects.order_by("id")]


def _vector(seed: int) -> np.ndarray:
    return (
        np.random.default_rng(seed).random(django_settings.EMBEDDING_DIMENSIONS).astype(np.float32)
    )


@pytest.fixture
def catalogue(add_paper):
    from datetime import UTC, datetime

    return [
        add_paper(
            "2401.00001",
            title="Diffusion models for images",
            primary_category="cs.CV",
            categories=["cs.CV"],
            published=datetime(2024, 1, 2, tzinfo=UTC),
        ),
        add_paper(
            "hep-th/9901001",
            title="Strings on branes",
            primary_category="hep-th",
            categories=["hep-th"],
            authors=["Edward Witten"],
            published=datetime(1999, 1, 5, tzinfo=UTC),
        ),
    ]


def _action(client, action, papers):
    return client.post(
        reverse(CHANGELIST),
        {"action": action, "_selected_action": [p.pk for p in papers]},
        follow=True,
    )


def test_staff_can_search_and_filter_papers(staff_client, catalogue):
    by_title = staff_client.get(reverse(CHANGELIST), {"q": "branes"})
    assert by_title.status_code == 200
    assert list(by_title.context["cl"].result_list) == [catalogue[1]]
    by_author = staff_client.get(reverse(CHANGELIST), {"q": "witten"})
    assert list(by_author.context["cl"].result_list) == [catalogue[1]]
    by_year = staff_client.get(reverse(CHANGELIST), {"year": "2024"})
    assert list(by_year.context["cl"].result_list) == [catalogue[0]]
    by_category = staff_client.get(reverse(CHANGELIST), {"primary_category": "hep-th"})
    assert list(by_category.context["cl"].result_list) == [catalogue[1]]


def test_embedded_filter_uses_the_active_model(staff_client, catalogue, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    embedded = catalogue[0]
    Passage.objects.create(
        paper=embedded, model="hashing-test", published=embedded.published, embedding=_vector(1)
    )
    # A vector of another model does not count.
    Passage.objects.create(
        paper=catalogue[1],
        model="some-other-model",
        published=catalogue[1].published,
        embedding=_vector(2),
    )
    yes = staff_client.get(reverse(CHANGELIST), {"embedded": "yes"})
    no = staff_client.get(reverse(CHANGELIST), {"embedded": "no"})
    assert list(yes.context["cl"].result_list) == [embedded]
    assert list(no.context["cl"].result_list) == [catalogue[1]]


def test_hide_and_unhide(staff_client, catalogue):
    response = _action(staff_client, "hide", catalogue)
    assert "2 papers hidden." in response.content.decode()
    assert Paper.objects.filter(hidden=True).count() == 2
    _action(staff_client, "unhide", catalogue[:1])
    assert list(Paper.objects.visible()) == catalogue[:1]


def test_reembed_drops_vectors_and_queues_indexing(staff_client, catalogue):
    paper = catalogue[0]
    Passage.objects.create(paper=paper, model="m", published=paper.published, embedding=_vector(3))
    _action(staff_client, "reembed", [paper])
    assert not Passage.objects.exists()
    assert _queued() == [("papers.jobs.index_new_papers_job", ())]


def test_refresh_queues_a_refresh_of_the_selected_ids(staff_client, catalogue):
    response = _action(staff_client, "refresh_from_arxiv", catalogue)
    assert "Refresh of 2 papers from arXiv queued" in response.content.decode()
    [(func, args)] = _queued()
    assert func == "papers.jobs.refresh_papers_job"
    assert sorted(args[0]) == ["2401.00001", "hep-th/9901001"]


def test_editing_a_title_in_the_admin_updates_search(staff_client, catalogue):
    from django.contrib.postgres.search import SearchQuery

    paper = catalogue[0]
    url = reverse("admin:papers_paper_change", args=[paper.pk])
    page = staff_client.get(url)
    assert page.status_code == 200 and "Authorships" in page.content.decode()
    form = page.context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None}
    data.update(
        {
            "title": r"Schr\"odinger bridges",
            "categories": "cs.CV",
            "published_0": "2024-01-02",
            "published_1": "00:00:00",
            "updated_0": "2024-01-03",
            "updated_1": "00:00:00",
            "authorships-TOTAL_FORMS": "2",
            "authorships-INITIAL_FORMS": "2",
        }
    )
    for n, authorship in enumerate(paper.authorships.order_by("position")):
        data.update(
            {
                f"authorships-{n}-id": authorship.pk,
                f"authorships-{n}-paper": paper.pk,
                f"authorships-{n}-author": authorship.author_id,
                f"authorships-{n}-position": authorship.position,
            }
        )
    data["authorships-0-DELETE"] = "on"  # the curator removes the first author
    data.pop("hidden", None)
    data.pop("withdrawn", None)
    response = staff_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    found = Paper.objects.filter(search_vector=SearchQuery("schrodinger", config="english"))
    assert list(found) == [paper]
    assert Paper.objects.get(pk=paper.pk).authors_text == "Alan Turing"
    assert _queued() == [("papers.jobs.index_new_papers_job", ())]


def test_ingest_runs_list_counts_and_escaped_errors(staff_client):
    run = IngestRun.objects.create(
        source="snapshot",
        status="partial",
        new=3,
        skipped=1,
        errors=[{"line": 2, "error": "bad JSON <script>alert(1)</script>"}],
    )
    listing = staff_client.get(reverse("admin:papers_ingestrun_changelist"))
    assert listing.status_code == 200 and "Start ingest now" in listing.content.decode()
    detail = staff_client.get(reverse("admin:papers_ingestrun_change", args=[run.pk]))
    body = detail.content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and "<script>alert(1)" not in body


def test_staff_start_an_ingest_with_the_button(staff_client):
    response = staff_client.post(reverse(START_INGEST), follow=True)
    assert response.redirect_chain[-1][0] == reverse("admin:papers_ingestrun_changelist")
    assert "Ingest queued" in response.content.decode()
    assert _queued() == [("papers.jobs.ingest_recent_job", ())]


def test_the_button_wants_post_and_a_csrf_token(staff, staff_client):
    assert staff_client.get(reverse(START_INGEST)).status_code == 405
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(staff)
    assert strict.post(reverse(START_INGEST)).status_code == 403
    assert _queued() == []


@pytest.mark.parametrize("who", ["stranger_client", "anonymous"])
def test_non_staff_cannot_start_an_ingest_or_curate(request, who, catalogue):
    client = request.getfixturevalue(who)
    response = client.post(reverse(START_INGEST))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    response = client.post(
        reverse(CHANGELIST), {"action": "hide", "_selected_action": [catalogue[0].pk]}
    )
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    assert _queued() == [] and not Paper.objects.filter(hidden=True).exists()


def test_author_admin_search(staff_client, catalogue):
    response = staff_client.get(reverse("admin:papers_author_changelist"), {"q": "witten"})
    assert [a.name for a in response.context["cl"].result_list] == ["Edward Witten"]


@pytest.fixture
def viewer(django_user_model, password, client_factory):
    """Staff who may look at papers and ingest runs, and change nothing (issue #13, finding 2)."""
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user(
        "vera", "vera@example.org", password, is_staff=True
    )
    user.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_paper", "view_ingestrun", "view_author"])
    )
    return client_factory(user)


@pytest.mark.parametrize(
    "action", ["hide", "unhide", "reembed", "refresh_from_arxiv", "read_full_text"]
)
def test_view_only_staff_cannot_run_paper_actions(viewer, catalogue, action):
    Paper.objects.filter(pk=catalogue[0].pk).update(hidden=True)
    page = viewer.get(reverse(CHANGELIST))
    assert page.status_code == 200
    assert f'value="{action}"' not in page.content.decode(), "the action is not even offered"
    before = list(Paper.objects.order_by("pk").values_list("hidden", flat=True))
    response = _action(viewer, action, catalogue)
    assert response.status_code == 200
    assert list(Paper.objects.order_by("pk").values_list("hidden", flat=True)) == before
    assert _queued() == []


def test_view_only_staff_cannot_start_an_ingest(viewer):
    page = viewer.get(reverse("admin:papers_ingestrun_changelist"))
    assert page.status_code == 200
    assert "Start ingest now" not in page.content.decode()
    response = viewer.post(reverse(START_INGEST), follow=True)
    assert "You may not start an ingest" in response.content.decode()
    assert _queued() == []


def test_change_permission_alone_does_not_start_ingests(viewer, django_user_model):
    """Curating papers and fetching from arXiv are different powers: the second is a
    permission of its own, papers.start_ingest."""
    from django.contrib.auth.models import Permission

    vera = django_user_model.objects.get(username="vera")
    vera.user_permissions.add(Permission.objects.get(codename="change_paper"))
    assert viewer.post(reverse(START_INGEST), follow=True).status_code == 200
    assert _queued() == []
    vera.user_permissions.add(Permission.objects.get(codename="start_ingest"))
    page = viewer.get(reverse("admin:papers_ingestrun_changelist"))
    assert "Start ingest now" in page.content.decode()
    viewer.post(reverse(START_INGEST))
    assert _queued() == [("papers.jobs.ingest_recent_job", ())]

"""Frozen read-only links (chat.sharing): the owner makes and revokes them; anyone with the link
reads the thread as it was (later answers, renames and newer paper versions change nothing);
strangers cannot make or revoke links; a revoked or unknown link is the site's 404."""

import re

import pytest

from chat.models import Message, ThreadShare
from papers.models import Paper
from tests.chat.test_export import card, two_answer_thread  # noqa: F401 (the fixture)

pytestmark = pytest.mark.django_db


def make_link(client, thread) -> str:
    page = client.post(f"/chat/{thread.pk}/share/", follow=True).content.decode()
    return re.search(r"http://testserver(/chat/shared/[\w-]+/)", page).group(1)


def test_owner_shares_and_anonymous_reads_the_frozen_thread(owner_client, anonymous,
                                                            two_answer_thread):  # noqa: F811
    link = make_link(owner_client, two_answer_thread)
    share = ThreadShare.objects.get()
    assert len(share.token) >= 32
    # Afterwards the thread moves on: renamed, a third answer, a newer version of a paper.
    two_answer_thread.title = "Renamed later"
    two_answer_thread.save()
    Message.objects.create(thread=two_answer_thread, role="assistant", status="complete",
                           content="A later answer [1].", sources=[card(1, "2402.00002")])
    Paper.objects.filter(arxiv_id="2401.00001").update(version=5)

    response = anonymous.get(link)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Policy optimisation" in html and "Renamed later" not in html
    assert "A later answer" not in html
    assert r"$\Psi$PO optimises $\sim$12,000 policies" in html  # TeX kept for tex.js
    assert "arXiv:2401.00001v2" in html  # the version read then, not v5
    # The thread's one reference list: the second answer's own [1] reads [3].
    assert re.search(r'data-source="1"[^>]*>\[3\]</a>', html)
    assert "Rename or delete" not in html and 'id="composer"' not in html  # read-only


def test_revoked_link_is_the_sites_404(owner_client, anonymous, two_answer_thread):  # noqa: F811
    link = make_link(owner_client, two_answer_thread)
    share = ThreadShare.objects.get()
    page = owner_client.get(f"/chat/{two_answer_thread.pk}/").content.decode()
    assert link in page  # listed for its owner, with a revoke button
    owner_client.post(f"/chat/{two_answer_thread.pk}/share/{share.pk}/revoke/")
    response = anonymous.get(link)
    assert response.status_code == 404
    assert response.templates[0].name == "404.html"
    assert link not in owner_client.get(f"/chat/{two_answer_thread.pk}/").content.decode()
    assert anonymous.get("/chat/shared/not-a-real-token/").status_code == 404


def test_stranger_cannot_share_or_revoke(owner_client, stranger_client, anonymous,
                                         two_answer_thread):  # noqa: F811
    pk = two_answer_thread.pk
    assert stranger_client.post(f"/chat/{pk}/share/").status_code == 404
    assert anonymous.post(f"/chat/{pk}/share/").status_code == 302  # to log in
    assert not ThreadShare.objects.exists()
    link = make_link(owner_client, two_answer_thread)
    share = ThreadShare.objects.get()
    assert stranger_client.post(f"/chat/{pk}/share/{share.pk}/revoke/").status_code == 404
    share.refresh_from_db()
    assert share.revoked_at is None
    assert stranger_client.get(link).status_code == 200  # reading is what a link is for
    assert owner_client.get(f"/chat/{pk}/share/").status_code == 405  # only POST makes one


def test_deleting_the_thread_ends_its_links(owner_client, anonymous, two_answer_thread):  # noqa: F811
    link = make_link(owner_client, two_answer_thread)
    owner_client.post(f"/chat/{two_answer_thread.pk}/delete/")
    assert anonymous.get(link).status_code == 404

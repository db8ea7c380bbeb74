"""Questions that watch arXiv: a followed thread after a real (replayed) nightly ingest.

The arXiv API is replayed from the recorded responses (../shared/data/arxiv-api: 60 papers on
"testing"); the ingest, the indexing job, the signal, the search and the relevance gate are the
real ones; e-mail goes to Django's outbox."""

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone
from django_q.models import OrmQ

from accounts.models import Preferences
from chat import jobs, watch
from chat.models import Follow, Message, Thread
from papers.jobs import index_new_papers_job, ingest_recent_job
from papers.models import Paper
from tests.papers.conftest import add_paper, arxiv_api  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)  # searches run on threads of their own


def asked(owner, question: str, topic: str, answered_at=None) -> Thread:
    """A thread whose question was answered (before the ingest)."""
    thread = Thread.objects.create(owner=owner, title=question)
    Message.objects.create(thread=thread, role="user", content=question)
    answer = Message.objects.create(
        thread=thread, role="assistant", status="complete", query=question,
        content="Earlier answer [1].", analysis={"query": topic}, sources=[], citations=[],
    )
    if answered_at:
        Message.objects.filter(pk=answer.pk).update(created_at=answered_at)
    return thread


@pytest.fixture
def followed(owner, settings, add_paper):  # noqa: F811
    settings.EMBEDDING_BACKEND = "hashing"
    add_paper("1901.00001", title="Metamorphic testing of compilers, an old paper",
              abstract="Metamorphic testing finds compiler bugs.")
    Paper.objects.filter(arxiv_id="1901.00001").update(created_at=timezone.now() - timedelta(days=1))
    thread = asked(owner, "What is new in metamorphic testing?", "metamorphic testing",
                   answered_at=timezone.now() - timedelta(hours=1))
    watch.follow(thread)
    return thread


def nightly(arxiv_api):  # noqa: F811
    """The nightly job chain: ingest, then the indexing job it queues (run here)."""
    result = ingest_recent_job(categories=["cs.AI"])
    assert result["status"] == "succeeded" and result["new"] == 60
    index_new_papers_job()


def test_followed_thread_gets_new_relevant_papers_once(owner, followed, arxiv_api):  # noqa: F811
    nightly(arxiv_api)
    # The indexing job's signal queued the watch job for the cluster.
    assert [t for t in OrmQ.objects.all() if t.func() == jobs.WATCH_JOB]

    result = jobs.watch_followed_threads_job()
    assert result["threads"] == 1 and result["updates"] == 1

    update = followed.messages.order_by("-created_at").first()
    assert watch.is_update(update)
    assert update.content.startswith("**New since you asked**")
    cited = Paper.objects.filter(pk__in=[s["paper_id"] for s in update.sources])
    assert 1 <= cited.count() <= 5
    for paper in cited:
        assert paper.arxiv_id != "1901.00001"  # arrived before the answer: not new
    # Best match first: the metamorphic testing papers of the night lead the list.
    assert "metamorphic" in update.sources[0]["title"].lower()
    for source in update.sources:  # cited [n] in the list form, one line each
        assert f"[{source['number']}]" in update.content
        assert source["title"][:30] in update.content
    follow = Follow.objects.get(thread=followed)
    assert sorted(follow.notified) == sorted(cited.values_list("pk", flat=True))
    assert follow.unseen == 1

    # The next night brings nothing new: no second message about the same papers.
    again = jobs.watch_followed_threads_job()
    assert again["updates"] == 0
    assert followed.messages.filter(role="assistant").count() == 2


def test_unrelated_question_gets_no_update(owner, settings, arxiv_api):  # noqa: F811
    settings.EMBEDDING_BACKEND = "hashing"
    thread = asked(owner, "What is new in lattice quantum chromodynamics?",
                   "lattice quantum chromodynamics",
                   answered_at=timezone.now() - timedelta(hours=1))
    watch.follow(thread)
    nightly(arxiv_api)
    assert jobs.watch_followed_threads_job()["updates"] == 0
    assert thread.messages.count() == 2


def test_badge_shows_until_the_thread_is_opened(owner, owner_client, followed, arxiv_api):  # noqa: F811
    nightly(arxiv_api)
    jobs.watch_followed_threads_job()
    listing = owner_client.get("/chat/").content.decode()
    assert 'data-role="watch-badge"' in listing and "1 new" in listing
    page = owner_client.get(f"/chat/{followed.pk}/").content.decode()
    assert "New since you asked" in page and 'data-role="watch-update"' in page
    assert Follow.objects.get(thread=followed).unseen == 0
    assert 'data-role="watch-badge"' not in owner_client.get("/chat/").content.decode()


def test_digest_once_a_day_when_opted_in(owner, followed, arxiv_api, add_paper):  # noqa: F811
    Preferences.objects.create(user=owner, watch_digest=True)
    nightly(arxiv_api)
    assert jobs.watch_followed_threads_job()["digests"] == 1
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["olivia@example.org"]
    assert "New since you asked" in message.subject
    assert "What is new in metamorphic testing?" in message.body
    assert "/accounts/preferences/" in message.body

    # Another update the same day: shown in the thread, but no second e-mail today.
    add_paper("2611.00009", title="Metamorphic testing for autonomous driving",
              abstract="Metamorphic testing of perception in autonomous driving.")
    Paper.objects.filter(arxiv_id="2611.00009").update(arrived_via="")
    index_new_papers_job()
    result = jobs.watch_followed_threads_job()
    assert result["updates"] == 1 and result["digests"] == 0
    assert len(mail.outbox) == 1


def test_no_digest_without_opt_in_or_email(owner, followed, arxiv_api, settings):  # noqa: F811
    nightly(arxiv_api)
    jobs.watch_followed_threads_job()
    assert mail.outbox == []  # not opted in


def test_no_digest_when_email_is_not_configured(owner, followed, arxiv_api, settings):  # noqa: F811
    settings.EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
    Preferences.objects.create(user=owner, watch_digest=True)
    nightly(arxiv_api)
    assert jobs.watch_followed_threads_job()["digests"] == 0


def test_follow_is_bounded_per_user(owner, settings):
    settings.WATCH_MAX_FOLLOWED_PER_USER = 1
    first = asked(owner, "What about fuzzing?", "fuzzing")
    second = asked(owner, "What about mutation testing?", "mutation testing")
    watch.follow(first)
    with pytest.raises(watch.CannotFollow, match="most allowed"):
        watch.follow(second)


def test_follow_and_unfollow_pages(owner_client, stranger_client, owner):
    thread = asked(owner, "What about fuzzing?", "fuzzing")
    assert stranger_client.post(f"/chat/{thread.pk}/follow/").status_code == 404
    assert not Follow.objects.exists()
    owner_client.post(f"/chat/{thread.pk}/follow/", {"action": "follow"})
    assert Follow.objects.filter(thread=thread).exists()
    assert b"Following" in owner_client.get(f"/chat/{thread.pk}/").content
    owner_client.post(f"/chat/{thread.pk}/follow/", {"action": "unfollow"})
    assert not Follow.objects.exists()


def test_an_unanswered_thread_cannot_be_followed(owner_client, owner):
    thread = Thread.objects.create(owner=owner, title="empty")
    response = owner_client.post(f"/chat/{thread.pk}/follow/", {"action": "follow"}, follow=True)
    assert b"Ask a question first" in response.content
    assert not Follow.objects.exists()


def test_preferences_page(owner_client, owner, stranger):
    page = owner_client.get("/accounts/preferences/")
    assert page.status_code == 200 and b"watch_digest" in page.content
    owner_client.post("/accounts/preferences/", {"watch_digest": "on"})
    assert Preferences.of(owner).watch_digest
    assert not Preferences.of(stranger).watch_digest
    owner_client.post("/accounts/preferences/", {})
    assert not Preferences.of(owner).watch_digest


def test_follow_over_the_api(owner, stranger):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    def client_of(user):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
        return client

    owner_api, stranger_api = client_of(owner), client_of(stranger)
    thread = asked(owner, "What about fuzzing?", "fuzzing")
    url = f"/api/threads/{thread.pk}/follow/"
    assert owner_api.get(url).json()["followed"] is False
    assert stranger_api.post(url).status_code == 404
    assert not Follow.objects.exists()
    followed = owner_api.post(url)
    assert followed.status_code == 200 and followed.json()["followed"] is True
    assert owner_api.post(url).status_code == 200  # idempotent
    empty = Thread.objects.create(owner=owner, title="empty")
    refused = owner_api.post(f"/api/threads/{empty.pk}/follow/")
    assert refused.status_code == 400 and "Ask a question first" in str(refused.json())
    assert stranger_api.delete(url).status_code == 404
    assert owner_api.delete(url).status_code == 204
    assert not Follow.objects.exists()

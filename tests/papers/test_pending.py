"""'Some papers have no vectors yet', asked by every search: cached, and forgotten by the writes
that change it (new papers, vectors written, papers hidden or shown in the admin)."""

import pytest
from django.urls import reverse

from papers.indexing.vectors import embed_missing
from papers.models import Paper, Passage
from papers.pending import forget_vectors_pending, vectors_pending

pytestmark = pytest.mark.django_db

MODEL = "hashing-test"


@pytest.fixture(autouse=True)
def fresh(settings):
    settings.EMBEDDING_BACKEND = "hashing"
    forget_vectors_pending()
    yield
    forget_vectors_pending()


def test_new_papers_are_pending_until_their_vectors_are_written(add_paper):
    add_paper("2401.00001")
    assert vectors_pending(MODEL) is True

    embed_missing()
    assert vectors_pending(MODEL) is False

    add_paper("2401.00002")  # ingested after the last answer was cached
    assert vectors_pending(MODEL) is True


def test_the_answer_is_kept_between_searches(add_paper, django_assert_max_num_queries):
    add_paper("2401.00001")
    embed_missing()
    assert vectors_pending(MODEL) is False

    with django_assert_max_num_queries(1):  # the cache read, not the anti-join
        assert vectors_pending(MODEL) is False
    # A change behind the application's back shows once the answer is forgotten (or expires).
    Passage.objects.all()._raw_delete(Passage.objects.db)
    assert vectors_pending(MODEL) is False
    forget_vectors_pending()
    assert vectors_pending(MODEL) is True


def test_models_are_answered_separately(add_paper):
    add_paper("2401.00001")
    embed_missing()

    assert vectors_pending(MODEL) is False
    assert vectors_pending("another-model") is True
    assert vectors_pending(MODEL) is False


def test_hiding_the_only_unembedded_paper_in_the_admin(
    add_paper, staff_client, django_capture_on_commit_callbacks
):
    add_paper("2401.00001")
    embed_missing()
    late = add_paper("2401.00002")
    assert vectors_pending(MODEL) is True

    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(
            reverse("admin:papers_paper_changelist"),
            {"action": "hide", "_selected_action": [late.pk]},
        )

    assert Paper.objects.get(pk=late.pk).hidden
    assert vectors_pending(MODEL) is False

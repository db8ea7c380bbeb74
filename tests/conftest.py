"""Fixtures every test can use: the people in a test, and the shared real data.

People: `owner` (has the threads), `stranger` (another signed-up user), `anonymous` (a browser
with no session), and `staff`. Clients are Django test clients already logged in as them.
"""

from pathlib import Path

import pytest

from tests.fakes import SHARED_DATA


@pytest.fixture
def shared_data() -> Path:
    """../shared/data, or skip with the reason when this checkout has no ../shared beside it."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"needs the shared data folder at {SHARED_DATA} (absent in this checkout)")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def fresh_catalogue_count():
    """The chat's "Searching N papers…" count is cached for a minute per process: each test
    builds its own catalogue."""
    from chat.pipeline import progress

    progress.forget_catalogue_size()


@pytest.fixture(autouse=True)
def fresh_query_vectors():
    """Query vectors are cached per process (papers/embeddings/query_cache.py): a test's fake
    model, or its failure, must be what its searches meet."""
    from papers.embeddings import query_cache

    query_cache.clear()


@pytest.fixture(scope="module")
def tidy_passage_statistics(django_db_setup, django_db_blocker):
    """For a module whose tests ANALYZE or delete passages: after its last test, VACUUM ANALYZE
    the passages table. ANALYZE's counts outlive a rolled-back test, and rows deleted or rolled
    back stay in the HNSW graph until a vacuum: either way a later module on the same process
    would meet plans chosen for another table, or an index walk spent on dead rows."""
    from django.db import connection

    yield
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE papers_passage")


@pytest.fixture
def password() -> str:
    return "correct horse battery staple"


@pytest.fixture
def owner(django_user_model, password):
    return django_user_model.objects.create_user("olivia", "olivia@example.org", password)


@pytest.fixture
def stranger(django_user_model, password):
    return django_user_model.objects.create_user("sam", "sam@example.org", password)


@pytest.fixture
def staff(django_user_model, password):
    return django_user_model.objects.create_user(
        "stella", "stella@example.org", password, is_staff=True, is_superuser=True
    )


@pytest.fixture
def anonymous(client):
    """A browser with no session."""
    return client


@pytest.fixture
def owner_client(client_factory, owner):
    return client_factory(owner)


@pytest.fixture
def stranger_client(client_factory, stranger):
    return client_factory(stranger)


@pytest.fixture
def staff_client(client_factory, staff):
    return client_factory(staff)


@pytest.fixture
def client_factory(db):
    from django.test import Client

    def make(user):
        c = Client()
        c.force_login(user)
        return c

    return make


@pytest.fixture
def live_arxiv_replay(shared_data, settings):
    """The arXiv API replayed over HTTP for live searches: a query on "testing" answers with the
    recorded feed `q_testing` (10 papers); two live searches an hour; the hashing embedder."""
    from tests.fakes.arxiv_replay import ReplayArxiv

    replay = ReplayArxiv(data_dir=shared_data / "arxiv-api", queries={r"abs:testing": "q_testing"})
    replay.start()
    settings.ARXIV_API_URL = replay.url
    settings.ARXIV_DELAY_SECONDS = 0
    settings.ARXIV_MAX_RETRIES = 1
    settings.ARXIV_LIVE_RESULTS = 10
    settings.ARXIV_LIVE_SEARCHES_PER_HOUR = 2
    settings.EMBEDDING_BACKEND = "hashing"
    yield replay
    replay.stop()

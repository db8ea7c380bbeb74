"""API test people and data: token-authenticated clients and a few real papers.

Clients are DRF's APIClient sending `Authorization: Token ...` (what programs do), so every test
goes through the real token authentication, not a forced login.
"""

import datetime as dt

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from papers.ingest.upsert import PaperRecord, upsert_papers


@pytest.fixture(autouse=True)
def close_background_connections():
    """Answers and searches query the database on threads of their own (chat.lanes), whose
    connections outlive a test and would keep the test database from being dropped: close them
    after each test."""
    yield
    from chat import lanes

    lanes.close_connections()


@pytest.fixture
def token_client(db):
    def make(user) -> APIClient:
        token, _ = Token.objects.get_or_create(user=user)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    return make


@pytest.fixture
def owner_api(token_client, owner):
    return token_client(owner)


@pytest.fixture
def stranger_api(token_client, stranger):
    return token_client(stranger)


@pytest.fixture
def staff_api(token_client, staff):
    return token_client(staff)


@pytest.fixture
def anonymous_api(db):
    return APIClient()


def record(arxiv_id, title, *, published, authors=(), categories=("cs.CL",), abstract="",
           version=1) -> PaperRecord:
    when = dt.datetime.fromisoformat(published).replace(tzinfo=dt.UTC)
    return PaperRecord(
        arxiv_id=arxiv_id, version=version, title=title, abstract=abstract or f"About {title}.",
        authors=list(authors), primary_category=categories[0], categories=list(categories),
        published=when, updated=when,
    )


CATALOGUE = [
    record("2401.00001", "Diffusion models for text generation", published="2024-01-03",
           authors=["Ada Lovelace", "Alan Turing"], categories=("cs.CL", "cs.LG"),
           abstract="We study denoising diffusion for language."),
    record("2402.00002", "Retrieval augmented generation at scale", published="2024-02-10",
           authors=["Grace Hopper"], categories=("cs.IR",),
           abstract="Dense retrieval feeds a generator."),
    record("2305.00003", "Schr\\\"odinger bridges and diffusion", published="2023-05-20",
           authors=["Erwin Schr\\\"odinger"], categories=("cs.LG", "stat.ML"),
           abstract="Optimal transport meets diffusion models."),
    record("hep-th/9901001", "Strings on a flat universe", published="1999-01-04",
           authors=["Edward Witten"], categories=("hep-th",),
           abstract="A classic old-style identifier."),
    record("math/0309136", "Knots and three-manifolds", published="2003-09-09",
           authors=["Grigori Perelman"], categories=("math.GT",),
           abstract="Another old-style identifier, with a subject class."),
]


@pytest.fixture
def papers(db):
    """Five real catalogue rows written by the ingest's own upsert (search vectors included)."""
    from papers.models import Paper

    upsert_papers(CATALOGUE)
    return {p.arxiv_id: p for p in Paper.objects.all()}


@pytest.fixture
def indexed_papers(papers, settings):
    """The papers embedded too (the fast deterministic hashing embedder), so searches, similar
    papers and answers have vectors to work with."""
    from papers.indexing.vectors import embed_missing

    settings.EMBEDDING_BACKEND = "hashing"
    embed_missing()
    return papers


@pytest.fixture
def hidden_paper(papers):
    paper = papers["2402.00002"]
    paper.hidden = True
    paper.save(update_fields=["hidden"])
    return paper

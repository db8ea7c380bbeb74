"""/papers/ (browser) and /papers/<arxiv id>/ (a paper's page)."""

from datetime import UTC, datetime

import numpy as np
import pytest
from django.conf import settings as django_settings
from django.db import connection

from papers.models import Paper, Passage

pytestmark = pytest.mark.django_db


def _day(year, month=1, day=1):
    return datetime(year, month, day, tzinfo=UTC)


def _ids(response) -> list[str]:
    return [p.arxiv_id for p in response.context["page"].object_list]


@pytest.fixture
def catalogue(add_paper):
    add_paper(
        "2401.00001",
        title=r"Schr\"odinger bridges for diffusion",
        published=_day(2024, 3),
        categories=["cs.LG", "stat.ML"],
        authors=["Ada Lovelace"],
    )
    add_paper(
        "2301.00002",
        title="Transformers for translation",
        published=_day(2023, 5),
        categories=["cs.CL"],
        authors=["Alan Turing"],
    )
    add_paper(
        "hep-th/9901001",
        title="Strings and diffusion on branes",
        published=_day(1999),
        categories=["hep-th"],
        authors=["Edward Witten", "Ada Lovelace"],
    )
    add_paper("2402.00009", title="A hidden diffusion paper", published=_day(2024, 4))
    Paper.objects.filter(arxiv_id="2402.00009").update(hidden=True)


def test_browser_lists_visible_papers_newest_first(client, catalogue):
    response = client.get("/papers/")
    assert response.status_code == 200
    assert _ids(response) == ["2401.00001", "2301.00002", "hep-th/9901001"]


def test_search_uses_full_text_with_tex_folded(client, catalogue):
    assert _ids(client.get("/papers/", {"q": "schrödinger"})) == ["2401.00001"]
    assert _ids(client.get("/papers/", {"q": "diffusion -strings"})) == ["2401.00001"]
    assert _ids(client.get("/papers/", {"q": '"diffusion on branes"'})) == ["hep-th/9901001"]
    assert "2402.00009" not in _ids(client.get("/papers/", {"q": "hidden diffusion"}))


def test_filters_by_dates_category_and_author(client, catalogue):
    assert _ids(client.get("/papers/", {"from": "2023", "to": "2023-12"})) == ["2301.00002"]
    assert _ids(client.get("/papers/", {"to": "2000-01-01"})) == ["hep-th/9901001"]
    assert _ids(client.get("/papers/", {"category": "stat.ML"})) == ["2401.00001"]
    assert _ids(client.get("/papers/", {"author": "ada  LOVELACE"})) == [
        "2401.00001",
        "hep-th/9901001",
    ]
    assert _ids(client.get("/papers/", {"q": "diffusion", "from": "2020-01-01"})) == ["2401.00001"]


def test_bad_filters_say_why(client, catalogue):
    body = client.get("/papers/", {"from": "last week", "category": "<b>"}).content.decode()
    assert "is not a date" in body and "is not an arXiv category" in body
    assert "&lt;b&gt;" in body and "<b>" not in body
    reversed_window = client.get("/papers/", {"from": "2024", "to": "2020"})
    assert "after the “to” date" in reversed_window.content.decode()


def test_pagination_keeps_the_filters(client, add_paper):
    for n in range(25):
        add_paper(f"2401.{n:05d}", categories=["cs.AI"], published=_day(2024, 1, 1 + n))
    first = client.get("/papers/", {"category": "cs.AI"})
    assert len(_ids(first)) == 20 and first.context["page"].paginator.num_pages == 2
    assert "?category=cs.AI&amp;page=2" in first.content.decode()
    second = client.get("/papers/", {"category": "cs.AI", "page": 2})
    assert _ids(second) == [f"2401.{n:05d}" for n in range(4, -1, -1)]
    assert client.get("/papers/", {"page": "999"}).status_code == 200


def test_a_pasted_id_or_link_opens_the_paper(client, catalogue):
    response = client.get("/papers/", {"q": "https://arxiv.org/abs/hep-th/9901001v2"})
    assert response.status_code == 302 and response["Location"] == "/papers/hep-th/9901001/"


def test_paper_page_shows_metadata_authors_and_links(client, catalogue):
    response = client.get("/papers/hep-th/9901001/")
    body = response.content.decode()
    assert response.status_code == 200
    assert "Strings and diffusion on branes" in body
    assert 'href="/papers/authors/edward%20witten/"' in body
    assert 'href="https://arxiv.org/abs/hep-th/9901001"' in body
    assert 'href="https://arxiv.org/pdf/hep-th/9901001"' in body
    assert "?category=hep-th" in body


def test_a_versioned_link_redirects_to_the_paper(client, catalogue):
    response = client.get("/papers/2401.00001v3/")
    assert response.status_code == 301 and response["Location"] == "/papers/2401.00001/?version=3"
    bare = client.get("/papers/hep-th/9901001/")  # a link without a version stays bare
    assert bare.status_code == 200


def test_hidden_and_unknown_papers_are_not_found(client, catalogue):
    assert client.get("/papers/2402.00009/").status_code == 404
    assert client.get("/papers/2402.99999/").status_code == 404
    assert client.get("/papers/not-an-id/").status_code == 404


def test_abstracts_are_escaped(client, add_paper):
    add_paper(
        "2401.00001",
        abstract='<script>alert("x")</script> & <b>bold</b>',
        title="<img src=x onerror=alert(1)>",
    )
    body = client.get("/papers/2401.00001/").content.decode()
    assert "<script>alert" not in body and "<img src=x" not in body
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in body
    assert "<img src=x" not in client.get("/papers/").content.decode()


def _embed(paper, vector, model="hashing-test"):
    Passage.objects.create(
        paper=paper,
        model=model,
        published=paper.published,
        embedding=np.asarray(vector, dtype=np.float32),
    )


def test_similar_papers_come_from_the_active_models_vectors(client, catalogue, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    dims = django_settings.EMBEDDING_DIMENSIONS
    base = np.zeros(dims)
    base[0] = 1
    near, far, hidden = base.copy(), base.copy(), base.copy()
    near[1], far[2], hidden[1] = 0.2, 3.0, 0.1
    papers = {p.arxiv_id: p for p in Paper.objects.all()}
    _embed(papers["2401.00001"], base)
    _embed(papers["2301.00002"], near)
    _embed(papers["hep-th/9901001"], far)
    _embed(papers["2402.00009"], hidden)  # hidden papers are never suggested
    other_model = base.copy()
    other_model[3] = 0.01
    extra = Paper.objects.create(
        arxiv_id="2405.00001", title="Other model only", published=_day(2024), updated=_day(2024)
    )
    _embed(extra, other_model, model="another-model")  # vectors of models never mix

    response = client.get("/papers/2401.00001/")
    assert [p.arxiv_id for p in response.context["similar"]] == ["2301.00002", "hep-th/9901001"]


def test_no_vector_yet_shows_a_note_instead_of_similar_papers(client, catalogue, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    response = client.get("/papers/2401.00001/")
    assert response.context["similar"] == []
    assert "Not embedded yet" in response.content.decode()


def test_similar_papers_survive_an_index_scan_that_gives_up(client, catalogue, settings):
    # Another model's vectors nearer than every candidate, and an HNSW scan allowed to read
    # one tuple: the index walk finds nothing of the active model, as when re-embedding or a
    # second model crowds the graph; the page must still list the nearest papers.
    settings.EMBEDDING_BACKEND = "hashing"
    dims = django_settings.EMBEDDING_DIMENSIONS
    base = np.zeros(dims)
    base[0] = 1
    near, far = base.copy(), base.copy()
    near[1], far[2] = 0.2, 3.0
    papers = {p.arxiv_id: p for p in Paper.objects.all()}
    _embed(papers["2401.00001"], base)
    _embed(papers["2301.00002"], near)
    _embed(papers["hep-th/9901001"], far)
    crowd = papers["2402.00009"]
    noise = np.random.default_rng(0).standard_normal((2000, dims)) * 0.01
    Passage.objects.bulk_create(
        Passage(
            paper=crowd,
            model="another-model",
            position=i,
            published=crowd.published,
            embedding=(base + noise[i]).astype(np.float32),
        )
        for i in range(len(noise))
    )
    with connection.cursor() as cursor:  # the index plan, one small batch, at most 1 tuple
        cursor.execute(
            "SELECT set_config('enable_seqscan', 'off', false),"
            " set_config('enable_bitmapscan', 'off', false),"
            " set_config('hnsw.ef_search', '1', false),"
            " set_config('hnsw.max_scan_tuples', '1', false)"
        )
    try:
        response = client.get("/papers/2401.00001/")
    finally:
        with connection.cursor() as cursor:
            cursor.execute(
                "RESET enable_seqscan; RESET enable_bitmapscan; RESET hnsw.ef_search;"
                " RESET hnsw.max_scan_tuples"
            )
    assert [p.arxiv_id for p in response.context["similar"]] == ["2301.00002", "hep-th/9901001"]

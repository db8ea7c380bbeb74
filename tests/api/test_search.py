"""GET /api/search/ (the retrieval engine's search) and GET /api/papers/<id>/similar/."""

import pytest


def arxiv_ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [hit["arxiv_id"] for hit in response.json()["results"]]


@pytest.mark.django_db
def test_search_returns_analysis_and_ranked_papers(owner_api, indexed_papers):
    response = owner_api.get("/api/search/", {"q": "diffusion models", "k": 3})
    body = response.json()
    assert body["analysis"]["query"] == "diffusion models"
    found = arxiv_ids(response)
    assert len(found) <= 3
    assert {"2401.00001", "2305.00003"} <= set(found)
    hit = body["results"][0]
    assert hit["url"] == f"https://arxiv.org/abs/{hit['arxiv_id']}"
    assert "total" in body["timings"]


@pytest.mark.django_db
def test_search_reads_the_date_window(owner_api, indexed_papers):
    response = owner_api.get("/api/search/", {"q": "diffusion since 2024"})
    assert response.json()["analysis"]["start"].startswith("2024-01-01")
    assert arxiv_ids(response)[0] == "2401.00001"
    assert all(hit["published"] >= "2024-01-01" for hit in response.json()["results"])


@pytest.mark.django_db
def test_search_window_can_be_overridden(owner_api, indexed_papers):
    response = owner_api.get(
        "/api/search/", {"q": "diffusion", "from": "2023-01-01", "to": "2023-12-31"}
    )
    assert arxiv_ids(response) == ["2305.00003"]  # the only paper of 2023


@pytest.mark.django_db
def test_hidden_papers_are_never_found(owner_api, indexed_papers, hidden_paper):
    assert hidden_paper.arxiv_id not in arxiv_ids(
        owner_api.get("/api/search/", {"q": "retrieval augmented generation"})
    )


@pytest.mark.django_db
@pytest.mark.parametrize("params, field", [
    ({}, "q"), ({"q": ""}, "q"), ({"q": "x", "k": 0}, "k"), ({"q": "x", "k": 101}, "k"),
    ({"q": "x", "k": "many"}, "k"), ({"q": "x" * 2001}, "q"),
    ({"q": "x", "recency": 2}, "recency"), ({"q": "x", "from": "soon"}, "from"),
])
def test_bad_search_parameters_get_400(owner_api, indexed_papers, params, field):
    response = owner_api.get("/api/search/", params)
    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]


@pytest.mark.django_db
def test_window_that_ends_before_it_starts_gets_400(owner_api, indexed_papers):
    response = owner_api.get("/api/search/", {"q": "x", "from": "2024-01-01", "to": "2023-01-01"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"


@pytest.mark.django_db
def test_search_is_limited_per_user_with_retry_after(owner_api, stranger_api, indexed_papers,
                                                      settings):
    settings.SEARCH_RATE_LIMIT_PER_MINUTE = 2
    for _ in range(2):
        assert owner_api.get("/api/search/", {"q": "diffusion"}).status_code == 200
    refused = owner_api.get("/api/search/", {"q": "diffusion"})
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "throttled"
    assert 1 <= int(refused["Retry-After"]) <= 60
    # Another user has a budget of their own.
    assert stranger_api.get("/api/search/", {"q": "diffusion"}).status_code == 200


@pytest.mark.django_db
def test_search_needs_a_user(anonymous_api):
    assert anonymous_api.get("/api/search/", {"q": "diffusion"}).status_code == 401


def similar_ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [paper["arxiv_id"] for paper in response.json()["results"]]


@pytest.mark.django_db
def test_similar_papers_are_vector_neighbours_without_the_paper(owner_api, indexed_papers):
    response = owner_api.get("/api/papers/2401.00001/similar/", {"k": 3})
    body = response.json()
    assert body["arxiv_id"] == "2401.00001"
    assert body["embedded"] is True and body["model"] == "hashing-test"
    found = similar_ids(response)
    assert len(found) == 3 and "2401.00001" not in found
    assert found[0] == "2305.00003"  # the other diffusion paper
    neighbour = indexed_papers["2305.00003"]
    assert body["results"][0]["authors"] == [a.name for a in neighbour.authors.all()] != []


@pytest.mark.django_db
def test_similar_papers_of_an_old_style_id(owner_api, indexed_papers):
    found = similar_ids(owner_api.get("/api/papers/hep-th/9901001/similar/"))
    assert found and "hep-th/9901001" not in found


@pytest.mark.django_db
def test_paper_without_a_vector_says_so(owner_api, papers, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    body = owner_api.get("/api/papers/2401.00001/similar/").json()
    assert body["embedded"] is False and body["results"] == []


@pytest.mark.django_db
def test_similar_of_a_hidden_paper_is_404_for_users(owner_api, indexed_papers, hidden_paper):
    response = owner_api.get(f"/api/papers/{hidden_paper.arxiv_id}/similar/")
    assert response.status_code == 404


@pytest.mark.django_db
def test_similar_never_returns_hidden_papers(owner_api, staff_api, indexed_papers, hidden_paper):
    assert hidden_paper.arxiv_id not in similar_ids(
        owner_api.get("/api/papers/2401.00001/similar/", {"k": 50})
    )
    # Staff may look at a hidden paper's neighbours; they are visible papers only.
    found = similar_ids(staff_api.get(f"/api/papers/{hidden_paper.arxiv_id}/similar/"))
    assert found and hidden_paper.arxiv_id not in found


@pytest.mark.django_db
def test_similar_k_is_bounded(owner_api, indexed_papers):
    assert owner_api.get("/api/papers/2401.00001/similar/", {"k": 51}).status_code == 400

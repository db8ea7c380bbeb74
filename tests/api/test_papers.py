"""GET /api/papers/ filters and pagination, GET /api/papers/<arxiv id>/ (both id styles)."""

import pytest


def ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [p["arxiv_id"] for p in response.json()["results"]]


@pytest.mark.django_db
def test_papers_are_listed_newest_first_with_authors_in_order(owner_api, papers):
    response = owner_api.get("/api/papers/")
    assert ids(response) == [
        "2402.00002", "2401.00001", "2305.00003", "math/0309136", "hep-th/9901001",
    ]
    first_jan = response.json()["results"][1]
    assert first_jan["authors"] == ["Ada Lovelace", "Alan Turing"]
    assert first_jan["categories"] == ["cs.CL", "cs.LG"]


@pytest.mark.django_db
def test_full_text_query_uses_web_search_syntax(owner_api, papers):
    assert set(ids(owner_api.get("/api/papers/", {"q": "diffusion"}))) == {
        "2401.00001", "2305.00003",
    }
    assert ids(owner_api.get("/api/papers/", {"q": "diffusion -language"})) == ["2305.00003"]
    assert ids(owner_api.get("/api/papers/", {"q": '"dense retrieval"'})) == ["2402.00002"]
    # TeX in the query meets TeX in the title: Schr\"odinger == Schrodinger.
    assert ids(owner_api.get("/api/papers/", {"q": "Schrödinger"})) == ["2305.00003"]


@pytest.mark.django_db
def test_category_author_and_date_filters_combine(owner_api, papers):
    assert ids(owner_api.get("/api/papers/", {"category": "cs.LG"})) == [
        "2401.00001", "2305.00003",
    ]
    assert ids(owner_api.get("/api/papers/", {"author": "turing"})) == ["2401.00001"]
    assert ids(owner_api.get("/api/papers/", {"author": "SCHRODINGER"})) == ["2305.00003"]
    assert ids(owner_api.get("/api/papers/", {"from": "2024-01-03", "to": "2024-01-03"})) == [
        "2401.00001"
    ]
    assert ids(
        owner_api.get("/api/papers/", {"from": "2023-01-01", "category": "cs.LG", "q": "text"})
    ) == ["2401.00001"]
    assert ids(owner_api.get("/api/papers/", {"to": "2000-12-31"})) == ["hep-th/9901001"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "params, field",
    [
        ({"from": "2024-02-01", "to": "2024-01-01"}, "to"),
        ({"category": "cs CL; drop"}, "category"),
        ({"q": "x" * 501}, "q"),
        ({"q": "nul\x00byte"}, "q"),
        ({"hidden": "maybe"}, "hidden"),
        ({"author": "a"}, "author"),
    ],
)
def test_bad_filters_get_400_naming_the_parameter(owner_api, papers, params, field):
    response = owner_api.get("/api/papers/", params)
    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]


@pytest.mark.django_db
def test_extreme_dates_are_not_a_server_error(owner_api, papers):
    assert ids(owner_api.get("/api/papers/", {"from": "0001-01-01", "to": "9999-12-31"}))


@pytest.mark.django_db
def test_cursor_pagination_walks_every_paper_once(owner_api, papers):
    seen, url, params = [], "/api/papers/", {"page_size": 2}
    while url:
        response = owner_api.get(url, params)
        page = response.json()
        assert len(page["results"]) <= 2
        seen += [p["arxiv_id"] for p in page["results"]]
        url, params = page["next"], None
    assert len(seen) == 5 == len(set(seen))
    assert seen[0] == "2402.00002"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("asked", "arxiv_id"),
    [("hep-th/9901001", "hep-th/9901001"), ("math.GT/0309136", "math/0309136"),
     ("math/0309136v2", "math/0309136"), ("2401.00001", "2401.00001")],
)
def test_paper_detail_by_new_and_old_style_id(owner_api, papers, asked, arxiv_id):
    response = owner_api.get(f"/api/papers/{asked}/")
    assert response.status_code == 200
    body = response.json()
    assert body["arxiv_id"] == arxiv_id
    assert body["authors"]
    assert body["abs_url"] == f"https://arxiv.org/abs/{arxiv_id}"
    assert {"doi", "journal_ref", "comments", "license", "withdrawn"} <= set(body)


@pytest.mark.django_db
def test_paper_detail_ignores_a_version_suffix(owner_api, papers):
    assert owner_api.get("/api/papers/hep-th/9901001v2/").json()["arxiv_id"] == "hep-th/9901001"


@pytest.mark.django_db
def test_unknown_paper_is_404(owner_api, papers):
    response = owner_api.get("/api/papers/2401.99999/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.django_db
def test_hidden_papers_are_invisible_to_users(owner_api, hidden_paper):
    assert hidden_paper.arxiv_id not in ids(owner_api.get("/api/papers/"))
    assert owner_api.get(f"/api/papers/{hidden_paper.arxiv_id}/").status_code == 404
    response = owner_api.get("/api/papers/", {"hidden": "true"})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"


@pytest.mark.django_db
def test_staff_can_list_and_open_hidden_papers(staff_api, hidden_paper):
    assert ids(staff_api.get("/api/papers/", {"hidden": "true"})) == [hidden_paper.arxiv_id]
    assert hidden_paper.arxiv_id not in ids(staff_api.get("/api/papers/"))
    detail = staff_api.get(f"/api/papers/{hidden_paper.arxiv_id}/")
    assert detail.status_code == 200 and detail.json()["hidden"] is True

"""One author rule and one category rule: /papers/, /api/papers/ and search's "papers by X" give
the same papers for the same author= and category= (real database, real ingest)."""

import pytest
from asgiref.sync import async_to_sync
from rest_framework.test import APIClient

from chat.retrieval.search import search
from tests.chat.retrieval.search_corpus import DIFFUSION, DIFFUSION_ABSTRACT, NOW, build_corpus

NAMESAKES = [
    # Word, not substring: "hinton" is not "Hintonia".
    ("2502.00015", DIFFUSION + " by a namesake", DIFFUSION_ABSTRACT, ["Hintonia Grey"], ["math.PR"], "2025-02-01"),
    # Listed with an initial only: found by "G. Hinton", not by "Geoffrey Hinton".
    ("2503.00016", DIFFUSION + " by an initial", DIFFUSION_ABSTRACT, ["G. Hinton"], ["cs.AI"], "2025-03-01"),
    # The words of one query name on two different authors: not that author.
    ("2504.00017", DIFFUSION + " by two people", DIFFUSION_ABSTRACT, ["Geoffrey Smith", "Bob Hinton"], ["stat.ML"], "2025-04-01"),
    ("2505.00018", DIFFUSION + " with accents", DIFFUSION_ABSTRACT, ["Erwin Schr\\\"odinger", "Kaiming He"], ["quant-ph"], "2025-05-01"),
]  # fmt: skip

# (author, category) -> the visible papers expected everywhere.
CASES = [
    ("hinton", "", {"1901.00001", "2306.00003", "2512.00006", "2503.00016", "2504.00017"}),
    ("Geoffrey HINTON", "", {"1901.00001", "2306.00003", "2512.00006"}),
    ("Hinton, Geoffrey", "", {"1901.00001", "2306.00003", "2512.00006"}),
    ("G. Hinton", "", {"1901.00001", "2306.00003", "2512.00006", "2503.00016"}),
    ("geoffrey hinton", "cs.LG", {"2306.00003", "2512.00006"}),
    ("Schrödinger", "", {"2505.00018"}),
    ("schrodinger", "quant-ph", {"2505.00018"}),
    ("Kaiming He", "", {"2505.00018"}),
    ("lecun", "CS.lg", {"2306.00003", "2009.00012", "2411.00013"}),
    (
        "",
        "cs.LG",
        {"2104.00002", "2306.00003", "2512.00006", "2610.00008", "2009.00012", "2411.00013"},
    ),
    ("", "quant-ph", {"1805.00009", "2202.00010", "2508.00011", "2505.00018"}),
    ("turing", "cs", {"2605.00007", "2610.00008"}),
    ("", "math", {"2502.00015"}),
]


@pytest.fixture
def catalogue(db, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    return build_corpus(NAMESAKES)


def from_pages(client, author, category):
    response = client.get("/papers/", {"author": author, "category": category})
    assert response.status_code == 200 and not response.context["errors"]
    return {p.arxiv_id for p in response.context["page"].object_list}


def from_api(api, author, category):
    params = {
        k: v for k, v in (("author", author), ("category", category), ("page_size", 100)) if v
    }
    response = api.get("/api/papers/", params)
    assert response.status_code == 200, response.content
    return {p["arxiv_id"] for p in response.json()["results"]}


def from_search(author, category):
    """The search's filters, given as the search page's chips give them (the reading of "papers
    by X" in a question is tested in tests/chat/understanding/test_analysis.py)."""
    overrides = {
        "authors": [author] if author else [],
        "categories": [category] if category else [],
    }
    response = async_to_sync(search)("papers", k=50, now=NOW, overrides=overrides)
    return {hit.arxiv_id for hit in response.hits}


@pytest.mark.parametrize(("author", "category", "expected"), CASES)
def test_pages_api_and_search_agree_on_author_and_category(
    client, owner, catalogue, author, category, expected
):
    api = APIClient()
    api.force_authenticate(owner)

    assert from_pages(client, author, category) == expected
    assert from_api(api, author, category) == expected
    assert from_search(author, category) == expected


def test_papers_by_x_in_a_question_uses_the_same_rule(catalogue):
    response = async_to_sync(search)("papers by G. Hinton", k=50, now=NOW)

    assert response.analysis.authors == ("G. Hinton",)
    assert {hit.arxiv_id for hit in response.hits} == CASES[3][2]

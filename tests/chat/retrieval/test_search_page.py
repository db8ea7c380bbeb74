"""The search page (/search/) and the search API's output, for an anonymous visitor."""

from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse

from .search_corpus import build_corpus


@pytest.fixture
def corpus(db, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    settings.SEARCH_RESULTS = 10
    return build_corpus()


@pytest.fixture
def frozen_now(monkeypatch):
    """The clock of the page and of search() (analysis, chip) on 2026-11-21."""
    from django.utils import timezone

    now = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
    monkeypatch.setattr(timezone, "now", lambda: now)
    return now


def page(client, **params):
    return client.get(reverse("search"), params)


def test_anonymous_visitor_sees_the_search_box(anonymous, db):
    response = page(anonymous)

    assert response.status_code == 200
    assert b'name="q"' in response.content
    assert b'class="card"' not in response.content


def test_results_link_to_paper_pages_with_snippet_and_reasons(anonymous, corpus, frozen_now):
    response = page(anonymous, q="quantum error correction")
    html = response.content.decode()

    assert response.status_code == 200
    assert 'href="/papers/1805.00009/"' in html
    assert "<mark>" in html
    assert "Why: matches ‘quantum’" in html
    assert "similar in meaning" in html
    assert "quant-ph" in html


def test_abstracts_are_escaped(anonymous, corpus, frozen_now):
    html = page(anonymous, q="diffusion models image generation").content.decode()

    assert "Escaping in diffusion abstracts" in html
    assert "<script>alert" not in html
    assert "<b>bold</b>" not in html
    assert "&lt;script&gt;" in html


def test_window_chip_shows_the_understood_window(anonymous, corpus, frozen_now):
    html = page(anonymous, q="diffusion models since 2025").content.decode()

    assert "since 2025-01-01" in html  # worded by chat/window.py, like the chat's chip
    assert 'name="from" value="2025-01-01"' in html
    assert "1901.00001" not in html


def test_editing_the_chip_changes_the_window(anonymous, corpus, frozen_now):
    response = page(
        anonymous,
        q="diffusion models since 2025",
        **{"from": "2021-01-01", "to": "2021-12-31", "recency": "0"},
    )
    html = response.content.decode()

    assert "2021-01-01 → 2021-12-31" in html
    assert "arXiv:2104.00002" in html
    assert "arXiv:2503.00005" not in html


def test_removing_the_chip_searches_without_the_window(anonymous, corpus, frozen_now):
    first = page(anonymous, q="diffusion models since 2025").content.decode()
    link = first.split('class="chip-remove" href="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
    params = {key: values[0] for key, values in parse_qs(urlsplit(link).query).items()}
    assert params == {"q": "diffusion models since 2025", "window": "off"}

    html = page(anonymous, **params).content.decode()

    assert "arXiv:1901.00001" in html  # from 2019: outside the removed window
    assert "Date window removed" in html
    assert "since 2025-01-01" not in html


def test_bad_chip_values_are_explained(anonymous, corpus, frozen_now):
    response = page(anonymous, q="diffusion", **{"from": "yesterday", "to": "", "recency": "0"})

    assert response.status_code == 400
    assert "from must be a date like 2024-11-21" in response.content.decode()


def test_author_chip_can_be_removed(anonymous, corpus, frozen_now):
    html = page(anonymous, q="diffusion models by Geoffrey Hinton").content.decode()
    assert "by Geoffrey Hinton" in html
    assert "authors=off" in html

    html = page(anonymous, q="diffusion models by Geoffrey Hinton", authors="off").content.decode()
    assert "arXiv:2406.00004" in html  # by Yann LeCun


def test_search_api_returns_analysis_and_results(owner_client, corpus, frozen_now):
    response = owner_client.get("/api/search/", {"q": "diffusion models since 2025", "k": 3})

    assert response.status_code == 200
    data = response.json()
    assert data["analysis"]["is_temporal"] is True
    assert data["analysis"]["start"].startswith("2025-01-01")
    assert len(data["results"]) == 3
    assert all(r["published"] >= "2025-01-01" for r in data["results"])
    assert {"arxiv_id", "title", "published", "score", "why"} <= set(data["results"][0])


def test_search_api_snippets_are_escaped(owner_client, corpus, frozen_now):
    data = owner_client.get("/api/search/", {"q": "diffusion image generation", "k": 20}).json()
    hit = next(r for r in data["results"] if r["arxiv_id"] == "2601.00014")

    assert "<script>" not in hit["snippet_html"]
    assert "<script>" in hit["abstract"]  # the raw text, for clients that escape it themselves

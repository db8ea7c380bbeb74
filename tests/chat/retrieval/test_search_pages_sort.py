"""The search page's pages, sort and counts; author pages and the links to them."""

import re
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from papers.models import Paper

from .search_corpus import build_corpus


@pytest.fixture
def corpus(db, settings):
    settings.EMBEDDING_BACKEND = "hashing"
    settings.SEARCH_RESULTS = 3
    return build_corpus()


@pytest.fixture
def frozen_now(monkeypatch):
    from django.utils import timezone

    now = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
    monkeypatch.setattr(timezone, "now", lambda: now)
    return now


def result_ids(html: str) -> list[str]:
    return re.findall(r'class="card-title" href="/papers/([^/]+)/"', html)


def test_pages_continue_where_the_last_stopped_and_count_all_found(anonymous, corpus, frozen_now):
    first = anonymous.get(reverse("search"), {"q": "diffusion models"}).content.decode()
    second = anonymous.get(reverse("search"), {"q": "diffusion models", "page": 2}).content.decode()
    total = int(re.search(r"Results 1–3 of (\d+)", first).group(1))
    assert total > 3
    assert f"Results 4–6 of {total}" in second
    assert len(result_ids(first)) == 3 and not set(result_ids(first)) & set(result_ids(second))
    assert 'rel="next"' in first and 'rel="prev"' in second


def test_newest_first_sorts_the_found_papers_by_date(anonymous, corpus, frozen_now):
    html = anonymous.get(reverse("search"), {"q": "diffusion models", "sort": "date"}).content.decode()
    ids = result_ids(html)
    dates = [Paper.objects.get(arxiv_id=i).published for i in ids]
    assert dates == sorted(dates, reverse=True)
    assert '<strong aria-current="true">newest first</strong>' in html


def test_count_respects_the_window(anonymous, corpus, frozen_now):
    everything = anonymous.get(reverse("search"), {"q": "diffusion models"}).content.decode()
    windowed = anonymous.get(reverse("search"), {"q": "diffusion models since 2025"}).content.decode()
    count = lambda html: int(re.search(r"of (\d+)", html).group(1))  # noqa: E731
    assert count(windowed) < count(everything)


def test_bad_page_or_sort_is_a_clear_error(anonymous, corpus, frozen_now):
    response = anonymous.get(reverse("search"), {"q": "diffusion", "sort": "stars"})
    assert response.status_code == 400 and "sort must be one of" in response.content.decode()
    response = anonymous.get(reverse("search"), {"q": "diffusion", "page": "x"})
    assert response.status_code == 400


def test_each_result_offers_more_like_it_and_arxiv(anonymous, corpus, frozen_now):
    html = anonymous.get(reverse("search"), {"q": "diffusion models"}).content.decode()
    first = result_ids(html)[0]
    assert f"?q=papers%20like%20{first}" in html
    assert f'href="https://arxiv.org/abs/{first}"' in html


def test_author_names_link_to_author_pages_listing_their_papers(anonymous, corpus):
    paper = Paper.objects.visible().filter(authors__isnull=False).first()
    author = paper.authors.first()
    response = anonymous.get(reverse("papers:detail", kwargs={"arxiv_id": paper.arxiv_id}))
    html = response.content.decode()
    assert response.status_code == 200, html[:300]
    url = reverse("papers:author", kwargs={"key": author.key})
    assert f'href="{url}"' in html
    page = anonymous.get(url).content.decode()
    assert author.name in page and paper.title in page
    assert anonymous.get(reverse("papers:author", kwargs={"key": "nobody here"})).status_code == 404

"""Text that cannot be stored (security/inputs.py) and bidi controls in titles and names
(papers/text.py)."""

import pytest

from chat.models import Thread
from papers.text import clean_title, strip_bidi
from security.inputs import InvalidText, check_text, problem

RLO = "\u202e"


@pytest.mark.parametrize("text", ["a\x00b", "\x00", "a\ud800b", "\udfff", "ok\udc80"])
def test_nul_and_lone_surrogates_are_named(text):
    message = problem(text)
    assert message and ("NUL" in message or "surrogate" in message)
    with pytest.raises(InvalidText):
        check_text(text)


@pytest.mark.parametrize("text", ["", "plain", "naïve 😀 ∑", "tab\tand\nnewline", "\u200b"])
def test_ordinary_text_passes(text):
    assert problem(text) is None and check_text(text) == text


def test_bidi_controls_are_stripped_from_titles():
    assert strip_bidi(f"Harmless {RLO}txt.exe") == "Harmless txt.exe"
    assert clean_title(f"  A\u2066 title\n{RLO}here\u2069 ") == "A title here"
    assert RLO not in Thread.title_from_question(f"why {RLO}gnp.exe")


@pytest.mark.django_db
def test_ingested_titles_and_author_names_lose_bidi_controls():
    import datetime as dt

    from papers.ingest.upsert import PaperRecord, upsert_papers
    from papers.models import Author, Paper

    upsert_papers(
        [
            PaperRecord(
                arxiv_id="2501.00001",
                version=1,
                title=f"Evil {RLO}eltit",
                abstract="x",
                authors=[f"Mallory {RLO}yrollaM"],
                primary_category="cs.CL",
                categories=["cs.CL"],
                published=dt.datetime(2025, 1, 1, tzinfo=dt.UTC),
                updated=dt.datetime(2025, 1, 1, tzinfo=dt.UTC),
            )
        ]
    )
    paper = Paper.objects.get(arxiv_id="2501.00001")
    assert paper.title == "Evil eltit"
    assert RLO not in paper.authors_text
    assert Author.objects.get().name == "Mallory yrollaM"


@pytest.mark.django_db
def test_thread_titles_lose_bidi_controls_on_the_api_and_the_page(owner_client, owner):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    owner_api = APIClient()
    owner_api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=owner).key}")
    created = owner_api.post("/api/threads/", {"title": f"report{RLO}fdp.exe"}, format="json")
    assert created.status_code == 201
    assert created.json()["title"] == "reportfdp.exe"
    thread = Thread.objects.get(pk=created.json()["id"])
    owner_client.post(f"/chat/{thread.pk}/rename/", {"title": f"x{RLO}y"})
    thread.refresh_from_db()
    assert thread.title == "xy"

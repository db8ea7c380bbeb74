"""Scoped threads (chat.scopes): every question searches only the scope's papers, through the
socket, the API and the answer pipeline alike, and the thread page shows the scope as a chip."""

import re

import pytest
from asgiref.sync import sync_to_async
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from chat.llm.extractive import ExtractiveBackend
from chat.models import Message, Thread
from chat.pipeline.answer import answer_events
from chat.scopes import Scope, start_scoped_thread
from papers.models import FullText, Paper
from tests.chat.conftest import NOW
from tests.chat.test_socket import events_until_end, open_socket

# The catalogue has three diffusion papers; the scope holds only the consistency one.
IN_SCOPE = "2510.00003"
DIFFUSION = {"2301.00001", "2405.00002", "2510.00003", "2401.99999"}


def _scope_of_one(arxiv_id: str, label: str = "") -> Scope:
    paper = Paper.objects.get(arxiv_id=arxiv_id)
    return Scope("paper", arxiv_id, label or paper.title, (paper.pk,))


def _cited(done: dict, sources: list[dict]) -> set[str]:
    by_number = {card["number"]: card["arxiv_id"] for card in sources}
    return {by_number[n] for n in done["citations"]}


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_scoped_thread_over_the_socket_never_cites_a_paper_outside_its_scope(
    catalogue, owner
):
    scope = await sync_to_async(_scope_of_one)(IN_SCOPE)
    thread = await sync_to_async(start_scoped_thread)(owner, scope)
    comm = await open_socket(thread, owner)
    # Unscoped, this question finds every diffusion paper of the catalogue.
    await comm.send_json_to({"type": "ask", "text": "diffusion transformers for image generation"})
    events = await events_until_end(comm)
    await comm.disconnect()
    sources = next(e for e in events if e["type"] == "sources")["sources"]
    done = events[-1]
    assert done["type"] == "done", done
    assert {card["arxiv_id"] for card in sources} == {IN_SCOPE}
    assert _cited(done, sources) <= {IN_SCOPE}


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_unscoped_answer_finds_the_other_papers_the_scope_leaves_out(catalogue):
    events = [
        e async for e in answer_events(
            "diffusion transformers for image generation", now=NOW, backend=ExtractiveBackend()
        )
    ]
    sources = next(e for e in events if e["type"] == "sources")["sources"]
    assert len({card["arxiv_id"] for card in sources} & DIFFUSION) >= 2


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_scoped_author_or_named_paper_question_stays_inside(catalogue):
    scope_ids = (await Paper.objects.aget(arxiv_id=IN_SCOPE)).pk,
    for question in ("papers by Carla Diaz on diffusion", "summarize 2405.00002",
                     "latest papers on diffusion"):
        events = [
            e async for e in answer_events(
                question, now=NOW, backend=ExtractiveBackend(), scope_ids=scope_ids
            )
        ]
        sources = next(e for e in events if e["type"] == "sources")["sources"]
        assert {card["arxiv_id"] for card in sources} <= {IN_SCOPE}, question


@pytest.mark.django_db(transaction=True)
def test_scoped_thread_through_the_api_cites_only_its_scope(catalogue, owner):
    thread = start_scoped_thread(owner, _scope_of_one(IN_SCOPE))
    token, _ = Token.objects.get_or_create(user=owner)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = api.post(
        f"/api/threads/{thread.pk}/messages/",
        {"text": "video diffusion with temporal attention"}, format="json",
    )
    assert response.status_code == 201, response.content
    answer = response.json()["answer"]
    assert answer["status"] == "complete", answer
    assert {card["arxiv_id"] for card in answer["sources"]} <= {IN_SCOPE}


@pytest.mark.django_db
def test_thread_page_shows_the_scope_as_an_escaped_chip(catalogue, owner, owner_client):
    thread = start_scoped_thread(owner, _scope_of_one(IN_SCOPE, label="Fast <b>sampling</b>"))
    page = owner_client.get(f"/chat/{thread.pk}/").content.decode()
    assert 'id="scope-chip"' in page
    assert "About: " in page and "Fast &lt;b&gt;sampling&lt;/b&gt;" in page
    assert "<b>sampling</b>" not in page
    assert f'href="/papers/{IN_SCOPE}/"' in page


@pytest.mark.django_db
def test_an_ordinary_thread_has_no_scope_chip(owner, owner_client, saved_thread):
    page = owner_client.get(f"/chat/{saved_thread.pk}/").content.decode()
    assert 'id="scope-chip"' not in page


@pytest.mark.django_db
def test_ask_about_this_paper_starts_a_scoped_thread_and_requests_the_full_text(
    catalogue, owner, owner_client
):
    page = owner_client.get(f"/papers/{IN_SCOPE}/").content.decode()
    assert 'data-role="ask-about-paper"' in page
    response = owner_client.post(f"/chat/about/{IN_SCOPE}/")
    thread = Thread.objects.get(owner=owner)
    assert response.status_code == 302 and response["Location"] == f"/chat/{thread.pk}/"
    paper = Paper.objects.get(arxiv_id=IN_SCOPE)
    assert thread.scope["kind"] == "paper" and thread.scope["paper_ids"] == [paper.pk]
    assert FullText.objects.get(paper=paper).status == FullText.Status.QUEUED
    # The thread page shows it arriving: the status line fulltext.js polls.
    body = owner_client.get(response["Location"]).content.decode()
    assert 'data-role="fulltext-status"' in body and 'data-state="queued"' in body
    assert f'data-status-url="/papers/{IN_SCOPE}/fulltext/"' in body
    assert "js/fulltext.js" in body


@pytest.mark.django_db
def test_ask_about_a_paper_needs_a_signed_in_user_and_a_visible_paper(
    catalogue, anonymous, owner_client
):
    assert "ask-about-paper" not in anonymous.get(f"/papers/{IN_SCOPE}/").content.decode()
    response = anonymous.post(f"/chat/about/{IN_SCOPE}/")
    assert response.status_code == 302 and "/login" in response["Location"]
    assert owner_client.post("/chat/about/2999.99999/").status_code == 404  # not in the catalogue
    assert owner_client.post("/chat/about/not-an-id/").status_code == 404
    assert owner_client.get(f"/chat/about/{IN_SCOPE}/").status_code == 405
    assert not Thread.objects.exists()


@pytest.mark.django_db
def test_a_full_text_card_shows_its_page_pdf_link_and_the_quote_highlighted(owner, owner_client):
    passage = "We use Adam. <b>Hostile</b> text. We train with a learning rate of 3e-4 for 10 epochs."
    thread = Thread.objects.create(owner=owner, title="lr")
    Message.objects.create(thread=thread, role="user", content="learning rate?")
    Message.objects.create(
        thread=thread, role="assistant", status="complete", content="It is 3e-4 [1].",
        citations=[1], sources=[{
            "number": 1, "paper_id": 1, "arxiv_id": "2510.00003", "title": "Fast sampling",
            "url": "https://arxiv.org/abs/2510.00003v1", "passage": passage, "kind": "fulltext",
            "page": 7, "page_end": 8, "pages": "pp. 7-8", "section": "4 Experiments",
            "quote": "We train with a learning rate of 3e-4 for 10 epochs.",
            "pdf_url": "https://arxiv.org/pdf/2510.00003v1#page=7",
        }],
    )
    page = owner_client.get(f"/chat/{thread.pk}/").content.decode()
    assert '<span class="pages">pp. 7-8</span>' in page
    assert 'href="https://arxiv.org/pdf/2510.00003v1#page=7"' in page
    assert (
        '<blockquote class="passage-quote">We use Adam. &lt;b&gt;Hostile&lt;/b&gt; text. '
        '<mark class="quote">We train with a learning rate of 3e-4 for 10 epochs.</mark></blockquote>'
    ) in page


@pytest.mark.django_db
def test_a_quoted_table_row_marks_its_row_in_the_card(owner, owner_client):
    # The composer quotes the row said with its header and caption, which is not in the passage;
    # the row's own line is, and that is what the card marks (escaped like all of it).
    passage = (
        "Model #L LR Batch\n125M 12 6.0e−4 0.5M\n175B 96 1.2e−4 <b>2M</b>\n"
        "Table 1: Model architecture details."
    )
    thread = Thread.objects.create(owner=owner, title="batch")
    Message.objects.create(thread=thread, role="user", content="batch size?")
    Message.objects.create(
        thread=thread, role="assistant", status="complete", content="Batch 2M [1].",
        citations=[1], sources=[{
            "number": 1, "paper_id": 1, "arxiv_id": "2205.01068", "title": "OPT",
            "url": "https://arxiv.org/abs/2205.01068v1", "passage": passage, "kind": "fulltext",
            "page": 2, "page_end": 2, "pages": "p. 2", "section": "2 Method",
            "quote": "Table 1: Model 175B, #L 96, LR 1.2e−4, Batch <b>2M</b> (Model architecture "
            "details).",
            "highlight": "175B 96 1.2e−4 <b>2M</b>",
            "pdf_url": "https://arxiv.org/pdf/2205.01068v1#page=2",
        }],
    )
    page = owner_client.get(f"/chat/{thread.pk}/").content.decode()
    assert (
        '<blockquote class="passage-quote">Model #L LR Batch\n125M 12 6.0e−4 0.5M\n'
        '<mark class="quote">175B 96 1.2e−4 &lt;b&gt;2M&lt;/b&gt;</mark>\n'
        "Table 1: Model architecture details.</blockquote>"
    ) in page


@pytest.mark.django_db
def test_a_card_marks_its_quote_across_the_pdfs_line_breaks(owner, owner_client):
    # A card saved before cards carried `highlight`: the page finds the quote in the passage.
    passage = "Residual Dropout We apply dropout.\nFor the base model, we use a rate of\nPdrop = 0.1."
    thread = Thread.objects.create(owner=owner, title="dropout")
    Message.objects.create(thread=thread, role="user", content="dropout?")
    Message.objects.create(
        thread=thread, role="assistant", status="complete", content="It is 0.1 [1].",
        citations=[1], sources=[{
            "number": 1, "paper_id": 1, "arxiv_id": "1706.03762", "title": "Attention",
            "url": "https://arxiv.org/abs/1706.03762v7", "passage": passage, "kind": "fulltext",
            "page": 8, "page_end": 8, "pages": "p. 8", "section": "5.4 Regularization",
            "quote": "For the base model, we use a rate of Pdrop = 0.1.",
            "pdf_url": "https://arxiv.org/pdf/1706.03762v7#page=8",
        }],
    )
    page = owner_client.get(f"/chat/{thread.pk}/").content.decode()
    assert (
        '<mark class="quote">For the base model, we use a rate of\nPdrop = 0.1.</mark>' in page
    )


@pytest.mark.django_db
def test_a_citation_of_a_full_text_card_says_its_pages(owner, owner_client):
    # Two cards of one paper share its label; the reader still sees which page each bullet is from.
    card = {
        "paper_id": 1, "arxiv_id": "1706.03762", "title": "Attention",
        "url": "https://arxiv.org/abs/1706.03762v7", "kind": "fulltext", "section": "",
        "quote": "", "pdf_url": "",
    }
    thread = Thread.objects.create(owner=owner, title="dropout")
    Message.objects.create(thread=thread, role="user", content="dropout?")
    Message.objects.create(
        thread=thread, role="assistant", status="complete",
        content="- Base: 0.1 [1].\n- Big: 0.3 [2].\n- Abstract [3].", citations=[1, 2, 3],
        sources=[
            {**card, "number": 1, "passage": "Pdrop = 0.1.", "page": 8, "page_end": 8,
             "pages": "p. 8"},
            {**card, "number": 2, "passage": "Pdrop = 0.3.", "page": 9, "page_end": 10,
             "pages": "pp. 9-10"},
            {**card, "number": 3, "passage": "An abstract.", "kind": "abstract", "page": None,
             "page_end": None, "pages": "", "arxiv_id": "2205.01068", "title": "OPT"},
        ],
    )
    page = owner_client.get(f"/chat/{thread.pk}/").content.decode()
    cites = re.findall(r'<a class="cite"[^>]* data-source="(\d+)"[^>]*>([^<]*)</a>', page)
    assert cites == [("1", "[1, p. 8]"), ("2", "[1, pp. 9-10]"), ("3", "[2]")]  # abstract: label

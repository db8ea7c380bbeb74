"""A thread's one reference list (chat.references) and its exports (chat.export): Markdown with
numbered references and versions, BibTeX that parses, on the page and in the API; owner only."""

import re

import bibtexparser
import pytest

from chat import turns
from chat.models import Message, Thread
from chat.references import label_cards
from papers.ingest.upsert import upsert_papers
from tests.chat.conftest import _record

pytestmark = pytest.mark.django_db

PAPERS = {
    "2401.00001": (r"$\Psi$PO: policy optimisation", ["Ada Lovelace", "Alan Turing"]),
    "2402.00002": ("Scaling laws for diffusion", ["Grace Hopper"]),
    "2403.00003": ("Retrieval at scale", ["Edsger Dijkstra", "Barbara Liskov"]),
}


def card(number: int, arxiv_id: str, version: int = 1) -> dict:
    title, authors = PAPERS[arxiv_id]
    return {
        "number": number, "paper_id": number, "arxiv_id": arxiv_id, "title": title,
        "authors": ", ".join(authors), "published": "2024-01-02", "primary_category": "cs.LG",
        "categories": ["cs.LG"], "score": 0.5, "passage": "p", "version": version,
        "cited_as": f"{arxiv_id}v{version}", "url": f"https://arxiv.org/abs/{arxiv_id}v{version}",
    }


@pytest.fixture
def two_answer_thread(owner):
    """First answer: papers 1 and 2. Second: paper 3 (new) and paper 1 again, as its own [1], [2]."""
    upsert_papers([
        _record(i, title, f"Abstract of {title}.", authors, ["cs.LG"], "2024-01-02")
        for i, (title, authors) in PAPERS.items()
    ])
    thread = Thread.objects.create(owner=owner, title="Policy optimisation")
    Message.objects.create(thread=thread, role="user", content="What is $\\Psi$PO?")
    Message.objects.create(
        thread=thread, role="assistant", status="complete",
        content=r"$\Psi$PO optimises $\sim$12,000 policies [1]; scaling helps [2].",
        citations=[1, 2], sources=[card(1, "2401.00001", 2), card(2, "2402.00002")],
    )
    Message.objects.create(thread=thread, role="user", content="And retrieval?")
    Message.objects.create(
        thread=thread, role="assistant", status="complete",
        content="Retrieval scales [1], unlike $\\Psi$PO [2].",
        citations=[1, 2], sources=[card(1, "2403.00003"), card(2, "2401.00001", 2)],
    )
    return thread


def test_labels_continue_and_reuse_across_answers():
    labels = {}
    first = label_cards([card(1, "2401.00001"), card(2, "2402.00002")], labels)
    second = label_cards([card(1, "2403.00003"), card(2, "2401.00001")], labels)
    assert [c["label"] for c in first] == [1, 2]
    assert [c["label"] for c in second] == [3, 1]


def test_next_turn_carries_the_threads_labels(owner, two_answer_thread):
    turn = turns.create_turn(owner.pk, two_answer_thread.pk, "and then?")
    assert turn.earlier_labels == {"2401.00001": 1, "2402.00002": 2, "2403.00003": 3}


def test_page_numbers_citations_and_cards_thread_wide(owner_client, two_answer_thread):
    html = owner_client.get(f"/chat/{two_answer_thread.pk}/").content.decode()
    second = html[html.index("And retrieval?"):]
    # The second answer's own [1] is the thread's [3]; its [2] is the first answer's [1].
    assert re.search(r'data-source="1"[^>]*>\[3\]</a>', second)
    assert re.search(r'data-source="2"[^>]*>\[1\]</a>', second)
    assert '<span class="source-number">[3]</span>' in second
    assert f'href="/chat/{two_answer_thread.pk}/export.bib"' in html


def test_markdown_export_has_one_reference_list_and_keeps_tex(owner_client, two_answer_thread):
    response = owner_client.get(f"/chat/{two_answer_thread.pk}/export.md")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/markdown")
    assert 'filename="Policy_optimisation.md"' in response["Content-Disposition"]
    text = response.content.decode()
    assert r"$\Psi$PO optimises $\sim$12,000 policies [1]; scaling helps [2]." in text
    assert r"Retrieval scales [3], unlike $\Psi$PO [1]." in text
    references = text.split("## References")[1].strip().splitlines()
    assert references == [
        r"- [1] $\Psi$PO: policy optimisation. Ada Lovelace, Alan Turing (2024). "
        "arXiv:2401.00001v2. <https://arxiv.org/abs/2401.00001v2>",
        "- [2] Scaling laws for diffusion. Grace Hopper (2024). arXiv:2402.00002v1. "
        "<https://arxiv.org/abs/2402.00002v1>",
        "- [3] Retrieval at scale. Edsger Dijkstra, Barbara Liskov (2024). arXiv:2403.00003v1. "
        "<https://arxiv.org/abs/2403.00003v1>",
    ]


def test_markdown_export_cites_a_full_text_card_with_its_pages(owner_client, two_answer_thread):
    answer = two_answer_thread.messages.filter(role="assistant").order_by("created_at").first()
    answer.content = "It optimises policies [1]; scaling helps [2]."
    answer.sources[0].update(kind="fulltext", page=7, page_end=8, pages="pp. 7-8")
    answer.save()
    text = owner_client.get(f"/chat/{two_answer_thread.pk}/export.md").content.decode()
    assert "It optimises policies [1, pp. 7-8]; scaling helps [2]." in text
    assert "- [1] $\\Psi$PO: policy optimisation." in text  # one reference for the paper


def test_bibtex_export_parses_in_reference_order(owner_client, two_answer_thread):
    response = owner_client.get(f"/chat/{two_answer_thread.pk}/export.bib")
    assert response["Content-Type"].startswith("application/x-bibtex")
    library = bibtexparser.parse_string(response.content.decode())
    assert not library.failed_blocks
    assert [e.fields_dict["eprint"].value for e in library.entries] == [
        "2401.00001", "2402.00002", "2403.00003"
    ]
    assert library.entries[2].fields_dict["author"].value == "Edsger Dijkstra and Barbara Liskov"


def test_api_export(owner_client, two_answer_thread):
    body = owner_client.get(f"/api/threads/{two_answer_thread.pk}/export/").json()
    assert "Retrieval scales [3]" in body["markdown"]
    assert body["bibtex"].count("@misc{") == 3


def test_stranger_and_anonymous_cannot_export(stranger_client, anonymous, two_answer_thread):
    pk = two_answer_thread.pk
    for path in (f"/chat/{pk}/export.md", f"/chat/{pk}/export.bib"):
        assert stranger_client.get(path).status_code == 404
        assert anonymous.get(path).status_code == 302  # to the log-in page
    assert stranger_client.get(f"/api/threads/{pk}/export/").status_code == 404

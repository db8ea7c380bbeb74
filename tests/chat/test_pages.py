"""Thread pages: owners see and manage their own threads; everyone else gets 404; saved answers
read without JavaScript, and untrusted text (abstracts, model output) stays text."""

import uuid

import pytest

from chat.models import Message, Thread
from chat.views.threads import PENDING_KEY

pytestmark = pytest.mark.django_db


def test_thread_list_shows_own_threads_newest_first(owner_client, owner, stranger):
    older = Thread.objects.create(owner=owner, title="Older chat")
    newer = Thread.objects.create(owner=owner, title="Newer chat")
    Thread.objects.create(owner=stranger, title="Stranger's secret chat")
    Thread.objects.filter(pk=older.pk).update(updated_at="2024-01-01T00:00:00Z")

    html = owner_client.get("/chat/").content.decode()

    assert html.index(newer.title) < html.index(older.title)
    assert "Stranger&#x27;s secret chat" not in html and "Stranger's secret chat" not in html
    assert 'action="/chat/new/"' in html


def test_anonymous_visitor_is_sent_to_login(anonymous, saved_thread):
    for url in ("/chat/", f"/chat/{saved_thread.pk}/"):
        response = anonymous.get(url)
        assert response.status_code == 302
        assert response.url.startswith("/accounts/login/")


def test_stranger_gets_404_on_every_thread_url(stranger_client, saved_thread):
    pk = saved_thread.pk
    assert stranger_client.get(f"/chat/{pk}/").status_code == 404
    assert stranger_client.post(f"/chat/{pk}/rename/", {"title": "Mine now"}).status_code == 404
    assert stranger_client.post(f"/chat/{pk}/delete/").status_code == 404
    saved_thread.refresh_from_db()
    assert saved_thread.title == "Diffusion transformers"


def test_unknown_thread_is_404_like_a_strangers(owner_client):
    assert owner_client.get(f"/chat/{uuid.uuid4()}/").status_code == 404


def test_saved_thread_reads_without_javascript(owner_client, saved_thread):
    html = owner_client.get(f"/chat/{saved_thread.pk}/").content.decode()

    assert "What about diffusion transformers?" in html
    assert "Diffusion transformers scale well" in html
    # Source cards: title, authors, date, category and the arXiv link.
    assert "Scaling laws for image diffusion" in html
    assert "Grace Hopper" in html and "2024-02-03" in html and "cs.LG" in html
    assert 'href="https://arxiv.org/abs/2402.00002"' in html
    # Citations link to their cards, the window shows as a chip, follow-ups are offered.
    message = saved_thread.messages.get(role="assistant")
    prefix = "m" + message.pk.hex[:12]
    assert f'href="#{prefix}-source-1"' in html and f'id="{prefix}-source-1"' in html
    assert "since 2023-01-01" in html
    assert 'class="followups"' in html


def test_script_in_abstract_title_and_model_output_is_escaped(owner_client, saved_thread):
    html = owner_client.get(f"/chat/{saved_thread.pk}/").content.decode()

    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&#x27;abstract&#x27;)&lt;/script&gt;" in html
    assert "&lt;script&gt;alert(&#x27;title&#x27;)&lt;/script&gt;" in html
    assert "&lt;script&gt;alert(" in html.split('class="answer"')[1].split("</div>")[0]


def test_uncited_number_in_saved_text_is_not_a_link(owner_client, owner):
    thread = Thread.objects.create(owner=owner, title="t")
    Message.objects.create(thread=thread, role="assistant", content="Claim [7].", sources=[])
    html = owner_client.get(f"/chat/{thread.pk}/").content.decode()
    assert "Claim [7]." in html
    assert 'class="cite"' not in html


def test_new_chat_titles_thread_from_question_and_hands_it_to_the_page(owner_client, owner):
    question = "What is new in   retrieval-augmented generation since 2024?"
    response = owner_client.post("/chat/new/", {"text": question})

    thread = Thread.objects.get(owner=owner)
    assert response.status_code == 302 and response.url == f"/chat/{thread.pk}/"
    assert thread.title == "What is new in retrieval-augmented generation since 2024?"
    page = owner_client.get(response.url).content.decode()
    assert 'data-pending-question="What is new in   retrieval-augmented generation' in page
    # Handed over once: a reload does not ask again.
    assert owner_client.session.get(PENDING_KEY) == {}
    assert 'data-pending-question=""' in owner_client.get(response.url).content.decode()


def test_new_chat_refuses_an_overlong_question(owner_client, owner, settings):
    settings.CHAT_MAX_QUESTION_CHARS = 10
    response = owner_client.post("/chat/new/", {"text": "x" * 11}, follow=True)
    assert not Thread.objects.filter(owner=owner).exists()
    assert "limited to 10 characters" in response.content.decode()


def test_new_chat_requires_post(owner_client):
    assert owner_client.get("/chat/new/").status_code == 405


def test_owner_renames_thread(owner_client, saved_thread):
    response = owner_client.post(f"/chat/{saved_thread.pk}/rename/", {"title": "  Better   title "})
    assert response.status_code == 302
    saved_thread.refresh_from_db()
    assert saved_thread.title == "Better title"


def test_rename_refuses_empty_title(owner_client, saved_thread):
    response = owner_client.post(f"/chat/{saved_thread.pk}/rename/", {"title": "   "}, follow=True)
    saved_thread.refresh_from_db()
    assert saved_thread.title == "Diffusion transformers"
    assert "cannot be empty" in response.content.decode()


def test_owner_deletes_thread_and_its_messages(owner_client, saved_thread):
    response = owner_client.post(f"/chat/{saved_thread.pk}/delete/")
    assert response.status_code == 302 and response.url == "/chat/"
    assert not Thread.objects.filter(pk=saved_thread.pk).exists()
    assert not Message.objects.filter(thread_id=saved_thread.pk).exists()


def test_streaming_answer_shows_its_status(owner_client, owner):
    thread = Thread.objects.create(owner=owner, title="t")
    Message.objects.create(thread=thread, role="user", content="q")
    Message.objects.create(thread=thread, role="assistant", status="streaming", content="Partial")
    html = owner_client.get(f"/chat/{thread.pk}/").content.decode()
    assert 'data-status="streaming"' in html and "Writing…" in html


def test_saved_answer_shows_every_filter_it_used_as_chips(owner_client, owner):
    """A reload shows the chips the answer streamed: window, recency, author, category, seed,
    with the ones the user set marked, and the filter set the page edits and sends back."""
    thread = Thread.objects.create(owner=owner, title="t")
    Message.objects.create(thread=thread, role="user", content="papers like 2309.00267 by <b>Gao</b>")
    Message.objects.create(
        thread=thread, role="assistant", status="complete", content="An answer.",
        analysis={
            "query": "", "start": "2023-01-01T00:00:00+00:00", "end": None, "recency_weight": 0.6,
            "authors": ["Jianfeng <b>Gao</b>"], "categories": ["cs.CL"], "arxiv_id": "2309.00267",
            "filters": {"categories": ["cs.CL"]},
        },
    )
    html = owner_client.get(f"/chat/{thread.pk}/").content.decode()
    chips = html.split('class="filter-chips"', 1)[1].split("</div>", 1)[0]
    for label in ("since 2023-01-01", "recent first (0.6)", "by Jianfeng &lt;b&gt;Gao&lt;/b&gt;",
                  "in cs.CL", "like arXiv:2309.00267"):
        assert label in chips, label
    assert '<span class="chip chip-category chip-edited" data-kind="category" data-value="cs.CL"' in chips
    assert "<b>" not in chips and "{#" not in html and "comment" not in chips
    # The filter set as JSON in an attribute (escaped), and the question to re-ask.
    assert "data-filters=\"{&quot;start&quot;: &quot;2023-01-01&quot;" in chips
    assert 'data-question="papers like 2309.00267 by &lt;b&gt;Gao&lt;/b&gt;"' in html


def test_search_arxiv_offered_under_nothing_answers_only_when_live_search_is_on(
    owner_client, owner, settings
):
    thread = Thread.objects.create(owner=owner, title="Bread")
    Message.objects.create(thread=thread, role="user", content="sourdough bread")
    nothing = {"nothing_relevant": True, "total_ms": 12}
    Message.objects.create(thread=thread, role="assistant", content="Nothing.", timings=nothing)
    Message.objects.create(thread=thread, role="user", content="diffusion")
    Message.objects.create(thread=thread, role="assistant", content="Found.", timings={})

    html = owner_client.get(f"/chat/{thread.pk}/").content.decode()
    assert html.count("Search arXiv for this") == 1 and 'data-arxiv-search="on"' in html

    settings.ARXIV_LIVE_SEARCHES_PER_HOUR = 0
    html = owner_client.get(f"/chat/{thread.pk}/").content.decode()
    assert "Search arXiv for this" not in html and 'data-arxiv-search=""' in html


def _card(number: int) -> dict:
    arxiv_id = f"2401.0000{number}"
    return {
        "number": number, "title": f"Paper {number}", "authors": "A. Author",
        "published": "2024-01-0{number}", "arxiv_id": arxiv_id,
        "url": f"https://arxiv.org/abs/{arxiv_id}", "passage": f"Passage {number}.",
    }


def test_cards_an_answer_does_not_cite_are_folded_behind_a_button(owner_client, owner):
    thread = Thread.objects.create(owner=owner, title="t")
    cites_two = Message.objects.create(
        thread=thread, role="assistant", status="complete", content="One [1]. Three [3].",
        sources=[_card(1), _card(2), _card(3)],
    )
    html = owner_client.get(f"/chat/{thread.pk}/").content.decode()
    prefix = "m" + cites_two.pk.hex[:12]
    assert '<ol class="sources collapsed"' in html
    assert f'<li class="card source uncited" id="{prefix}-source-2">' in html
    assert f'<li class="card source" id="{prefix}-source-1">' in html
    assert f'<li class="card source" id="{prefix}-source-3">' in html
    assert "Show 1 more passage found but not quoted</button>" in html

    # An answer citing nothing keeps every card in view: they are the closest there is.
    cites_none = Message.objects.create(
        thread=thread, role="assistant", status="complete", content="Nothing on that.",
        sources=[_card(1), _card(2)],
    )
    html = owner_client.get(f"/chat/{thread.pk}/").content.decode()
    second = html.split(f'id="m{cites_none.pk.hex[:12]}-source-1"')[0].rsplit("<ol", 1)[1]
    assert "collapsed" not in second
    assert html.count("found but not quoted") == 1

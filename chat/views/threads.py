"""Thread pages: the list, one conversation, and creating, renaming and deleting threads.

Every thread is looked up through its owner (`get_object_or_404(Thread, pk=pk, owner=...)`), so
another user's thread id answers 404 exactly like one that does not exist. Reading a thread is
plain server-rendered HTML; asking goes over the WebSocket (static/js/chat.js).
"""

import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from chat import notion, service
from chat.llm.sentences import passage_span
from chat.markdown import anchor_prefix, render_answer
from chat.models import Message, Thread
from chat.pipeline.citations import check_citations
from chat.pipeline.followups import suggest_followups
from chat.references import cite_labels, thread_labels
from chat.scopes import Scope, scope_of, start_scoped_thread
from chat.thread_list import listed_threads
from chat.turns import fail_stale
from chat.understanding.overrides import chips, filters_of
from chat.watch import seen_updates
from papers.fulltext.queue import request_fulltext
from papers.fulltext.status import fulltext_status
from papers.identifiers import InvalidArxivId, split_version
from papers.models import Paper
from papers.text import clean_title
from security import inputs

# A question waiting in the session for the thread page's script to send (from the new-chat box).
PENDING_KEY = "chat_pending_questions"
TITLE_MAX = Thread._meta.get_field("title").max_length


def _refused(request, problem: str, to: str, **kwargs) -> HttpResponse:
    """Input that cannot be stored: a 400 that says why, with the way back (no redirect: a
    script or a program sees the refusal, and a person reads it on the page)."""
    return render(request, "400.html", {"message": problem, "back": reverse(to, kwargs=kwargs)},
                  status=400)


def _owned_thread(request, pk) -> Thread:
    return get_object_or_404(Thread, pk=pk, owner=request.user)


@login_required
@require_GET
def index(request):
    threads = Thread.objects.owned_by(request.user).select_related("follow").order_by(
        "-updated_at")[:100]
    return render(
        request,
        "chat/index.html",
        {"threads": listed_threads(threads), "max_chars": settings.CHAT_MAX_QUESTION_CHARS},
    )


@login_required
@require_POST
def new_thread(request):
    question = request.POST.get("text", "").strip()
    if (problem := inputs.problem(question)) is not None:
        return _refused(request, problem, "chat:index")
    if len(question) > settings.CHAT_MAX_QUESTION_CHARS:
        messages.error(
            request,
            f"Questions are limited to {settings.CHAT_MAX_QUESTION_CHARS} characters.",
        )
        return redirect("chat:index")
    thread = Thread.objects.create(
        owner=request.user, title=Thread.title_from_question(question) if question else ""
    )
    if question:
        pending = request.session.get(PENDING_KEY, {})
        pending[str(thread.pk)] = question
        request.session[PENDING_KEY] = pending
    return redirect("chat:thread", pk=thread.pk)


def quoted(passage: str, highlight: str) -> tuple[str, str, str]:
    """A passage split around the text its card marks (before, highlight, after); ("passage",
    "", "") when that is not in it. Each part is escaped by the template (static/js/chat.js
    splits the same way for live answers)."""
    at = passage.find(highlight) if highlight else -1
    if at < 0:
        return passage, "", ""
    return passage[:at], highlight, passage[at + len(highlight):]


def _with_quotes(sources: list[dict]) -> list[dict]:
    cards = []
    for card in sources:
        passage = card.get("passage") or ""
        highlight = card.get("highlight")
        if highlight is None:  # a card saved before `highlight`: its quote found as it is read
            highlight = passage_span(passage, card.get("quote") or "")
        cards.append({**card, "quoted": quoted(passage, highlight)})
    return cards


def _folded(message: Message, cards: list[dict]) -> int:
    """How many of a finished answer's cards it does not cite, each marked `uncited` (the page
    folds them behind a button, as static/js/chat.js does when an answer finishes live); 0 when
    it cites none: then every card is the closest the catalogue has, and stays in view."""
    if message.status != Message.Status.COMPLETE:
        return 0
    cited = set(check_citations(message.content, len(cards)).kept)
    if not cited:
        return 0
    for card in cards:
        card["uncited"] = card.get("number") not in cited
    return sum(card["uncited"] for card in cards)


def _conversation(thread: Thread) -> list[dict]:
    """Messages as the template shows them: answers rendered safely, with their sources."""
    rows = list(thread.messages.all())
    answers = [m for m in rows if m.role == Message.Role.ASSISTANT]
    labelled = dict(zip(answers, thread_labels(m.sources for m in answers), strict=True))
    last_answer = next((m for m in reversed(rows) if m.role == Message.Role.ASSISTANT), None)
    items = []
    question = ""
    for message in rows:
        item = {"message": message}
        if message.role == Message.Role.USER:
            question = message.content
        else:
            sources = labelled[message]
            item.update(
                # "Searched: …" only when the follow-up was rewritten into something else.
                rewritten=bool(message.query) and message.query.strip() != question.strip(),
                html=render_answer(
                    message.content, len(sources), message.pk, message.unsupported or (),
                    labels=cite_labels(sources),
                ),
                sources=(cards := _with_quotes(sources)),
                folded=_folded(message, cards),
                prefix=anchor_prefix(message.pk),
                question=question,
                # Chips only for answers that searched (not a failed-before-search one).
                chips=chips(message.analysis) if message.analysis else [],
                filters_json=json.dumps(filters_of(message.analysis)),
                user_set_json=json.dumps((message.analysis or {}).get("filters") or {}),
                followups=suggest_followups(message.query, message.analysis, sources)
                if message is last_answer and message.status == Message.Status.COMPLETE
                else [],
            )
        items.append(item)
    return items


@login_required
@require_POST
def ask_about_paper(request, arxiv_id):
    """"Ask about this paper": a new thread scoped to the paper (its chunks only), its full text
    requested when missing (the thread page shows it arriving)."""
    try:
        arxiv_id = split_version(arxiv_id)[0]
    except InvalidArxivId:
        raise Http404("not an arXiv identifier") from None
    paper = get_object_or_404(Paper.objects.visible(), arxiv_id=arxiv_id)
    title = " ".join(paper.title.split())
    thread = start_scoped_thread(request.user, Scope("paper", paper.arxiv_id, title, (paper.pk,)))
    request_fulltext(paper)  # idempotent: nothing happens when it is read or on its way
    return redirect("chat:thread", pk=thread.pk)


def _scope_fulltext(scope) -> dict | None:
    """For a thread about one paper: its full text's state (the line the page polls)."""
    if scope is None or scope.kind != "paper" or not scope.paper_ids:
        return None
    paper = Paper.objects.filter(pk=scope.paper_ids[0]).first()
    return None if paper is None else fulltext_status(paper)


@login_required
@require_GET
def thread_page(request, pk):
    thread = _owned_thread(request, pk)
    fail_stale(thread.pk)  # an answer whose process died shows as failed, not "Writing…"
    pending = request.session.get(PENDING_KEY, {})
    pending_question = pending.pop(str(thread.pk), "")
    if pending_question:
        request.session[PENDING_KEY] = pending
    scope = scope_of(thread)
    # Before the thread list is read: opening the thread clears its badge there too.
    follow = seen_updates(thread)
    return render(
        request,
        "chat/thread.html",
        {
            "thread": thread,
            "scope": scope,  # shown as the "About: …" chip
            "scope_fulltext": _scope_fulltext(scope),
            "notion_enabled": notion.configured(),  # the Export menu's "Send to Notion"
            "shares": thread.shares.filter(revoked_at__isnull=True),  # chat/_share.html
            "items": _conversation(thread),
            "threads": listed_threads(
                Thread.objects.owned_by(request.user).select_related("follow")
                .order_by("-updated_at")[:30],
                title_chars=48,
            ),
            "follow": follow,
            "pending_question": pending_question,
            "max_chars": settings.CHAT_MAX_QUESTION_CHARS,
            # "Search arXiv for this" under answers the catalogue had nothing for.
            "arxiv_search": settings.ARXIV_LIVE_SEARCHES_PER_HOUR > 0,
            "streaming": thread.messages.filter(status=Message.Status.STREAMING).exists(),
        },
    )


@login_required
@require_POST
def rename_thread(request, pk):
    thread = _owned_thread(request, pk)
    title = clean_title(request.POST.get("title", ""))
    if (problem := inputs.problem(title)) is not None:
        return _refused(request, problem, "chat:thread", pk=thread.pk)
    if not title:
        messages.error(request, "A title cannot be empty.")
    elif len(title) > TITLE_MAX:
        messages.error(request, f"Titles are limited to {TITLE_MAX} characters.")
    else:
        thread.title = title
        thread.save(update_fields=["title", "updated_at"])
        messages.success(request, "Chat renamed.")
    return redirect("chat:thread", pk=thread.pk)


@login_required
@require_POST
def delete_thread(request, pk):
    service.delete_thread(_owned_thread(request, pk))  # stops its answer in progress first
    messages.success(request, "Chat deleted.")
    return redirect("chat:index")

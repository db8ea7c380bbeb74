"""Questions that watch arXiv: followed threads asked again after each nightly ingest.

For each followed thread, its last question (the standalone query its last answer searched,
with the filters the user set on its chips) is searched again with the same retrieval, among the
papers that arrived (Paper.created_at, by ingest or import) since the thread was last answered
and that it has not announced yet. Each candidate must pass the relevance gate on its own (a
search restricted to that one paper: chat.retrieval.relevance), so one strong paper does not
carry weak ones in. The relevant ones are posted as a "New since you asked" assistant message in
the list form of the answer composer (chat.llm.shapes), cited [n] with source cards; their ids
are recorded so no paper is announced twice. Bounded: WATCH_MAX_FOLLOWED_PER_USER threads per
user, WATCH_MAX_NEW_PAPERS papers per update.
"""

import logging
from dataclasses import dataclass, field
from datetime import datetime

from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from chat.llm.base import AnswerRequest, SourceText
from chat.llm.shapes import compose_shaped
from chat.models import Follow, Message, Thread
from chat.pipeline.answer import source_card
from chat.retrieval.search import MAX_QUERY_CHARS, SearchError, search
from chat.understanding import intent as intents
from papers.models import Paper

logger = logging.getLogger(__name__)

UPDATE = "new_since_you_asked"  # Message.analysis["update"] of an update message
CANDIDATES = 50  # new papers read per thread by the first, restricted search


class CannotFollow(ValueError):
    """Why a thread cannot be followed (safe to show)."""


def is_update(message: Message) -> bool:
    return (message.analysis or {}).get("update") == UPDATE


def last_question(thread: Thread) -> Message | None:
    """The thread's last real answer (not an update) that searched: what a re-run asks again."""
    for message in thread.messages.filter(role=Message.Role.ASSISTANT).order_by("-created_at"):
        if not is_update(message) and message.query and message.status == Message.Status.COMPLETE:
            return message
    return None


def follow(thread: Thread) -> Follow:
    """Start following `thread` (idempotent); CannotFollow says why not."""
    if existing := Follow.objects.filter(thread=thread).first():
        return existing
    if thread.scope:
        raise CannotFollow("A thread about chosen papers cannot watch for new ones.")
    if last_question(thread) is None:
        raise CannotFollow("Ask a question first: following re-asks the thread's last question.")
    followed = Follow.objects.filter(thread__owner_id=thread.owner_id).count()
    if followed >= settings.WATCH_MAX_FOLLOWED_PER_USER:
        raise CannotFollow(
            f"You follow {followed} threads, the most allowed "
            f"({settings.WATCH_MAX_FOLLOWED_PER_USER}); unfollow one first."
        )
    return Follow.objects.create(thread=thread)


@dataclass
class WatchResult:
    threads: int = 0  # followed threads re-run
    updates: int = 0  # "New since you asked" messages posted
    papers: int = 0  # papers announced
    updated_threads: list[Thread] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"threads": self.threads, "updates": self.updates, "papers": self.papers}


def run_watches(now: datetime | None = None) -> WatchResult:
    """Re-run every followed thread (each user's most recently active first, at most
    WATCH_MAX_FOLLOWED_PER_USER each); post updates where new relevant papers exist."""
    now = now or timezone.now()
    result = WatchResult()
    per_user: dict[int, int] = {}
    follows = Follow.objects.select_related("thread", "thread__owner").order_by(
        "thread__owner_id", "-thread__updated_at"
    )
    for followed in follows:
        owner = followed.thread.owner_id
        per_user[owner] = per_user.get(owner, 0) + 1
        if per_user[owner] > settings.WATCH_MAX_FOLLOWED_PER_USER:
            continue
        result.threads += 1
        try:
            message = check_thread(followed, now)
        except SearchError as exc:  # a question that no longer searches: skip, say why
            logger.warning("watch_skipped thread=%s reason=%s", followed.thread_id, exc)
            continue
        if message is not None:
            result.updates += 1
            result.papers += len(message.sources)
            result.updated_threads.append(followed.thread)
    return result


def last_answered(thread: Thread) -> datetime | None:
    """When the thread was last answered (a real answer or an update)."""
    return (
        thread.messages.filter(role=Message.Role.ASSISTANT).order_by("-created_at")
        .values_list("created_at", flat=True).first()
    )


def new_papers(thread: Thread, followed: Follow, since: datetime | None):
    """Papers that arrived (by ingest or import) since `since`, not yet announced in it."""
    papers = Paper.objects.visible().filter(withdrawn=False, arrived_via=Paper.Arrival.INGEST)
    if since is not None:
        papers = papers.filter(created_at__gt=since)
    return papers.exclude(pk__in=followed.notified or [0]).exclude(
        Q(pk__in=cited_papers(thread))
    )


def cited_papers(thread: Thread) -> set[int]:
    ids = set()
    for sources in thread.messages.values_list("sources", flat=True):
        ids.update(s.get("paper_id") for s in sources or [] if s.get("paper_id"))
    return ids


def check_thread(followed: Follow, now: datetime) -> Message | None:
    """One followed thread's re-run: the update message it posted, or None."""
    thread = followed.thread
    asked = last_question(thread)
    followed.checked_at = now
    if asked is None:
        followed.save(update_fields=["checked_at"])
        return None
    since = last_answered(thread)
    candidates = list(new_papers(thread, followed, since).values_list("pk", flat=True)[:5000])
    hits = relevant_hits(asked, candidates, now) if candidates else []
    if not hits:
        followed.save(update_fields=["checked_at"])
        return None
    with transaction.atomic():
        # Two watch jobs at once (a second night's run starting late) must not both announce a
        # paper: the row is locked and its notified ids read again under the lock.
        followed = Follow.objects.select_for_update().get(pk=followed.pk)
        followed.checked_at = now
        hits = [hit for hit in hits if hit.paper_id not in set(followed.notified)]
        if not hits:
            followed.save(update_fields=["checked_at"])
            return None
        cards = [source_card(n, hit) for n, hit in enumerate(hits, start=1)]
        message = Message.objects.create(
            thread=thread, role=Message.Role.ASSISTANT, status=Message.Status.COMPLETE,
            query=asked.query, content=update_text(asked, cards, since or now, now), sources=cards,
            citations=[c["number"] for c in cards],
            analysis={**(asked.analysis or {}), "update": UPDATE, "intent": intents.LIST},
            backend="watch", model="extractive",
        )
        followed.notified = [*followed.notified, *(c["paper_id"] for c in cards)]
        followed.unseen += 1
        followed.last_update_at = now
        followed.save(update_fields=["notified", "unseen", "checked_at", "last_update_at"])
        thread.save(update_fields=["updated_at"])  # the thread rises in the list
    return message


def relevant_hits(asked: Message, candidates: list[int], now: datetime) -> list:
    """The new papers the question would cite: searched among `candidates` with the same
    retrieval, each then passing the relevance gate on its own."""
    query = asked.query[:MAX_QUERY_CHARS]
    filters = (asked.analysis or {}).get("filters") or None
    run = async_to_sync(search)
    found = run(query, k=min(CANDIDATES, len(candidates)), now=now, overrides=filters,
                paper_ids=candidates)
    if not found.hits or found.nothing_relevant:
        return []
    kept = []
    for hit in found.hits:
        alone = run(query, k=1, now=now, overrides=filters, paper_ids=[hit.paper_id])
        if alone.hits and not alone.nothing_relevant:
            kept.append(hit)
        if len(kept) >= settings.WATCH_MAX_NEW_PAPERS:
            break
    return kept


def update_text(asked: Message, cards: list[dict], since: datetime, now: datetime) -> str:
    """The update in the composer's list form: one line per paper, its contribution, cited."""
    sources = [
        SourceText(number=c["number"], title=c["title"], authors=c["authors"],
                   published=c["published"], text=c["passage"], arxiv_id=c["arxiv_id"])
        for c in cards
    ]
    topic = (asked.analysis or {}).get("query") or asked.query
    request = AnswerRequest(
        question=topic, sources=sources, messages=[], intent=intents.Intent(kind=intents.LIST),
        analysis=asked.analysis or {}, today=now.date(),
    )
    count = len(cards)
    lead = (
        f"**New since you asked** “{asked.query}”: {count} new paper{'s' if count != 1 else ''} "
        f"on it arrived since {since:%Y-%m-%d}."
    )
    return f"{lead}\n\n{compose_shaped(request)}"


def seen_updates(thread: Thread) -> Follow | None:
    """The thread's Follow, its unseen updates now seen (the owner opened the thread)."""
    followed = Follow.objects.filter(thread=thread).first()
    if followed is not None and followed.unseen:
        followed.unseen = 0
        followed.save(update_fields=["unseen"])
    return followed

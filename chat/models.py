"""Chat threads and their messages. Every query of these goes through the owner."""

import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q

from papers.text import clean_title


class ThreadQuerySet(models.QuerySet):
    def owned_by(self, user):
        return self.filter(owner=user)


class Thread(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="threads"
    )
    title = models.CharField(max_length=200, blank=True)
    # What the thread asks about when it is not the whole catalogue (see chat/scopes.py):
    # {"kind": "paper" | "collection", "ref": "2401.01234" | "<collection id>", "label": "...",
    #  "paper_ids": [12, 34]}; {} for an ordinary thread.
    scope = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ThreadQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_at"]
        indexes = [
            # The thread list: a user's threads, newest first.
            models.Index(fields=["owner", "-updated_at"], name="chat_thread_owner_upd_idx"),
        ]

    def __str__(self):
        return self.title or "New chat"

    @staticmethod
    def title_from_question(question: str, limit: int = 80) -> str:
        """A thread's first title: the first question on one line, cut at a word boundary."""
        text = clean_title(question)
        if len(text) <= limit:
            return text
        cut = text[: limit - 1].rsplit(" ", 1)[0] or text[: limit - 1]
        return cut + "…"

    @property
    def group_name(self) -> str:
        """The channel-layer group every socket watching this thread joins."""
        return f"thread.{self.pk.hex}"


class Message(models.Model):
    class Role(models.TextChoices):
        USER = "user", "User"
        ASSISTANT = "assistant", "Assistant"

    class Status(models.TextChoices):
        STREAMING = "streaming", "Streaming"
        COMPLETE = "complete", "Complete"
        STOPPED = "stopped", "Stopped"
        FAILED = "failed", "Failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=20, choices=Role.choices)
    content = models.TextField(blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.COMPLETE)
    # The standalone question actually searched (after follow-up rewriting).
    query = models.TextField(blank=True)
    analysis = models.JSONField(default=dict, blank=True, help_text="Temporal analysis used")
    sources = models.JSONField(
        default=list, blank=True, help_text="Ordered sources: rank, score, paper, passage"
    )
    backend = models.CharField(max_length=40, blank=True)
    model = models.CharField(max_length=200, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    time_to_first_token_ms = models.PositiveIntegerField(null=True, blank=True)
    total_ms = models.PositiveIntegerField(null=True, blank=True)
    # Citation numbers kept in the answer after checking (each points to an entry of `sources`).
    citations = models.JSONField(default=list, blank=True)
    # Where the time went, in ms: rewrite, retrieval, prompt, overhead (all before the LLM), ttft,
    # total; plus the fallback reason when another backend had to take over.
    timings = models.JSONField(default=dict, blank=True)
    # Sentences of a model's answer that no source they cite supports (chat.pipeline.support):
    # [{index, start, end, text, cited, score}], spans into `content`. Shown underlined.
    unsupported = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)
    # The process writing the answer while it streams (chat.processes: host, pid, start time), so
    # an answer whose process died is told at once from a live one; empty for other messages.
    runner = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Bumped by every periodic save while streaming: a "streaming" row whose process died stops
    # being bumped, which is how a stale answer is told from a live one.
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at"]
        indexes = [
            # A thread's conversation in order.
            models.Index(fields=["thread", "created_at"], name="chat_message_thread_idx"),
        ]
        constraints = [
            # One answer in progress per thread, held by the database across processes.
            models.UniqueConstraint(
                fields=["thread"],
                condition=Q(status="streaming"),
                name="chat_one_streaming_answer_per_thread",
            ),
        ]

    def __str__(self):
        return f"{self.role}: {self.content[:60]}"


class Ask(models.Model):
    """One question a user asked, kept for the per-user ask limit (chat.turns) whatever happens
    to the thread: counting questions in Message rows let a user reset the limit by deleting
    threads (their messages go with them). Rows older than the limit's window are deleted as new
    ones come."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    asked_at = models.DateTimeField()

    class Meta:
        indexes = [
            # The ask limit: a user's asks in the last minute.
            models.Index(fields=["user", "asked_at"], name="chat_ask_user_time_idx"),
        ]

    def __str__(self):
        return f"{self.user_id} at {self.asked_at:%Y-%m-%d %H:%M:%S}"


class Follow(models.Model):
    """A followed thread ("Questions that watch arXiv", chat.watch): after each nightly ingest
    its last question is asked again of the papers that arrived since it was last answered, and
    relevant new ones are posted in it as a "New since you asked" message."""

    thread = models.OneToOneField(Thread, on_delete=models.CASCADE, related_name="follow")
    # Paper ids already announced in this thread: never announced twice.
    notified = ArrayField(models.BigIntegerField(), default=list, blank=True)
    # Updates posted since the owner last opened the thread: the badge in the thread list.
    unseen = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    checked_at = models.DateTimeField(null=True, blank=True)  # the last re-run
    last_update_at = models.DateTimeField(null=True, blank=True)  # the last update posted

    def __str__(self):
        return f"follow of {self.thread_id}"


class ThreadShare(models.Model):
    """A read-only link to a thread as it was when shared: the answers and their source cards
    (with the paper versions read) are copied into `snapshot`, so later answers, renames or
    newer paper versions never change what the link shows. Revoked links answer 404."""

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="shares")
    # secrets.token_urlsafe: unguessable; the only thing a viewer needs.
    token = models.CharField(max_length=64)
    # {"title": str, "exchanges": [{"id", "question", "content", "status", "sources",
    #  "unsupported"}]}: see chat.sharing.snapshot_of.
    snapshot = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # Its unique index serves the public page's lookup by token.
            models.UniqueConstraint(fields=["token"], name="chat_unique_share_token"),
        ]

    def __str__(self):
        return f"share of {self.thread_id} ({'revoked' if self.revoked_at else 'live'})"


class ChunkSketch(models.Model):
    """What each sentence of a read paper's chunks can score, kept from when the chunks got
    their words (chat.retrieval.sentence_sketch): the best-chunk stage bounds a chunk's
    sentences with it instead of analysing the chunk. Not user data: one per read paper."""

    paper = models.OneToOneField(
        "papers.Paper", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    # sentence_sketch.SIGNATURE of the code that made it: another code's sketch is not used.
    signature = models.CharField(max_length=16)
    # sentence_sketch.pack: each chunk's span, text check and sentences' filters.
    data = models.BinaryField()
    made_at = models.DateTimeField()

    def __str__(self):
        return f"sketch of {self.paper_id} ({self.signature})"

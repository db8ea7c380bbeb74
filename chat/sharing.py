"""Frozen, read-only links to a thread (chat.models.ThreadShare), made and revoked by its owner.

The snapshot holds what the thread page showed when the link was made: each answer's question,
text, status, unsupported-sentence spans and its source cards, labelled with the thread's
reference numbers (chat.references) and naming the paper version read. The public page renders
it with the same sanitising Markdown renderer as the thread page.
"""

import secrets

from django.utils import timezone

from chat.models import Message, Thread, ThreadShare
from chat.references import thread_labels


def snapshot_of(thread: Thread) -> dict:
    rows = list(thread.messages.order_by("created_at"))
    answers = [m for m in rows if m.role == Message.Role.ASSISTANT]
    labelled = dict(zip(answers, thread_labels(m.sources for m in answers), strict=True))
    exchanges, question = [], ""
    for message in rows:
        if message.role == Message.Role.USER:
            question = message.content
        elif message.status != Message.Status.STREAMING:  # an answer still being written waits
            exchanges.append({
                "id": str(message.pk), "question": question, "content": message.content,
                "status": message.status, "sources": labelled[message],
                "unsupported": message.unsupported or [],
            })
    return {"title": str(thread), "exchanges": exchanges}


def create_share(thread: Thread) -> ThreadShare:
    return ThreadShare.objects.create(
        thread=thread, token=secrets.token_urlsafe(24), snapshot=snapshot_of(thread)
    )


def revoke(share: ThreadShare) -> None:
    if share.revoked_at is None:
        share.revoked_at = timezone.now()
        share.save(update_fields=["revoked_at"])


def live_share(token: str) -> ThreadShare | None:
    return ThreadShare.objects.filter(token=token, revoked_at__isnull=True).first()

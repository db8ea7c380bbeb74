"""request_fulltext(paper): read a paper's full text soon, through the job queue (on demand:
"Ask about this paper", a question about a paper whose text is missing, the admin's action).

Idempotent: a paper already read at its current version, or already queued or being read, is
not queued again; a failed one is queued again (the user asked anew).
"""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from papers.jobs import enqueue_fulltext
from papers.models import FullText, Paper

# A request still "queued" after this long lost its task (a worker restarted): queue it again.
STALE_QUEUED = timedelta(hours=1)


def request_fulltext(paper: Paper) -> FullText:
    with transaction.atomic():
        fulltext, created = FullText.objects.select_for_update().get_or_create(
            paper=paper, defaults={"version": paper.version, "status": FullText.Status.QUEUED}
        )
        if not created:
            if fulltext.status == FullText.Status.OK and fulltext.version >= paper.version:
                return fulltext
            in_hand = fulltext.status in (FullText.Status.QUEUED, FullText.Status.FETCHING)
            if in_hand and fulltext.updated_at > timezone.now() - STALE_QUEUED:
                return fulltext
            fulltext.status = FullText.Status.QUEUED
            fulltext.reason = ""
            fulltext.requested_at = timezone.now()
            fulltext.save(update_fields=["status", "reason", "requested_at", "updated_at"])
        transaction.on_commit(lambda: enqueue_fulltext(paper.pk))
    return fulltext

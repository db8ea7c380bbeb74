"""The watch digest: one e-mail a day per user listing the followed threads that got a "New
since you asked" update, for users who opted in (accounts.Preferences.watch_digest), and only
when e-mail is configured (a backend other than the console's)."""

from collections import defaultdict
from collections.abc import Iterable

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from accounts.models import Preferences
from chat.models import Thread

CONSOLE = "django.core.mail.backends.console.EmailBackend"


def email_configured() -> bool:
    return bool(settings.EMAIL_BACKEND) and settings.EMAIL_BACKEND != CONSOLE


def site_url(path: str) -> str:
    return settings.SITE_URL.rstrip("/") + path


def send_digests(threads: Iterable[Thread]) -> int:
    """Mail each opted-in owner of `threads` once today; returns how many e-mails were sent."""
    if not email_configured():
        return 0
    by_owner: dict = defaultdict(list)
    for thread in threads:
        by_owner[thread.owner].append(thread)
    today = timezone.now().date()
    sent = 0
    for owner, updated in by_owner.items():
        if not owner.email:
            continue
        with transaction.atomic():
            prefs = Preferences.objects.select_for_update().filter(user=owner).first()
            if prefs is None or not prefs.watch_digest or prefs.digest_sent_on == today:
                continue
            send_mail(subject(updated), body(updated), None, [owner.email])
            prefs.digest_sent_on = today
            prefs.save(update_fields=["digest_sent_on"])
            sent += 1
    return sent


def subject(threads: list[Thread]) -> str:
    count = len(threads)
    return f"New since you asked: {count} followed thread{'s' if count != 1 else ''} updated"


def body(threads: list[Thread]) -> str:
    lines = ["New papers arrived for questions you follow on Flatuniverse:", ""]
    for thread in threads:
        update = thread.messages.order_by("-created_at").first()
        lines.append(f"* {thread} ({site_url(reverse('chat:thread', args=[thread.pk]))})")
        for source in (update.sources if update else []):
            lines.append(f"  [{source['number']}] {source['title']} — arXiv:{source['arxiv_id']}")
        lines.append("")
    lines.append(f"Stop these e-mails: {site_url(reverse('preferences'))}")
    return "\n".join(lines)

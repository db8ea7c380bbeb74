"""The thread list names each thread distinctly and dates it: two chats titled alike are told
apart by the day and time they were started, and every entry has a <time>."""

import re

import pytest
from django.utils import timezone

from chat.models import Thread

pytestmark = pytest.mark.django_db


def _entries(html):
    listing = html[html.index('class="thread-list'):]
    listing = listing[: listing.index("</ul>")]
    return re.findall(r'<a href="/chat/[^"]+/"[^>]*>([^<]+)</a>.*?<time[^>]*datetime="([^"]+)"',
                      listing, re.S)


def test_threads_titled_alike_are_told_apart_and_dated(owner_client, owner):
    first = Thread.objects.create(owner=owner, title="Diffusion models")
    second = Thread.objects.create(owner=owner, title="Diffusion models")
    other = Thread.objects.create(owner=owner, title="Graph neural networks")
    Thread.objects.filter(pk=first.pk).update(created_at="2026-05-17T09:05:00Z")
    Thread.objects.filter(pk=second.pk).update(created_at="2026-05-18T14:30:00Z")

    for url in ("/chat/", f"/chat/{other.pk}/"):
        entries = _entries(owner_client.get(url).content.decode())
        labels = [label for label, _ in entries]
        assert len(entries) == 3, (url, entries)
        assert len(set(labels)) == 3, (url, labels)
        assert "Graph neural networks" in labels  # a unique title is left alone
        started = {
            timezone.localtime(Thread.objects.get(pk=t.pk).created_at).strftime("%b %-d, %Y %H:%M")
            for t in (first, second)
        }
        assert {f"Diffusion models · {day}" for day in started} <= set(labels), labels
        for _, when in entries:
            assert re.match(r"\d{4}-\d\d-\d\dT", when), when

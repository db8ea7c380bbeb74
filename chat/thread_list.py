"""The thread list's entries: each thread's title, made distinct where several share one.

Researchers ask the same question again (a new window, another day), so titles repeat; a list
of identical links is useless. Threads whose shown titles collide get the day and time they were
started after the title ("Diffusion models · May 17, 14:03"), and the list also shows each
thread's last activity in a <time> element (templates).
"""

from collections import Counter
from dataclasses import dataclass

from django.template.defaultfilters import truncatechars
from django.utils import timezone

from chat.models import Thread


@dataclass(frozen=True)
class ListedThread:
    thread: Thread
    label: str  # the title as listed, distinct from its neighbours'


def _started(thread: Thread) -> str:
    return timezone.localtime(thread.created_at).strftime("%b %-d, %Y %H:%M")


def listed_threads(threads, title_chars: int = 0) -> list[ListedThread]:
    """`threads` with their listed titles, cut to `title_chars` (0: whole) before comparing."""
    threads = list(threads)
    shown = [truncatechars(str(t), title_chars) if title_chars else str(t) for t in threads]
    counts = Counter(title.casefold() for title in shown)
    listed = []
    for thread, title in zip(threads, shown, strict=True):
        if counts[title.casefold()] > 1:
            title = f"{title} · {_started(thread)}"
        listed.append(ListedThread(thread, title))
    return listed

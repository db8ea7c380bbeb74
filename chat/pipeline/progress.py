"""What an answer says while the user waits: the `stage` events' lines (chat.events.stage).

"Understanding the question…", "Searching 57,438 papers…", "Reading 8 papers…", "Writing…":
the pipeline (chat.pipeline.answer) yields one as it enters each step. The catalogue's size is
counted at most once a minute per process: an exact count of 57k rows costs a few milliseconds,
and a figure a minute old is as true to a reader as a fresh one.
"""

import time

from asgiref.sync import sync_to_async

from chat import events
from papers.models import Paper

CATALOGUE_COUNT_TTL = 60.0  # seconds a catalogue count is reused

_count: tuple[float, int] | None = None  # (monotonic time, visible papers)


def _visible_papers() -> int:
    return Paper.objects.visible().count()


async def catalogue_size() -> int:
    """How many papers a search looks through (the visible ones), cached for a minute."""
    global _count
    now = time.monotonic()
    if _count is None or now - _count[0] > CATALOGUE_COUNT_TTL:
        _count = (now, await sync_to_async(_visible_papers)())
    return _count[1]


def forget_catalogue_size() -> None:
    """Count again next time (tests, which build a catalogue each)."""
    global _count
    _count = None


def understanding() -> dict:
    return events.stage("understanding", "Understanding the question…")


async def searching() -> dict:
    size = await catalogue_size()
    return events.stage("searching", f"Searching {size:,} paper{'' if size == 1 else 's'}…")


def reading(count: int) -> dict:
    if not count:
        return events.stage("reading", "No papers to read…")
    return events.stage("reading", f"Reading {count} paper{'' if count == 1 else 's'}…")


def writing() -> dict:
    return events.stage("writing", "Writing…")

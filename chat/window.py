"""The understood time window of a question as a short label ("since 2023-01-01"): the one
wording of every window chip (chat page, socket events, search page) and of the search's reasons.

Reads `start` and `end` (inclusive, either may be missing): ISO text, dates or datetimes.
"""

from datetime import date

from django.utils import timezone


def _day(value) -> str:
    return str(value or "")[:10]


def window_label(analysis: dict | None, today: date | None = None) -> str:
    """'' when the question had no time window; else e.g. 'since 2023-01-01' or 'a → b'."""
    analysis = analysis or {}
    start, end = _day(analysis.get("start")), _day(analysis.get("end"))
    today = today or timezone.now().date()
    if end and end >= today.isoformat():  # a window reaching today is open-ended
        end = ""
    if start and end:
        return start if start == end else f"{start} → {end}"
    if start:
        return f"since {start}"
    if end:
        return f"until {end}"
    return ""

"""The "since last year" family of relative windows, at ordinary days, year ends and leap days,
and the chip label each one gets.

"since last year" on 2026-11-23 means 2025-01-01 up to today, not calendar 2025 only; "last year"
alone stays calendar 2025; "this past year" and "over the last 18 months" roll back from today.
"""

from datetime import UTC, date, datetime

import pytest

from chat.understanding.analysis import analyse
from chat.window import window_label

ISSUE_DAY = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)  # a Monday
LEAP_DAY = datetime(2024, 2, 29, 9, 30, tzinfo=UTC)  # a Thursday
NEW_YEAR = datetime(2025, 1, 1, 0, 0, 1, tzinfo=UTC)  # a Wednesday
YEAR_END = datetime(2026, 12, 31, 23, 59, tzinfo=UTC)  # a Thursday


def case(text, now, start, end, label, confident=True):
    return pytest.param(text, now, start, end, label, confident, id=f"{now:%Y-%m-%d}:{text}")


# (question, now, first day, last day, chip label): the last day is today for open windows.
FAMILY = [
    case("diffusion language models since last year", ISSUE_DAY, "2025-01-01", "2026-11-23", "since 2025-01-01"),
    case("diffusion language models last year", ISSUE_DAY, "2025-01-01", "2025-12-31", "2025-01-01 → 2025-12-31"),
    case("since last month", ISSUE_DAY, "2026-10-01", "2026-11-23", "since 2026-10-01"),
    case("since last week", ISSUE_DAY, "2026-11-16", "2026-11-23", "since 2026-11-16"),
    case("since last quarter", ISSUE_DAY, "2026-07-01", "2026-11-23", "since 2026-07-01"),
    case("since the last year", ISSUE_DAY, "2025-11-23", "2026-11-23", "since 2025-11-23"),
    case("this past year", ISSUE_DAY, "2025-11-23", "2026-11-23", "since 2025-11-23"),
    case("over the last 18 months", ISSUE_DAY, "2025-05-23", "2026-11-23", "since 2025-05-23"),
    case("in the past decade", ISSUE_DAY, "2016-11-23", "2026-11-23", "since 2016-11-23"),
    case("last spring", ISSUE_DAY, "2026-03-01", "2026-05-31", "2026-03-01 → 2026-05-31", False),
    case("since last spring", ISSUE_DAY, "2026-03-01", "2026-11-23", "since 2026-03-01", False),
    case("last autumn", ISSUE_DAY, "2025-09-01", "2025-11-30", "2025-09-01 → 2025-11-30", False),
    case("since last winter", ISSUE_DAY, "2025-12-01", "2026-11-23", "since 2025-12-01", False),
    # leap day
    case("since last year", LEAP_DAY, "2023-01-01", "2024-02-29", "since 2023-01-01"),
    case("since last month", LEAP_DAY, "2024-01-01", "2024-02-29", "since 2024-01-01"),
    case("since last week", LEAP_DAY, "2024-02-19", "2024-02-29", "since 2024-02-19"),
    case("this past year", LEAP_DAY, "2023-02-28", "2024-02-29", "since 2023-02-28"),
    case("over the last 18 months", LEAP_DAY, "2022-08-29", "2024-02-29", "since 2022-08-29"),
    case("in the past decade", LEAP_DAY, "2014-02-28", "2024-02-29", "since 2014-02-28"),
    case("last winter", LEAP_DAY, "2022-12-01", "2023-02-28", "2022-12-01 → 2023-02-28", False),
    # new year's day
    case("since last year", NEW_YEAR, "2024-01-01", "2025-01-01", "since 2024-01-01"),
    case("since last month", NEW_YEAR, "2024-12-01", "2025-01-01", "since 2024-12-01"),
    case("since last week", NEW_YEAR, "2024-12-23", "2025-01-01", "since 2024-12-23"),
    case("last year", NEW_YEAR, "2024-01-01", "2024-12-31", "2024-01-01 → 2024-12-31"),
    case("this past year", NEW_YEAR, "2024-01-01", "2025-01-01", "since 2024-01-01"),
    # year end
    case("since last year", YEAR_END, "2025-01-01", "2026-12-31", "since 2025-01-01"),
    case("since last month", YEAR_END, "2026-11-01", "2026-12-31", "since 2026-11-01"),
    case("over the last 18 months", YEAR_END, "2025-06-30", "2026-12-31", "since 2025-06-30"),
    case("last summer", YEAR_END, "2026-06-01", "2026-08-31", "2026-06-01 → 2026-08-31", False),
]  # fmt: skip


@pytest.mark.parametrize(("text", "now", "start", "end", "label", "confident"), FAMILY)
def test_relative_windows(text, now, start, end, label, confident):
    analysis = analyse(text, now)
    assert analysis.start.date() == date.fromisoformat(start), analysis.phrase
    assert analysis.end.date() == date.fromisoformat(end), analysis.phrase
    assert analysis.confident is confident
    assert window_label(analysis.to_dict(), now.date()) == label


def test_since_last_year_keeps_the_topic_and_cuts_the_phrase():
    analysis = analyse("diffusion language models since last year", ISSUE_DAY)
    assert analysis.query.strip() == "diffusion language models"
    assert analysis.recency_weight > 0  # an open window to today orders gently by date

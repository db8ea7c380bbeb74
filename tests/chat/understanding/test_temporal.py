"""The date windows, recency weights and years that questions are understood to ask for.

Every case runs with a fixed `now`: mostly Saturday 2026-11-21 12:00 UTC, and the boundary days
2024-02-29 (leap day), 2025-12-31 (year end) and 2026-01-01 (new year).
"""

from datetime import UTC, date, datetime, time

import pytest

from chat.understanding.analysis import analyse
from chat.understanding.temporal import (
    OPEN_TO_PRESENT_WEIGHT,
    RECENCY_WEIGHT,
    RELATIVE_WINDOW_WEIGHT,
    STRONG_RECENCY_WEIGHT,
    WEAK_RECENCY_WEIGHT,
    WHATS_NEW_WEIGHT,
    shift_months,
)

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)  # a Saturday
LEAP_DAY = datetime(2024, 2, 29, 9, 30, tzinfo=UTC)  # a Thursday
YEAR_END = datetime(2025, 12, 31, 23, 59, tzinfo=UTC)  # a Wednesday
NEW_YEAR = datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC)  # a Thursday
REL = RELATIVE_WINDOW_WEIGHT
OPEN = OPEN_TO_PRESENT_WEIGHT


def d(text: str | None) -> date | None:
    return date.fromisoformat(text) if text else None


def case(text, start, end, *, weight=0.0, year=None, confident=True, now=NOW):
    return pytest.param(
        text, now, d(start), d(end), weight, year, confident, id=f"{now:%Y-%m-%d}:{text}"
    )


WINDOWS = [
    # --- years --------------------------------------------------------------------------------
    case("diffusion models in 2021", "2021-01-01", "2021-12-31", year=2021),
    case("2021 papers on GANs", "2021-01-01", "2021-12-31", year=2021),
    case("papers published in 2019 about BERT", "2019-01-01", "2019-12-31", year=2019),
    case("quantum error correction (2021)", "2021-01-01", "2021-12-31", year=2021),
    case("in the year 2021", "2021-01-01", "2021-12-31", year=2021),
    case("diffusion models 2022", "2022-01-01", "2022-12-31", year=2022),
    case("2021's best language models", "2021-01-01", "2021-12-31", year=2021),
    case("papers from 2027 on fusion", "2027-01-01", "2027-12-31", year=2027),  # next year: fine
    case("papers from 2026", "2026-01-01", "2026-12-31", year=2026, now=YEAR_END),
    case("around 2020", "2019-01-01", "2021-12-31", confident=False),
    case("ICLR 2021 best paper award", "2021-01-01", "2021-12-31", year=2021, confident=False),
    case("Vaswani et al. 2017 attention", "2017-01-01", "2017-12-31", year=2017),
    # --- ranges -------------------------------------------------------------------------------
    case("graph networks 2018-2020", "2018-01-01", "2020-12-31"),
    case("graph networks 2015–2019", "2015-01-01", "2019-12-31"),
    case("graph networks 2015 — 2019", "2015-01-01", "2019-12-31"),
    case("between 2018 and 2020", "2018-01-01", "2020-12-31"),
    case("from 2018 to 2020", "2018-01-01", "2020-12-31"),
    case("2018 through 2020", "2018-01-01", "2020-12-31"),
    case("2018-20 surveys", "2018-01-01", "2020-12-31"),
    case("published between 2009 and 2011", "2009-01-01", "2011-12-31"),
    case("2019 to present", "2019-01-01", "2026-11-21", weight=OPEN),
    case("from 2019 to now", "2019-01-01", "2026-11-21", weight=OPEN),
    case("2020-present", "2020-01-01", "2026-11-21", weight=OPEN),
    case("from March 2023 to June 2024", "2023-03-01", "2024-06-30"),
    case("between March and June 2024", "2024-03-01", "2024-06-30", year=2024),
    case("Jan–Mar 2025", "2025-01-01", "2025-03-31", year=2025),
    case("2023-05-01 to 2023-06-15", "2023-05-01", "2023-06-15", year=2023),
    case("from 2020 to 2018", "2018-01-01", "2020-12-31", confident=False),
    case("2019 and 2020", "2019-01-01", "2020-12-31"),
    case("2015 and 2020", "2015-01-01", "2020-12-31", confident=False),
    # --- decades ------------------------------------------------------------------------------
    case("neural networks in the 2010s", "2010-01-01", "2019-12-31"),
    case("2010s neural networks", "2010-01-01", "2019-12-31"),
    case("the 90s", "1990-01-01", "1999-12-31"),
    case("the '90s", "1990-01-01", "1999-12-31"),
    case("the nineties", "1990-01-01", "1999-12-31"),
    case("the 20s", "2020-01-01", "2029-12-31"),
    case("late 2010s", "2017-01-01", "2019-12-31"),
    case("mid-90s", "1994-01-01", "1996-12-31"),
    case("early 2000s", "2000-01-01", "2003-12-31"),
    # --- months, days, quarters, halves ------------------------------------------------------
    case("March 2024", "2024-03-01", "2024-03-31", year=2024),
    case("Mar 2024", "2024-03-01", "2024-03-31", year=2024),
    case("Mar. 2024", "2024-03-01", "2024-03-31", year=2024),
    case("in March of 2024", "2024-03-01", "2024-03-31", year=2024),
    case("2024-03", "2024-03-01", "2024-03-31", year=2024),
    case("Feb 2024", "2024-02-01", "2024-02-29", year=2024),
    case("February 2023", "2023-02-01", "2023-02-28", year=2023),
    case("2010-12", "2010-12-01", "2010-12-31", year=2010, confident=False),
    case("2023-05-01", "2023-05-01", "2023-05-01", year=2023),
    case("March 5, 2024", "2024-03-05", "2024-03-05", year=2024),
    case("5th March 2024", "2024-03-05", "2024-03-05", year=2024),
    case("Q1 2025", "2025-01-01", "2025-03-31", year=2025),
    case("2025 Q3", "2025-07-01", "2025-09-30", year=2025),
    case("Q4 of 2024", "2024-10-01", "2024-12-31", year=2024),
    case("the first quarter of 2025", "2025-01-01", "2025-03-31", year=2025),
    case("last quarter of 2023", "2023-10-01", "2023-12-31", year=2023),
    case("H2 2022", "2022-07-01", "2022-12-31", year=2022),
    case("H1 2023", "2023-01-01", "2023-06-30", year=2023),
    case("first half of 2023", "2023-01-01", "2023-06-30", year=2023),
    case("the second half of 2022", "2022-07-01", "2022-12-31", year=2022),
    case("early 2023", "2023-01-01", "2023-04-30", year=2023),
    case("the end of 2022", "2022-10-01", "2022-12-31", year=2022),
    # --- rolling windows ----------------------------------------------------------------------
    case(
        "papers from the last 2 years on diffusion models", "2024-11-21", "2026-11-21", weight=REL
    ),
    case("last 6 months", "2026-05-21", "2026-11-21", weight=REL),
    case("past two years", "2024-11-21", "2026-11-21", weight=REL),
    case("past 12 months", "2025-11-21", "2026-11-21", weight=REL),
    case("last 90 days", "2026-08-23", "2026-11-21", weight=REL),
    case("last three months", "2026-08-21", "2026-11-21", weight=REL),
    case("the past twelve months", "2025-11-21", "2026-11-21", weight=REL),
    case("in the last twenty-four months", "2024-11-21", "2026-11-21", weight=REL),
    case("over the last couple of years", "2024-11-21", "2026-11-21", weight=REL),
    case("the past few years", "2023-11-21", "2026-11-21", weight=REL, confident=False),
    case("past week", "2026-11-14", "2026-11-21", weight=REL),
    case("last 2 weeks", "2026-11-07", "2026-11-21", weight=REL),
    case("within a year", "2025-11-21", "2026-11-21", weight=REL),
    case("last decade", "2016-11-21", "2026-11-21", weight=REL),
    case("past 18 months", "2025-05-21", "2026-11-21", weight=REL),
    case("the last year and a half", "2025-05-21", "2026-11-21", weight=REL),
    case("past half a year", "2026-05-21", "2026-11-21", weight=REL),
    case("in the last year", "2025-11-21", "2026-11-21", weight=REL),
    case("past year", "2025-11-21", "2026-11-21", weight=REL),
    case("this past year", "2025-11-21", "2026-11-21", weight=REL),
    case("over the last year", "2025-11-21", "2026-11-21", weight=REL),
    case("the last month", "2026-10-21", "2026-11-21", weight=REL),
    case("recent 5 years", "2021-11-21", "2026-11-21", weight=REL),
    case("past 3 yrs", "2023-11-21", "2026-11-21", weight=REL),
    case("last 6 mos", "2026-05-21", "2026-11-21", weight=REL),
    # --- calendar units -----------------------------------------------------------------------
    case("last year", "2025-01-01", "2025-12-31", year=2025),
    case("last year's papers on LLM agents", "2025-01-01", "2025-12-31", year=2025),
    case("papers from last year", "2025-01-01", "2025-12-31", year=2025),
    case("previous year", "2025-01-01", "2025-12-31", year=2025),
    case("this year", "2026-01-01", "2026-11-21", weight=REL, year=2026),
    case("so far this year", "2026-01-01", "2026-11-21", weight=REL, year=2026),
    case("year to date", "2026-01-01", "2026-11-21", weight=REL, year=2026),
    case("this month", "2026-11-01", "2026-11-21", weight=REL, year=2026),
    case("last month", "2026-10-01", "2026-10-31", year=2026),
    case("this week", "2026-11-16", "2026-11-21", weight=REL, year=2026),
    case("last week", "2026-11-09", "2026-11-15", year=2026),
    case("this quarter", "2026-10-01", "2026-11-21", weight=REL, year=2026),
    case("last quarter", "2026-07-01", "2026-09-30", year=2026),
    case("papers published today", "2026-11-21", "2026-11-21", weight=REL, year=2026),
    case("today's papers", "2026-11-21", "2026-11-21", weight=REL, year=2026),
    case("yesterday", "2026-11-20", "2026-11-20", year=2026),
    case("two years ago", "2024-01-01", "2024-12-31", year=2024, confident=False),
    case("a month ago", "2026-10-01", "2026-10-31", year=2026, confident=False),
    # --- open bounds --------------------------------------------------------------------------
    case("since 2023", "2023-01-01", "2026-11-21", weight=OPEN),
    case("after June 2021", "2021-07-01", "2026-11-21", weight=OPEN),
    case("before 2015", None, "2014-12-31"),
    case("pre-2020", None, "2019-12-31"),
    case("post-2019", "2020-01-01", "2026-11-21", weight=OPEN),
    case("up to 2022", None, "2022-12-31"),
    case("until 2022", None, "2022-12-31"),
    case("newer than 2021", "2022-01-01", "2026-11-21", weight=OPEN),
    case("older than 2010", None, "2009-12-31"),
    case("from 2018 onwards", "2018-01-01", "2026-11-21", weight=OPEN),
    case("2020 and later", "2020-01-01", "2026-11-21", weight=OPEN),
    case("2020+", "2020-01-01", "2026-11-21", weight=OPEN),
    case("2010 and earlier", None, "2010-12-31"),
    case("since 2023-05-01", "2023-05-01", "2026-11-21", weight=OPEN),
    case("since March 2024", "2024-03-01", "2026-11-21", weight=OPEN),
    case("after Q2 2025", "2025-07-01", "2026-11-21", weight=OPEN),
    case("before the 2010s", None, "2009-12-31"),
    case("since the 90s", "1990-01-01", "2026-11-21", weight=OPEN),
    case("starting in 2020", "2020-01-01", "2026-11-21", weight=OPEN),
    case("older than 2 years", None, "2024-11-20"),
    case("newer than 6 months", "2026-05-21", "2026-11-21", weight=REL),
    case("since 2027", "2027-01-01", None, weight=OPEN),  # starts after today: no end
    case("since 2020 but before 2023", "2020-01-01", "2022-12-31", weight=OPEN),
    case(
        "latest papers from 2021",
        "2021-01-01",
        "2021-12-31",
        weight=STRONG_RECENCY_WEIGHT,
        year=2021,
    ),
    # --- leap day: 2024-02-29 -----------------------------------------------------------------
    case("last 12 months", "2023-02-28", "2024-02-29", weight=REL, now=LEAP_DAY),
    case("past year", "2023-02-28", "2024-02-29", weight=REL, now=LEAP_DAY),
    case("last 4 years", "2020-02-29", "2024-02-29", weight=REL, now=LEAP_DAY),
    case("last 6 months", "2023-08-29", "2024-02-29", weight=REL, now=LEAP_DAY),
    case("last 30 days", "2024-01-30", "2024-02-29", weight=REL, now=LEAP_DAY),
    case("last year", "2023-01-01", "2023-12-31", year=2023, now=LEAP_DAY),
    case("this month", "2024-02-01", "2024-02-29", weight=REL, year=2024, now=LEAP_DAY),
    case("last month", "2024-01-01", "2024-01-31", year=2024, now=LEAP_DAY),
    case("this week", "2024-02-26", "2024-02-29", weight=REL, year=2024, now=LEAP_DAY),
    case("last week", "2024-02-19", "2024-02-25", year=2024, now=LEAP_DAY),
    case("last quarter", "2023-10-01", "2023-12-31", year=2023, now=LEAP_DAY),
    case("yesterday", "2024-02-28", "2024-02-28", year=2024, now=LEAP_DAY),
    case("today's papers", "2024-02-29", "2024-02-29", weight=REL, year=2024, now=LEAP_DAY),
    # --- year end: 2025-12-31 -----------------------------------------------------------------
    case("past year", "2024-12-31", "2025-12-31", weight=REL, now=YEAR_END),
    case("last year", "2024-01-01", "2024-12-31", year=2024, now=YEAR_END),
    case("this year", "2025-01-01", "2025-12-31", weight=REL, year=2025, now=YEAR_END),
    case("last month", "2025-11-01", "2025-11-30", year=2025, now=YEAR_END),
    case("last 1 month", "2025-11-30", "2025-12-31", weight=REL, now=YEAR_END),
    case("last 2 months", "2025-10-31", "2025-12-31", weight=REL, now=YEAR_END),
    case("this week", "2025-12-29", "2025-12-31", weight=REL, year=2025, now=YEAR_END),
    case("last week", "2025-12-22", "2025-12-28", year=2025, now=YEAR_END),
    case("this quarter", "2025-10-01", "2025-12-31", weight=REL, year=2025, now=YEAR_END),
    # --- new year: 2026-01-01 -----------------------------------------------------------------
    case("yesterday", "2025-12-31", "2025-12-31", year=2025, now=NEW_YEAR),
    case("this week", "2025-12-29", "2026-01-01", weight=REL, now=NEW_YEAR),  # spans two years
    case("last month", "2025-12-01", "2025-12-31", year=2025, now=NEW_YEAR),
    case("last quarter", "2025-10-01", "2025-12-31", year=2025, now=NEW_YEAR),
    case("this year", "2026-01-01", "2026-01-01", weight=REL, year=2026, now=NEW_YEAR),
]


@pytest.mark.parametrize("text, now, start, end, weight, year, confident", WINDOWS)
def test_window(text, now, start, end, weight, year, confident):
    analysis = analyse(text, now)
    assert analysis.is_temporal
    assert (_day(analysis.start), _day(analysis.end)) == (start, end)
    if analysis.start:
        assert analysis.start.tzinfo is UTC and analysis.start.timetz() == time(0, tzinfo=UTC)
    if analysis.end:
        assert analysis.end.time() == time.max and analysis.end.tzinfo is UTC
    assert analysis.recency_weight == weight
    assert analysis.year == year
    assert analysis.confident is confident
    assert analysis.phrase


def _day(moment: datetime | None) -> date | None:
    return moment.date() if moment else None


RECENCY = [
    ("latest diffusion models", STRONG_RECENCY_WEIGHT),
    ("the newest work on RLHF", STRONG_RECENCY_WEIGHT),
    ("most recent results in quantum error correction", STRONG_RECENCY_WEIGHT),
    ("state of the art object detection", STRONG_RECENCY_WEIGHT),
    ("state-of-the-art speech recognition", STRONG_RECENCY_WEIGHT),
    ("SOTA on ImageNet", STRONG_RECENCY_WEIGHT),
    ("cutting-edge protein folding", STRONG_RECENCY_WEIGHT),
    ("recent advances in retrieval augmented generation", RECENCY_WEIGHT),
    ("recently published work on mixture of experts", RECENCY_WEIGHT),
    ("progress in recent years on topological qubits", RECENCY_WEIGHT),
    ("current methods for uncertainty estimation", RECENCY_WEIGHT),
    ("quantum computing today", RECENCY_WEIGHT),  # "nowadays", not a one-day window
    ("what's new in reinforcement learning", WHATS_NEW_WEIGHT),
    ("new papers on GANs", WEAK_RECENCY_WEIGHT),
]


@pytest.mark.parametrize("text, weight", RECENCY)
def test_recency_words_set_a_weight_without_a_window(text, weight):
    analysis = analyse(text, NOW)
    assert analysis.is_temporal
    assert analysis.recency_weight == weight
    assert (analysis.start, analysis.end, analysis.year) == (None, None, None)


NOT_DATES = [
    "GPT-4 evaluation on math benchmarks",
    "top 10 papers on reinforcement learning",
    "ResNet-50 pruning",
    "training with 1000 layers",
    "COVID-19 epidemiology models",
    "3D reconstruction from a single image",
    "BERT 2",
    "2000 samples are enough for fine-tuning",
    "1950 images of spiral galaxies",
    "the top 2000 cited papers",
    "learning rate 0.001 warmup",
    "papers from 2031",  # more than a year ahead: not a year
    "Word2Vec embeddings",
    "new physics beyond the standard model",
    "electric current in graphene",
    "current density in superconductors",
    "SemEval-2017 task 4 sentiment",
    "CVPR2021 workshop",
    "a 2048 token context window",
    "graph neural networks for molecules",
]


@pytest.mark.parametrize("text", NOT_DATES)
def test_things_that_are_not_dates(text):
    analysis = analyse(text, NOW)
    assert not analysis.is_temporal, analysis.phrase
    assert (analysis.start, analysis.end, analysis.recency_weight) == (None, None, 0.0)
    assert analysis.phrase == ""


UNSURE = [
    "what happened in NLP since ChatGPT",
    "vision models before the pandemic",
    "papers from three years ago on GANs",
    "what was published last summer on LLM agents",
    "progress in the deep learning era",
    "the next few years of quantum hardware",
    "papers since March on protein design",
    "results from summer 2023",
]


@pytest.mark.parametrize("text", UNSURE)
def test_time_words_the_rules_cannot_place_are_not_confident(text):
    assert analyse(text, NOW).confident is False


def test_arxiv_ids_are_never_read_as_years():
    # 2012.12345 is a December 2020 paper, not the year 2012.
    analysis = analyse("papers like 2012.12345", NOW)
    assert analysis.arxiv_id == "2012.12345"
    assert not analysis.is_temporal


def test_years_between_1900_and_next_year_only():
    assert analyse("in 1899", NOW).start is None
    assert analyse("in 1900", NOW).year == 1900
    assert analyse("in 2027", NOW).year == 2027
    assert analyse("in 2028", NOW).start is None


def test_month_shift_clamps_to_the_end_of_the_month():
    assert shift_months(date(2024, 2, 29), -12) == date(2023, 2, 28)
    assert shift_months(date(2024, 2, 29), -48) == date(2020, 2, 29)
    assert shift_months(date(2025, 3, 31), -1) == date(2025, 2, 28)
    assert shift_months(date(2025, 1, 15), -1) == date(2024, 12, 15)
    assert shift_months(date(2025, 12, 31), 2) == date(2026, 2, 28)


def test_a_question_without_time_is_not_temporal_and_confident():
    analysis = analyse("contrastive learning for molecules", NOW)
    assert not analysis.is_temporal
    assert analysis.confident
    assert analysis.recency_weight == 0.0


def test_several_phrases_are_all_reported():
    analysis = analyse("latest papers since 2023", NOW)
    assert analysis.phrase == "latest; since 2023"
    assert analysis.recency_weight == STRONG_RECENCY_WEIGHT
    assert _day(analysis.start) == date(2023, 1, 1)


def test_now_must_be_timezone_aware():
    with pytest.raises(ValueError, match="timezone-aware"):
        analyse("since 2023", datetime(2026, 11, 21, 12, 0))


def test_now_in_another_timezone_is_read_in_utc():
    from datetime import timedelta, timezone

    tokyo = timezone(timedelta(hours=9))
    # 2026-11-22 02:00 in Tokyo is still 2026-11-21 in UTC.
    analysis = analyse("yesterday", datetime(2026, 11, 22, 2, 0, tzinfo=tokyo))
    assert _day(analysis.start) == date(2026, 11, 20)

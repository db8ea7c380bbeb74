"""Temporal analysis of a search question by rules: which days it asks for, how much it wants recency.

Pure and fast (precompiled regular expressions, no I/O, well under a millisecond per question).
`find_temporal(text, today)` returns the window, the recency weight, the matched phrases and the
character spans to cut from the text; `chat.understanding.analysis` turns that into a QueryAnalysis.

Windows are whole days, inclusive: a start is that day at 00:00, an end is that day at
23:59:59.999999 (UTC). A window that runs "up to now" ends at the end of today.

What is understood, and the choices made where English is ambiguous:

- Years: "in 2021", "2021 papers", "from 2021", "(2021)". A number is a year only if it lies in
  1900..today.year+1 and stands alone: "GPT-4", "ResNet-50", "COVID-19", "top 10", "1000 layers",
  "BERT 2", arXiv ids like 2401.12345 and counts such as "2000 samples" are not dates. A year with
  no preposition in the middle of a question ("ICLR 2021 best paper") is still read as a year, but
  not confidently. "around 2020" is 2019..2021, not confidently.
- Ranges: "2018-2020", "2015–2019", "2018-20", "between 2018 and 2020", "from 2018 to 2020",
  "March 2023 to June 2024", "between March and June 2024". A range ending in "present", "now",
  "today" or "date" runs to today.
- Decades: "the 2010s", "2010s", "the 90s", "the '90s", "the nineties"; "early/mid/late" take
  years 0-3, 4-6 and 7-9 of the decade. A two-digit decade is the latest one not in the future.
- Months, days, quarters, halves: "March 2024", "Mar 2024", "2024-03", "March 5, 2024",
  "2024-03-05", "Q1 2025", "2025 Q1", "first quarter of 2025", "H2 2022", "first half of 2023";
  "early/mid/late 2023" are Jan-Apr, May-Aug, Sep-Dec; "beginning of" is Q1, "end of" is Q4.
  "2010-12" is December 2010 but could be a range 2010-2012, so it is not confident.
- Rolling windows ("last 6 months", "past two years", "past 12 months", "last 90 days",
  "the last year", "the past week", "within a year", "last decade"): from the same calendar day N
  units before today (the day of month clamped: 12 months before 2024-02-29 is 2023-02-28) to the
  end of today. "few" counts as 3 and "several" as 5, not confidently; "couple" is 2.
- "last year" and friends: a rolling window whenever the wording says so ("past year", "this past
  year", "the last year", "in/over/during/within the last year"); the bare "last year",
  "last year's", "previous year" mean the previous calendar year. The same goes for week (a
  Monday-to-Sunday week), month and quarter. "last decade" is always the past ten years.
  "since last year" (likewise week, month, quarter) starts at the start of that previous calendar
  unit and runs to today: on 2026-11-23 it is 2025-01-01 to today, not 2025 alone.
- Seasons: "last spring", "this summer", "since last winter" are meteorological seasons of the
  northern hemisphere (spring March-May, winter December-February); "last" is the latest one
  already over. Not confident: the hemisphere is a guess.
- Calendar windows to now: "today", "this week" (from Monday), "this month", "this quarter",
  "this year", "so far this year", "year to date", "this decade"; "yesterday" is one day.
- "N units ago": that calendar day, week, month or year ("two years ago" on 2026-11-21 is 2024),
  not confidently, since people also mean "around then".
- Open bounds: "since X" and "from X onwards", "X and later", "X+", "starting in X" start at the
  start of X; "after X", "post-X", "newer than X" start the day after X ends; "before X",
  "pre-X", "older than X", "earlier than X" end the day before X starts; "up to X", "until X",
  "through X", "X and earlier" end at the end of X (inclusive: researchers saying "up to 2022" want
  2022). "older than 2 years" and "newer than 6 months" are relative bounds. X is any of the
  forms above, including ISO dates ("since 2023-05-01").
- Several phrases combine: an open bound intersects the other window ("since 2020 ... before
  2023"); closed windows merge into the span covering them, confidently only if they touch or
  overlap ("2019 and 2020").
- Recency words set a weight without a window: 0.8 for "latest", "newest", "most recent",
  "state of the art", "SOTA", "cutting-edge", "up to date", "just published"; 0.6 for "recent",
  "recently", "in recent years", "lately", "nowadays", "current" (before words like "state",
  "research", "methods"), "currently", "emerging", "trending"; 0.5 for "what's new"; 0.3 for "new"
  before words like "papers", "methods", "results" ("new physics" is a topic, not a time).
- Weights of windows: a relative window reaching today ("last 6 months", "this year", "today")
  gets 0.4, an open bound reaching today ("since 2023", "2019 to present") 0.3: the window already
  excludes old papers, so recency only orders inside it, gently. Windows wholly in the past
  (years, ranges, months, decades, "last year", "before 2015") get 0. With several phrases the
  highest weight wins.
- `year` is the single calendar year of a window named by the calendar ("in 2021", "March 2024",
  "Q1 2025", "last year", "this month", "yesterday"); None for ranges, open bounds, decades and
  rolling windows ("past year").
- "today" is a one-day window when it says so ("published today", "today's papers"); alone
  ("quantum computing today") it means nowadays: recency 0.6, no window.
- Not confident (so an LLM may look again): the cases marked above, and time words the rules saw
  but could not place ("since ChatGPT", "before the pandemic", "next summer", "since March"
  without a year, "summer 2023", "the next few years").
"""

from __future__ import annotations

import bisect
import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

STRONG_RECENCY_WEIGHT = 0.8
RECENCY_WEIGHT = 0.6
WHATS_NEW_WEIGHT = 0.5
RELATIVE_WINDOW_WEIGHT = 0.4
OPEN_TO_PRESENT_WEIGHT = 0.3
WEAK_RECENCY_WEIGHT = 0.3

FIRST_YEAR = 1900  # earlier four-digit numbers are counts, never years
MAX_RELATIVE_YEARS = 200  # "last 5000 years" is not about arXiv

# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Period:
    """A named stretch of calendar days: a year, a month, a quarter, a decade, one day."""

    start: date
    end: date
    year: int | None = None
    confident: bool = True


@dataclass(frozen=True, slots=True)
class TemporalMatch:
    """One understood phrase. `start`/`end` None mean open; `has_window` False: recency only."""

    span: tuple[int, int]  # characters to cut from the text: the phrase and its preposition
    phrase: str
    has_window: bool
    start: date | None = None
    end: date | None = None
    year: int | None = None
    weight: float = 0.0
    confident: bool = True
    cut: bool = True  # False: a recency word used as a noun ("the latest in X") stays in the text


@dataclass(frozen=True, slots=True)
class TemporalResult:
    start: datetime | None
    end: datetime | None
    year: int | None
    recency_weight: float
    phrase: str
    spans: tuple[tuple[int, int], ...]  # to cut from the text, in order
    confident: bool
    matches: tuple[TemporalMatch, ...] = ()

    @property
    def is_temporal(self) -> bool:
        return self.start is not None or self.end is not None or self.recency_weight > 0


# ---------------------------------------------------------------------------------------------
# Calendar arithmetic
# ---------------------------------------------------------------------------------------------


def shift_months(day: date, months: int) -> date:
    """The same day of month `months` later (negative: earlier), clamped to the month's end."""
    index = day.year * 12 + day.month - 1 + months
    year, month0 = divmod(index, 12)
    month = month0 + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def month_period(year: int, month: int, confident: bool = True) -> Period:
    last = calendar.monthrange(year, month)[1]
    return Period(date(year, month, 1), date(year, month, last), year, confident)


def months_period(year: int, first: int, last: int, confident: bool = True) -> Period:
    return Period(date(year, first, 1), month_period(year, last).end, year, confident)


def year_period(year: int, confident: bool = True) -> Period:
    return Period(date(year, 1, 1), date(year, 12, 31), year, confident)


def week_start(day: date) -> date:
    return day - timedelta(days=day.weekday())


def go_back(today: date, count: int, unit: str) -> date | None:
    """The calendar day `count` units before today, or None when that is absurdly far."""
    try:
        if unit == "day":
            return today - timedelta(days=count)
        if unit == "week":
            return today - timedelta(weeks=count)
        if unit == "month":
            return shift_months(today, -count)
        if unit == "quarter":
            return shift_months(today, -3 * count)
        if unit == "year":
            return shift_months(today, -12 * count) if count <= MAX_RELATIVE_YEARS else None
        if unit == "decade":
            return shift_months(today, -120 * count) if count <= MAX_RELATIVE_YEARS // 10 else None
    except (OverflowError, ValueError):
        return None
    raise ValueError(f"unknown unit {unit!r}")


def calendar_unit(today: date, unit: str, back: int) -> Period:
    """The whole calendar day/week/month/quarter/year `back` units before the current one."""
    if unit == "day":
        day = today - timedelta(days=back)
        return Period(day, day, day.year)
    if unit == "week":
        monday = week_start(today) - timedelta(weeks=back)
        sunday = monday + timedelta(days=6)
        return Period(monday, sunday, monday.year if monday.year == sunday.year else None)
    if unit == "month":
        first = shift_months(today.replace(day=1), -back)
        return month_period(first.year, first.month)
    if unit == "quarter":
        first = shift_months(
            today.replace(day=1, month=3 * ((today.month - 1) // 3) + 1), -3 * back
        )
        return months_period(first.year, first.month, first.month + 2)
    if unit in ("year", "decade"):
        return year_period(today.year - back * (10 if unit == "decade" else 1))
    raise ValueError(f"unknown unit {unit!r}")


def current_unit_start(today: date, unit: str) -> date:
    if unit == "day":
        return today
    if unit == "week":
        return week_start(today)
    if unit == "month":
        return today.replace(day=1)
    if unit == "quarter":
        return date(today.year, 3 * ((today.month - 1) // 3) + 1, 1)
    if unit == "year":
        return date(today.year, 1, 1)
    if unit == "decade":
        return date(today.year - today.year % 10, 1, 1)
    raise ValueError(f"unknown unit {unit!r}")


# ---------------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------------

MONTHS = {
    name: number
    for number, name in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1
    )
}
MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
YEAR = r"(?:19|20)\d\d"

UNIT_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
TENS_WORDS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
VAGUE_COUNTS = {"few": 3, "several": 5}
PLAIN_COUNTS = {"a": 1, "an": 1, "couple": 2, "dozen": 12, "half a": 0.5, "half an": 0.5}
_TEENS_FIRST = sorted(UNIT_WORDS, key=len, reverse=True)  # "seventeen" before "seven"
NUMBER = (
    r"(?:\d{1,4}(?:\.5)?"
    rf"|(?:{'|'.join(TENS_WORDS)})(?:[\s-](?:{'|'.join(n for n in UNIT_WORDS if UNIT_WORDS[n] < 10)}))?"
    rf"|{'|'.join(_TEENS_FIRST)}"
    r"|a\s+couple(?:\s+of)?|couple(?:\s+of)?|a\s+few|few|several|a\s+dozen|dozen|half\s+an?|an?)"
)
AND_A_HALF = r"(?:\s+and\s+a\s+half)"
UNIT = r"(?:days?|weeks?|wks?|months?|mos?|quarters?|years?|yrs?|decades?)"
UNIT_ABBREVIATIONS = {"wk": "week", "mo": "month", "yr": "year"}

# Where a match may start and end: not glued to a word, a version number, money or a path.
START = r"(?<![\w.$#/\\-])"
END = r"(?![\w%+$]|[.,:/-]\d)"
END_BEFORE_DASH = r"(?![\w%+$]|[.,:/]\d)"  # the first point of "2018-2020"

# Words that introduce a point in time and go with it when it is cut from the question.
CONTEXT = (
    r"(?:(?P<verb>published|released|submitted|posted|appeared|written|uploaded|dated)\s+)?"
    r"(?:(?P<prep>in|from|during|of|for|throughout|around|circa|ca\.|over)\s+)?"
    r"(?:the\s+(?:(?:year|month)\s+(?:of\s+)?)?)?"
)
VERB = r"(?:(?:published|released|submitted|posted|appeared|written|uploaded)\s+)?"
PRESENT = r"(?:the\s+)?(?:present(?:\s+day)?|now|today|date)(?!\w)"

# ---------------------------------------------------------------------------------------------
# Points in time: each form is a regex (named groups) and a builder to a Period
# ---------------------------------------------------------------------------------------------

PointBuilder = Callable[[re.Match, date], Period | None]


def _year(text: str, today: date) -> int | None:
    year = int(text)
    return year if FIRST_YEAR <= year <= today.year + 1 else None


def _month(text: str) -> int:
    return MONTHS[text.lower().rstrip(".")[:3]]


def _iso_date(m: re.Match, today: date) -> Period | None:
    year = _year(m["y"], today)
    if year is None:
        return None
    try:
        day = date(year, int(m["m"]), int(m["d"]))
    except ValueError:  # 2023-02-30
        return None
    return Period(day, day, year)


def _named_day(m: re.Match, today: date) -> Period | None:
    year = _year(m["y"], today)
    if year is None:
        return None
    try:
        day = date(year, _month(m["m"]), int(m["d"]))
    except ValueError:
        return None
    return Period(day, day, year)


def _month_year(m: re.Match, today: date) -> Period | None:
    year = _year(m["y"], today)
    return month_period(year, _month(m["m"])) if year else None


def _iso_month(m: re.Match, today: date) -> Period | None:
    year = _year(m["y"], today)
    if year is None:
        return None
    month = int(m["m"])
    # "2010-12" may also be the range 2010-2012.
    return month_period(year, month, confident=month <= year % 100)


ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
    "last": -1, "final": -1, "latter": -1,
}  # fmt: skip


def _quarter(m: re.Match, today: date) -> Period | None:
    year = _year(m["y"], today)
    if year is None:
        return None
    quarter = int(m["q"]) if m["q"] else ORDINALS[m["o"].lower()]
    quarter = 4 if quarter == -1 else quarter
    first = 3 * quarter - 2
    return months_period(year, first, first + 2)


def _half(m: re.Match, today: date) -> Period | None:
    year = _year(m["y"], today)
    if year is None:
        return None
    half = int(m["h"] or m["h2"]) if (m["h"] or m["h2"]) else ORDINALS[m["o"].lower()]
    return months_period(year, 1, 6) if half == 1 else months_period(year, 7, 12)


FUZZY_PARTS = {"early": (1, 4), "mid": (5, 8), "late": (9, 12), "beginning": (1, 3),
               "start": (1, 3), "end": (10, 12)}  # fmt: skip


def _fuzzy_year_part(m: re.Match, today: date) -> Period | None:
    year = _year(m["y"], today)
    if year is None:
        return None
    part = next(w for w in m["p"].lower().split() if w not in ("the", "of"))
    first, last = FUZZY_PARTS[part]
    return months_period(year, first, last)


DECADE_PARTS = {None: (0, 9), "early": (0, 3), "mid": (4, 6), "late": (7, 9)}
DECADE_WORDS = {"sixties": 60, "seventies": 70, "eighties": 80, "nineties": 90}


def _decade_period(decade: int, part: str | None, today: date) -> Period | None:
    if decade > today.year + 1 or decade < FIRST_YEAR:
        return None
    first, last = DECADE_PARTS[part.lower() if part else None]
    return Period(date(decade + first, 1, 1), date(decade + last, 12, 31), None)


def _two_digit_decade(tens: int, today: date) -> int:
    return 2000 + 10 * tens if 2000 + 10 * tens <= today.year else 1900 + 10 * tens


def _decade4(m: re.Match, today: date) -> Period | None:
    return _decade_period(int(m["c"]) * 10, m["p"], today)


def _decade2(m: re.Match, today: date) -> Period | None:
    return _decade_period(_two_digit_decade(int(m["t"]), today), m["p"], today)


def _decade_word(m: re.Match, today: date) -> Period | None:
    return _decade_period(1900 + DECADE_WORDS[m["w"].lower()], None, today)


def _plain_year(m: re.Match, today: date) -> Period | None:
    year = _year(m["y"], today)
    return year_period(year) if year else None


PART = r"(?:(?P<p>early|mid|late)[\s-]*)"
POINT_FORMS: list[tuple[str, str, PointBuilder]] = [
    ("iso_date", rf"(?P<y>{YEAR})([-/])(?P<m>0?[1-9]|1[0-2])\2(?P<d>0?[1-9]|[12]\d|3[01])", _iso_date),
    ("mdy", rf"(?P<m>{MONTH})\s+(?P<d>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?,?\s+(?P<y>{YEAR})", _named_day),
    ("dmy", rf"(?P<d>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{MONTH}),?\s+(?P<y>{YEAR})", _named_day),
    ("month_year", rf"(?P<m>{MONTH}),?\s+(?:of\s+)?(?P<y>{YEAR})", _month_year),
    ("quarter", rf"q(?P<q>[1-4])[\s-]?(?:of\s+)?(?P<y>{YEAR})(?P<o>)", _quarter),
    ("quarter_after", rf"(?P<y>{YEAR})[\s-]?q(?P<q>[1-4])(?P<o>)", _quarter),
    ("quarter_words", rf"(?:the\s+)?(?P<o>first|second|third|fourth|last|final|1st|2nd|3rd|4th)\s+quarter\s+(?:of\s+|in\s+)?(?P<y>{YEAR})(?P<q>)", _quarter),
    ("half", rf"(?:h(?P<h>[12])|(?P<h2>[12])h)[\s-]?(?:of\s+)?(?P<y>{YEAR})(?P<o>)", _half),
    ("half_after", rf"(?P<y>{YEAR})[\s-]?h(?P<h>[12])(?P<h2>)(?P<o>)", _half),
    ("half_words", rf"(?:the\s+)?(?P<o>first|second|1st|2nd|last|latter|final)\s+half\s+(?:of\s+|in\s+)?(?P<y>{YEAR})(?P<h>)(?P<h2>)", _half),
    ("year_part", rf"(?P<p>early|mid|late|(?:the\s+)?(?:beginning|start|end)\s+of)[\s-]*(?P<y>{YEAR})", _fuzzy_year_part),
    ("decade4", rf"{PART}?(?P<c>(?:19|20)\d)0'?s(?!\w)", _decade4),
    ("decade2", rf"(?:{PART}'?|(?<=\bthe\s)'?|')(?P<t>\d)0'?s(?!\w)", _decade2),
    ("decade_word", rf"(?<=\bthe\s)(?P<w>{'|'.join(DECADE_WORDS)})(?!\w)", _decade_word),
    ("iso_month", rf"(?P<y>{YEAR})-(?P<m>0[1-9]|1[0-2])(?![-/]\d)", _iso_month),
    ("year", rf"(?P<y>{YEAR})", _plain_year),
]  # fmt: skip
_FLAGS = re.IGNORECASE
_POINT_PARSERS = [(re.compile(regex, _FLAGS), build) for _, regex, build in POINT_FORMS]
_UNNAMED = re.compile(r"\?P<\w+>")


def _anonymous(regex: str) -> str:
    """The regex with its group names removed, so that it can sit inside a larger one."""
    return _UNNAMED.sub("", regex).replace(r"\2", r"[-/]")


POINT = "(?:" + "|".join(_anonymous(regex) for _, regex, _ in POINT_FORMS) + ")"
POINT_NOT_YEAR = "(?:" + "|".join(_anonymous(r) for n, r, _ in POINT_FORMS if n != "year") + ")"


def parse_point(text: str, start: int, end: int, today: date) -> Period | None:
    """The Period named by text[start:end] (a POINT), or None when it names none."""
    for regex, build in _POINT_PARSERS:
        m = regex.fullmatch(text, start, end)
        if m:
            return build(m, today)
    return None


def _point(m: re.Match, group: str, today: date) -> Period | None:
    return parse_point(m.string, m.start(group), m.end(group), today)


# ---------------------------------------------------------------------------------------------
# Rules: a regex and a handler to a TemporalMatch, tried in order, first claim wins
# ---------------------------------------------------------------------------------------------

Handler = Callable[[re.Match, date], TemporalMatch | None]


def _window(
    m: re.Match,
    start: date | None,
    end: date | None,
    *,
    year: int | None = None,
    weight: float = 0.0,
    confident: bool = True,
) -> TemporalMatch:
    return TemporalMatch(
        span=m.span(),
        phrase=" ".join(m["core"].split()),
        has_window=True,
        start=start,
        end=end,
        year=year,
        weight=weight,
        confident=confident,
    )


def _count(text: str | None) -> tuple[float | None, bool]:
    """("two" -> 2, confident), ("few" -> 3, not confident); None when no count was written."""
    if not text:
        return None, True
    words = " ".join(text.lower().replace("-", " ").split())
    if words.replace(".", "", 1).isdigit():
        return float(words) if "." in words else int(words), True
    words = words.removeprefix("a ").removesuffix(" of")  # "a couple of" -> "couple"
    if words in PLAIN_COUNTS:
        return PLAIN_COUNTS[words], True
    if words in VAGUE_COUNTS:
        return VAGUE_COUNTS[words], False
    tens, _, units = words.partition(" ")
    if tens in TENS_WORDS:  # "twenty four"
        return TENS_WORDS[tens] + UNIT_WORDS.get(units, 0), True
    return UNIT_WORDS.get(words, 0), True


def _unit(text: str) -> str:
    unit = text.lower().rstrip("s")
    return UNIT_ABBREVIATIONS.get(unit, unit)


def _whole_count(count: float, unit: str) -> tuple[int, str] | None:
    """Half a year is six months, 2.5 decades 25 years; halves of smaller units are not understood."""
    if count != int(count):
        smaller = {"year": ("month", 12), "decade": ("year", 10), "quarter": ("month", 3)}
        if unit not in smaller or count * 2 != int(count * 2):
            return None
        unit, factor = smaller[unit]
        return int(count * factor), unit
    return (int(count), unit) if count >= 1 else None


# "from 2018 to 2020", "between March 2023 and now", "2015–2019", "2019 to present"
RANGE = re.compile(
    START
    + VERB
    + r"(?:(?P<prep>from|between|during|in|over|for)\s+)?(?:the\s+(?:period|years?)\s+)?"
    + rf"(?P<core>(?P<a>{POINT}){END_BEFORE_DASH}\s*(?P<sep>-|–|—|to|until|till|through|thru|and)\s*"
    + rf"(?:(?P<b>{POINT}){END}|(?P<now>{PRESENT})))",
    _FLAGS,
)


def _range(m: re.Match, today: date) -> TemporalMatch | None:
    sep = m["sep"].lower()
    if sep == "and" and (m["prep"] or "").lower() != "between":
        return None  # "2019 and 2020" are two years; combining decides
    a = _point(m, "a", today)
    if a is None:
        return None
    if m["now"]:
        return _window(m, a.start, None, weight=OPEN_TO_PRESENT_WEIGHT, confident=a.confident)
    b = _point(m, "b", today)
    if b is None:
        return None
    confident = a.confident and b.confident
    if a.start > b.end:  # "2020-2018"
        a, b, confident = b, a, False
    year = a.year if a.year is not None and a.year == b.year else None
    return _window(m, a.start, b.end, year=year, confident=confident)


# "between March and June 2024", "March–June 2024"
MONTH_RANGE = re.compile(
    START
    + VERB
    + r"(?:(?P<prep>from|between|during|in|over)\s+)?"
    + rf"(?P<core>(?P<m1>{MONTH})\s*(?:-|–|—|to|and|through|thru|until|till)\s*(?P<m2>{MONTH}),?\s+(?:of\s+)?(?P<y>{YEAR})){END}",
    _FLAGS,
)


def _month_range(m: re.Match, today: date) -> TemporalMatch | None:
    year = _year(m["y"], today)
    if year is None:
        return None
    first, last = _month(m["m1"]), _month(m["m2"])
    if first > last:
        return None
    return _window(m, date(year, first, 1), month_period(year, last).end, year=year)


# "2018-20" (a range) and "2024-03" (a month)
SHORT_RANGE = re.compile(
    START + CONTEXT + rf"(?P<core>(?P<y>{YEAR})(?P<sep>[-–/])(?P<n>\d\d))(?![\w%+]|[-/.]\d)",
    _FLAGS,
)


def _short_range(m: re.Match, today: date) -> TemporalMatch | None:
    year = _year(m["y"], today)
    if year is None:
        return None
    n = int(m["n"])
    if m["sep"] in "-/" and 1 <= n <= 12:
        period = month_period(year, n, confident=n <= year % 100)
        return _window(m, period.start, period.end, year=year, confident=period.confident)
    if n > year % 100:
        last = _year(str(year - year % 100 + n), today)
        if last is None:
            return None
        return _window(m, date(year, 1, 1), date(last, 12, 31))
    return None


FORWARD_INCLUSIVE = r"since|from|starting(?:\s+(?:from|in|with|at))?|beginning(?:\s+(?:in|with|from))?|no\s+earlier\s+than|not\s+before|as\s+of"
FORWARD_EXCLUSIVE = r"after|post|newer\s+than|later\s+than|more\s+recent\s+than|younger\s+than"
FORWARD_TAIL = (
    r"onwards?|forwards?|on(?!\s+\w)|and\s+(?:later|after|beyond|newer|since)|or\s+(?:later|after|newer)"
    r"|\+(?!\w)"
)
# "since 2023", "after June 2021", "post-2019", "from 2018 onwards", "newer than 2021"
FORWARD = re.compile(
    START
    + VERB
    + rf"(?P<core>(?P<kw>{FORWARD_INCLUSIVE}|{FORWARD_EXCLUSIVE})(?:\s+|-)(?:the\s+)?"
    + rf"(?P<a>{POINT}){END}(?:\s*(?P<tail>{FORWARD_TAIL}))?)",
    _FLAGS,
)
# "2020 onwards", "2020 and later", "2020+"
FORWARD_AFTER = re.compile(
    START + CONTEXT + rf"(?P<core>(?P<a>{POINT})(?![\w%$]|[.,:/-]\d)\s*(?P<tail>{FORWARD_TAIL}))",
    _FLAGS,
)


def _forward(m: re.Match, today: date) -> TemporalMatch | None:
    kw = " ".join((m.groupdict().get("kw") or "").lower().split())
    if kw == "from" and not m["tail"]:
        return None  # "from 2021" is the year itself
    a = _point(m, "a", today)
    if a is None:
        return None
    exclusive = re.fullmatch(FORWARD_EXCLUSIVE, kw) is not None if kw else False
    start = a.end + timedelta(days=1) if exclusive else a.start
    return _window(m, start, None, weight=OPEN_TO_PRESENT_WEIGHT, confident=a.confident)


BACKWARD_EXCLUSIVE = r"before|prior\s+to|pre|older\s+than|earlier\s+than"
BACKWARD_INCLUSIVE = r"up\s+(?:to|until|till)|until|till|through|thru|no\s+later\s+than|not\s+after"
# "before 2015", "pre-2020", "up to 2022", "until 2022", "older than 2010"
BACKWARD = re.compile(
    START
    + VERB
    + rf"(?P<core>(?P<kw>{BACKWARD_EXCLUSIVE}|{BACKWARD_INCLUSIVE})(?:\s+|-)(?:the\s+)?(?P<a>{POINT}){END})",
    _FLAGS,
)
# "2010 and earlier", "2010 or before"
BACKWARD_AFTER = re.compile(
    START
    + CONTEXT
    + rf"(?P<core>(?P<a>{POINT}){END}\s*(?:and|or)\s+(?:earlier|before|older|prior))(?!\w)",
    _FLAGS,
)


def _backward(m: re.Match, today: date) -> TemporalMatch | None:
    a = _point(m, "a", today)
    if a is None:
        return None
    kw = " ".join((m.groupdict().get("kw") or "").lower().split())
    exclusive = bool(kw) and re.fullmatch(BACKWARD_EXCLUSIVE, kw) is not None
    end = a.start - timedelta(days=1) if exclusive else a.end
    return _window(m, None, end, confident=a.confident)


# "last 6 months", "past two years", "the last year", "last year", "within a year", "last decade"
RELATIVE = re.compile(
    START
    + VERB
    + r"(?:(?P<prep>in|over|during|within|from|for|of|throughout|since)\s+)?(?:(?P<the>the)\s+)?"
    + r"(?P<core>(?P<dir>last|past|previous|preceding|recent|this\s+past|most\s+recent)\s+"
    + rf"(?:(?P<n>{NUMBER}){AND_A_HALF}?\s+)?(?P<unit>{UNIT})(?P<half>{AND_A_HALF})?)(?!\w)(?!\s+(?:of|in)\s+(?:19|20)\d\d)(?P<poss>['’]s)?",
    _FLAGS,
)
WITHIN = re.compile(
    START
    + VERB
    + rf"(?P<core>within\s+(?:the\s+)?(?P<n>{NUMBER}){AND_A_HALF}?\s+(?P<unit>{UNIT})(?P<half>{AND_A_HALF})?)(?!\w)",
    _FLAGS,
)


def _relative(m: re.Match, today: date) -> TemporalMatch | None:
    count, confident = _count(m["n"])
    unit = _unit(m["unit"])
    direction = " ".join((m.groupdict().get("dir") or "past").lower().split())
    if " and a half" in " ".join(m["core"].lower().split()):  # "the last year and a half"
        count = (count or 1) + 0.5
    prep = (m.groupdict().get("prep") or "").lower()
    if count is None:
        if direction == "recent":
            return None  # "recent years": a recency word, not a window
        if prep == "since" and direction in ("last", "previous") and not m["the"] and unit != "decade":
            # "since last year" on 2026-11-23 runs from 2025-01-01 to today, not through 2025 only.
            period = calendar_unit(today, unit, 1)
            return _window(m, period.start, None, weight=OPEN_TO_PRESENT_WEIGHT)
        rolling = (
            unit == "decade"
            or direction in ("past", "this past", "most recent", "preceding")
            or m.groupdict().get("the") is not None
            or (m.groupdict().get("prep") or "").lower()
            in ("over", "within", "during", "throughout", "for")
        )
        if not rolling:  # "last year", "previous month", "last week's"
            period = calendar_unit(today, unit, 1)
            return _window(m, period.start, period.end, year=period.year)
        count = 1
    whole = _whole_count(count, unit)
    if whole is None:
        return None
    start = go_back(today, *whole)
    if start is None:
        return None
    return _window(m, start, None, weight=RELATIVE_WINDOW_WEIGHT, confident=confident)


# "this week", "this year", "so far this year", "year to date", "the current month"
THIS = re.compile(
    START
    + VERB
    + r"(?:(?:in|during|from|for|of|over)\s+)?"
    + r"(?P<core>(?:so\s+far\s+)?(?:this|the\s+current)\s+(?P<unit>week|month|quarter|year|decade)(?:\s+so\s+far)?"
    + r"|(?P<ytd>year[\s-]to[\s-]date|ytd))(?!\w)",
    _FLAGS,
)


def _this(m: re.Match, today: date) -> TemporalMatch | None:
    unit = "year" if m["ytd"] else m["unit"].lower()
    start = current_unit_start(today, unit)
    year = start.year if unit != "decade" and start.year == today.year else None
    return _window(m, start, None, year=year, weight=RELATIVE_WINDOW_WEIGHT)


# "last spring", "since last summer", "this winter": meteorological seasons of the northern
# hemisphere (spring is March to May, winter December to February), never confidently.
SEASON = re.compile(
    START
    + VERB
    + r"(?:(?P<prep>since|in|during|from|over|of)\s+)?(?:the\s+)?"
    + r"(?P<core>(?P<dir>last|past|previous|this)\s+(?P<season>spring|summer|autumn|fall|winter))"
    + r"(?!\w)(?!\s+(?:of\s+)?(?:19|20)\d\d)",
    _FLAGS,
)
SEASON_MONTHS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}


def _season(m: re.Match, today: date) -> TemporalMatch | None:
    first = SEASON_MONTHS[m["season"].lower()]
    start = date(today.year, first, 1)
    while start > today:  # the latest one that has begun
        start = date(start.year - 1, first, 1)
    end = shift_months(start, 3) - timedelta(days=1)
    if m["dir"].lower() != "this" and end >= today:  # "last summer" in summer: the one before
        start = date(start.year - 1, first, 1)
        end = shift_months(start, 3) - timedelta(days=1)
    if (m["prep"] or "").lower() == "since":
        return _window(m, start, None, weight=OPEN_TO_PRESENT_WEIGHT, confident=False)
    return _window(m, start, min(end, today), confident=False)


DAY_WORD = re.compile(
    START
    + r"(?:(?P<verb>published|released|submitted|posted|uploaded|out)\s+)?"
    + r"(?:(?P<prep>from|on|of|since)\s+)?(?P<core>today|yesterday)(?!\w)(?P<poss>['’]s)?",
    _FLAGS,
)


def _day_word(m: re.Match, today: date) -> TemporalMatch | None:
    day = today if m["core"].lower() == "today" else today - timedelta(days=1)
    since = (m["prep"] or "").lower() == "since"
    if day == today and not (m["verb"] or m["prep"] or m["poss"]):
        # "the state of quantum computing today" means nowadays, not papers of this one day.
        return TemporalMatch(m.span(), m["core"], has_window=False, weight=RECENCY_WEIGHT)
    weight = RELATIVE_WINDOW_WEIGHT if day == today or since else 0.0
    return _window(m, day, None if since else day, year=day.year, weight=weight)


# "two years ago", "a month ago"
AGO = re.compile(
    START
    + VERB
    + r"(?:(?:from|in|of)\s+)?"
    + rf"(?P<core>(?P<n>{NUMBER})\s+(?P<unit>days?|weeks?|months?|years?|decades?)\s+ago)(?!\w)",
    _FLAGS,
)


def _ago(m: re.Match, today: date) -> TemporalMatch | None:
    count, _ = _count(m["n"])
    if count is None or count != int(count) or count < 1 or count > MAX_RELATIVE_YEARS:
        return None
    period = calendar_unit(today, _unit(m["unit"]), int(count))
    return _window(m, period.start, period.end, year=period.year, confident=False)


# "older than 2 years" (ends then), "newer than 6 months", "less than a year old" (start then)
RELATIVE_BOUND = re.compile(
    START
    + VERB
    + r"(?P<core>(?P<kw>older\s+than|more\s+than|newer\s+than|younger\s+than|less\s+than|under)\s+"
    + rf"(?P<n>{NUMBER})\s+(?P<unit>{UNIT})(?P<old>\s+old)?)(?!\w)",
    _FLAGS,
)


def _relative_bound(m: re.Match, today: date) -> TemporalMatch | None:
    kw = m["kw"].lower().split()[0]
    if kw in ("more", "less", "under") and not m["old"]:
        return None  # "more than 3 days" of training is not a date
    count, confident = _count(m["n"])
    whole = _whole_count(count or 0, _unit(m["unit"]))
    if whole is None:
        return None
    boundary = go_back(today, *whole)
    if boundary is None:
        return None
    if kw in ("older", "more"):
        return _window(m, None, boundary - timedelta(days=1), confident=confident)
    return _window(m, boundary, None, weight=RELATIVE_WINDOW_WEIGHT, confident=confident)


# Any other point: "March 2024", "Q1 2025", "the 2010s", "first half of 2023", "2023-05-01"
POINT_ALONE = re.compile(START + CONTEXT + rf"(?P<core>(?P<a>{POINT_NOT_YEAR})){END}", _FLAGS)


def _point_alone(m: re.Match, today: date) -> TemporalMatch | None:
    a = _point(m, "a", today)
    if a is None:
        return None
    return _window(m, a.start, a.end, year=a.year, confident=a.confident)


YEAR_ALONE = re.compile(START + CONTEXT + rf"(?P<core>(?P<y>{YEAR})){END}", _FLAGS)
PUBLICATION_NOUNS = frozenset(
    "paper papers article articles preprint preprints publication publications work works "
    "research study studies survey surveys review reviews results edition proceedings".split()
)
COUNT_BEFORE = frozenset("top first last next over under than nearly approximately".split())
# A year right after another one ("2019 and 2020") or a citation ("Vaswani et al. 2017").
_YEAR_CONTEXT_BEFORE = re.compile(
    r"(?:(?:(?:19|20)\d\d|\x00)['’]?s?\s*(?:,|and|or|&)\s*|et\.?\s+al\.?,?\s*)$", _FLAGS
)
_NEXT_WORD = re.compile(r"['’]?s?\s*([\w-]+)")
_PREV_WORD = re.compile(r"([\w-]+)\W*$")


def _year_alone(m: re.Match, today: date) -> TemporalMatch | None:
    year = _year(m["y"], today)
    if year is None:
        return None
    text = m.string
    has_context = bool(m["prep"] or m["verb"]) or bool(
        _YEAR_CONTEXT_BEFORE.search(text, max(0, m.start() - 24), m.start())
    )
    following = _NEXT_WORD.match(text, m.end())
    next_word = following[1].lower() if following else ""
    if not has_context:
        previous = _PREV_WORD.search(text, max(0, m.start() - 40), m.start())
        if previous and previous[1].lower() in COUNT_BEFORE:
            return None  # "top 2000"
        if next_word.endswith("s") and next_word not in PUBLICATION_NOUNS and len(next_word) > 3:
            return None  # "2000 samples", "1950 images"
    if (m["prep"] or "").lower() in ("around", "circa", "ca."):
        return _window(
            m, date(max(year - 1, FIRST_YEAR), 1, 1), date(year + 1, 12, 31), confident=False
        )
    # Where the year is on its own in the middle of a sentence ("ICLR 2021 best paper"), it
    # is probably still a date, but a venue or a version is possible.
    at_edge = not text[: m.start()].strip(" ,;:(") or not text[m.end() :].strip(" ?!.,;:)")
    confident = (
        has_context
        or at_edge
        or next_word in PUBLICATION_NOUNS
        or text[m.start() - 1 : m.start()] == "("
    )
    return _window(m, date(year, 1, 1), date(year, 12, 31), year=year, confident=confident)


# Recency words: a weight, no window.
STRONG_RECENCY = re.compile(
    START + r"(?P<core>(?:very\s+)?(?:latest|newest|freshest)|most[\s-]+recent(?:ly)?"
    r"|state[\s-]+of[\s-]+the[\s-]+art|sota|cutting[\s-]+edge|bleeding[\s-]+edge|up[\s-]+to[\s-]+date"
    r"|brand[\s-]+new|(?:(?:published|released|posted|out)\s+)?just\s+(?:published|released|out))(?!\w)",
    _FLAGS,
)
MODERATE_RECENCY = re.compile(
    START
    + r"(?P<core>(?:(?:in|over|during)\s+)?(?:the\s+)?recent\s+(?:years|months|times|decades?|weeks|days|past)"
    r"|(?:(?:published|released|posted|submitted|appeared)\s+)?(?:recent(?:ly)?|lately)"
    r"(?:\s+(?:published|released|posted|submitted|appeared))?"
    r"|nowadays|these\s+days|emerging|trending|currently"
    r"|current(?=\s+(?:state|research|trends?|approaches|methods|work|literature|best|progress|developments|advances|models|techniques|sota|frontier)(?!\w)))(?!\w)",
    _FLAGS,
)
WHATS_NEW = re.compile(
    START + r"(?P<core>(?<=what['’]s\s)new|(?<=what\sis\s)new|(?<=anything\s)new)(?!\w)",
    _FLAGS,
)
WEAK_RECENCY = re.compile(
    START
    + r"(?P<core>new)(?=\s+(?:papers?|preprints?|articles?|publications?|work|research|results"
    r"|developments|advances|findings|releases|approaches|methods|models|techniques|ideas|trends))",
    _FLAGS,
)
NOUN_USE = re.compile(r"\s+(?:in|on|of|for|about|regarding|at|within|across|among)(?!\w)", _FLAGS)


def _recency(weight: float) -> Handler:
    def handler(m: re.Match, today: date) -> TemporalMatch | None:
        # "the latest in X", "the state of the art on Y": the words carry the question's
        # meaning, so they stay in it; only the weight is taken.
        after_article = m.string[max(m.start() - 4, 0) : m.start()].lower() == "the "
        noun_use = after_article and NOUN_USE.match(m.string, m.end()) is not None
        return TemporalMatch(
            span=m.span(),
            phrase=" ".join(m["core"].split()),
            has_window=False,
            weight=weight,
            cut=not noun_use and weight != WHATS_NEW_WEIGHT,
        )

    return handler


# Each rule runs only when the question holds one of its words, which skips most regex scans.
# Rules built on a point in time need a digit ("the nineties" aside), and start their scan a
# little before the first digit: no point's words reach further back than that.
DIGITS = tuple("0123456789")
POINT_KEYS = (*DIGITS, "ties")
LOOK_BEFORE_DIGIT = 48
RECENCY_KEYS = ("latest", "newest", "freshest", "recent", "state", "sota", "edge", "date")
RULES: list[tuple[re.Pattern, Handler, tuple[str, ...]]] = [
    (RANGE, _range, POINT_KEYS),
    (MONTH_RANGE, _month_range, DIGITS),
    (FORWARD, _forward, POINT_KEYS),
    (BACKWARD, _backward, POINT_KEYS),
    (FORWARD_AFTER, _forward, POINT_KEYS),
    (BACKWARD_AFTER, _backward, POINT_KEYS),
    (RELATIVE_BOUND, _relative_bound, ("than", "under")),
    (RELATIVE, _relative, ("last", "past", "previous", "preceding", "recent")),
    (WITHIN, _relative, ("within",)),
    (AGO, _ago, ("ago",)),
    (THIS, _this, ("this", "current", "ytd", "date")),
    (SEASON, _season, ("spring", "summer", "autumn", "fall", "winter")),
    (DAY_WORD, _day_word, ("today", "yesterday")),
    (SHORT_RANGE, _short_range, DIGITS),
    (POINT_ALONE, _point_alone, POINT_KEYS),
    (YEAR_ALONE, _year_alone, DIGITS),
    (STRONG_RECENCY, _recency(STRONG_RECENCY_WEIGHT), (*RECENCY_KEYS, "brand", "just")),
    (
        MODERATE_RECENCY,
        _recency(RECENCY_WEIGHT),
        ("recent", "lately", "nowadays", "these days", "emerging", "trending", "current"),
    ),
    (WHATS_NEW, _recency(WHATS_NEW_WEIGHT), ("new",)),
    (WEAK_RECENCY, _recency(WEAK_RECENCY_WEIGHT), ("new",)),
]

# Time words the rules see but cannot place: the result is then not confident.
UNPLACED = re.compile(
    r"(?<![\w-])(?:ago|era|(?:since|after|before|prior\s+to|pre|post|until)[\s-]+(?:the\s+)?"
    r"(?:advent|release|introduction|rise|emergence|launch|invention|publication|pandemic|covid"
    r"|chatgpt|gpt|bert|transformers?|llms?|deep\s+learning|alexnet|imagenet|war|crisis)"
    r"|(?:this|last|next|past)\s+(?:summer|winter|spring|autumn|fall|semester|season|term)"
    r"|(?:last|past|previous|recent|next|coming)\s+(?:few\s+|couple\s+of\s+|several\s+|many\s+)?(?:years|months|weeks|days|decades)"
    # a month without its year: "since March"
    r"|(?:since|after|before|until|till|from|in|during)\s+(?:january|february|march|april|june|july"
    r"|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)"
    r"\.?(?!\w)(?!\s*,?\s*\d))(?!\w)",
    _FLAGS,
)
# A season's dates depend on the hemisphere: "summer 2023" keeps its year, not confidently.
SEASON_OF_YEAR = re.compile(
    r"(?<![\w-])(?:spring|summer|autumn|fall|winter)\s+(?:of\s+)?(?:19|20)\d\d(?!\w)", _FLAGS
)
UNPLACED_NAMED = re.compile(r"(?<![\w-])(?:since|after|before|until|pre|post)[\s-]+[A-Z][\w.-]*")
FIRST_DIGIT = re.compile(r"\d")


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    """Whether span overlaps one of `taken` (disjoint spans, kept sorted)."""
    index = bisect.bisect_left(taken, (span[1],))
    return index > 0 and taken[index - 1][1] > span[0]


def find_temporal(text: str, today: date) -> TemporalResult:
    """Every time phrase of `text` (with `today` as the present), combined into one window."""
    matches: list[TemporalMatch] = []
    taken: list[tuple[int, int]] = []
    lower = text.lower()
    first_digit = FIRST_DIGIT.search(text)
    point_start = max(0, first_digit.start() - LOOK_BEFORE_DIGIT) if first_digit else 0
    for pattern, handler, keys in RULES:
        if not any(key in lower for key in keys):
            continue
        start = point_start if keys[0] == "0" else 0
        for m in pattern.finditer(text, start):
            if _overlaps(m.span(), taken):
                continue
            found = handler(m, today)
            if found is not None:
                matches.append(found)
                bisect.insort(taken, found.span)
    unplaced = any(
        not _overlaps(m.span(), taken)
        for pattern in (UNPLACED, UNPLACED_NAMED)
        for m in pattern.finditer(text)
    ) or (first_digit is not None and SEASON_OF_YEAR.search(text) is not None)
    return combine(sorted(matches, key=lambda match: match.span), today, unplaced=unplaced)


def combine(matches: list[TemporalMatch], today: date, *, unplaced: bool = False) -> TemporalResult:
    """One window out of several phrases (see the module docstring), as aware UTC datetimes."""
    windows = [m for m in matches if m.has_window]
    confident = not unplaced and all(m.confident for m in matches)
    start: date | None = None
    end: date | None = None
    year: int | None = None
    if len(windows) == 1:
        start, end, year = windows[0].start, windows[0].end, windows[0].year
    elif windows:
        open_ended = any(w.start is None or w.end is None for w in windows)
        lows = [w.start for w in windows]
        highs = [w.end for w in windows]
        latest_start = max((s for s in lows if s is not None), default=None)
        earliest_end = min((e for e in highs if e is not None), default=None)
        overlap = latest_start is None or earliest_end is None or latest_start <= earliest_end
        if open_ended and overlap:  # "since 2020 ... before 2023"
            start, end = latest_start, earliest_end
        else:  # "2019 and 2020": the span covering them
            start = None if None in lows else min(lows)
            end = None if None in highs else max(highs)
            confident = confident and not open_ended and _touching(windows)
        years = {w.year for w in windows}
        year = years.pop() if len(years) == 1 else None
    weight = max((m.weight for m in matches), default=0.0)
    return TemporalResult(
        start=datetime.combine(start, time.min, UTC) if start else None,
        end=_end_of(end, start, today, has_window=bool(windows)),
        year=year,
        recency_weight=weight,
        phrase="; ".join(m.phrase for m in matches),
        spans=tuple(m.span for m in matches if m.cut),
        confident=confident,
        matches=tuple(matches),
    )


def _touching(windows: list[TemporalMatch]) -> bool:
    """True when the closed windows, in date order, leave no gap between them."""
    ordered = sorted(windows, key=lambda w: w.start or date.min)
    return all(
        later.start is not None
        and earlier.end is not None
        and later.start <= earlier.end + timedelta(days=1)
        for earlier, later in zip(ordered, ordered[1:], strict=False)
    )


def _end_of(
    end: date | None, start: date | None, today: date, *, has_window: bool
) -> datetime | None:
    """A window open towards the future ends today, unless it only starts after today."""
    if end is None and has_window and start is not None and start <= today:
        end = today
    return datetime.combine(end, time.max, UTC) if end else None

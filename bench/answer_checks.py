"""What a user checks in an answer, as small functions: each returns None when the answer passes
and a short reason when it does not.

An answer is read the way the page shows it (chat.models.Message as saved): its text, its source
cards (`sources`), the numbers it cites (`citations`), the understood filters (`analysis`) and
`timings`. Facts about papers (authors, dates, categories, words) come from the catalogue itself
(`Catalogue`), never from the answer, so an expectation cannot be satisfied by what it checks.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date

# --- Papers and answers -------------------------------------------------------------------------


@dataclass(frozen=True)
class PaperFacts:
    arxiv_id: str
    title: str
    text: str  # title + abstract, normalised (see `normalise`)
    authors: tuple[str, ...]  # normalised names
    author_names: tuple[str, ...]  # as written on the paper
    published: date
    categories: tuple[str, ...]


def normalise(text: str) -> str:
    """Lower case, one space, plain quotes and dashes, no markdown emphasis: for matching."""
    text = unicodedata.normalize("NFKC", text or "")
    text = text.translate(str.maketrans("“”‘’–—", "\"\"''--"))
    text = re.sub(r"[*_`]+", "", text)
    return " ".join(text.lower().split())


@dataclass
class Catalogue:
    """The scratch catalogue's papers, by arXiv id, and the day the suite runs."""

    papers: dict[str, PaperFacts]
    today: date

    def matching(self, predicate: Callable[[PaperFacts], bool]) -> list[PaperFacts]:
        return [p for p in self.papers.values() if predicate(p)]

    def newest(self) -> date:
        return max(p.published for p in self.papers.values())


@dataclass
class Answer:
    """One assistant message as saved, with the answer it follows in the same thread."""

    question: str
    content: str
    status: str
    query: str
    analysis: dict
    sources: list[dict]
    citations: list[int]
    timings: dict
    previous: Answer | None = None

    @property
    def cited(self) -> list[dict]:
        by_number = {s["number"]: s for s in self.sources}
        return [by_number[n] for n in dict.fromkeys(self.citations) if n in by_number]

    def cited_ids(self) -> list[str]:
        return [s["arxiv_id"] for s in self.cited]

    def source_ids(self) -> list[str]:
        return [s["arxiv_id"] for s in self.sources]

    def flag(self, name: str):
        """A flag of the answer's metadata (the pipeline puts them in timings or the analysis)."""
        return (self.timings or {}).get(name, (self.analysis or {}).get(name))


Check = Callable[[Answer, Catalogue], "str | None"]


@dataclass(frozen=True)
class Expect:
    """A named check: `describe` is what the case table prints for it."""

    describe: str
    run: Check = field(compare=False)

    def __call__(self, answer: Answer, catalogue: Catalogue) -> str | None:
        return self.run(answer, catalogue)


# --- Predicates over papers ---------------------------------------------------------------------


def mentions(*patterns: str) -> Callable[[PaperFacts], bool]:
    """The paper's title or abstract matches one of the regular expressions (lower case)."""
    compiled = [re.compile(p) for p in patterns]
    return lambda paper: any(c.search(paper.text) for c in compiled)


def by_author(name: str) -> Callable[[PaperFacts], bool]:
    key = normalise(name)
    return lambda paper: key in paper.authors


def in_category(category: str) -> Callable[[PaperFacts], bool]:
    return lambda paper: category in paper.categories


def published_between(start: date | None, end: date | None) -> Callable[[PaperFacts], bool]:
    return lambda paper: (
        (start is None or paper.published >= start) and (end is None or paper.published <= end)
    )


def _facts(card: dict, catalogue: Catalogue) -> PaperFacts | None:
    return catalogue.papers.get(card["arxiv_id"])


def _short(text: str, n: int = 50) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


# --- Checks ---------------------------------------------------------------------------------------

# What the offline answers say when they answer nothing (today's and the gate's wording).
_REFUSAL = re.compile(
    r"not enough to answer|none of (them|these papers) mentions|nothing to answer it from|"
    r"no papers were retrieved|(has|holds|found|contains) (nothing|no papers) (on|about|relevant)",
    re.IGNORECASE,
)


def no_refusal() -> Expect:
    def run(answer, catalogue):
        match = _REFUSAL.search(answer.content)
        if match:
            return f"refuses: “{_short(answer.content[max(0, match.start() - 20) :], 70)}”"
        if answer.flag("nothing_relevant"):
            return "says nothing relevant was found"
        if answer.status != "complete":
            return f"status {answer.status}"
        return None

    return Expect("no refusal", run)


def cites_at_least(n: int) -> Expect:
    def run(answer, catalogue):
        got = len(answer.cited)
        return None if got >= n else f"cites {got} paper(s), wanted ≥{n}"

    return Expect(f"cites ≥{n}", run)


def lists_papers(n: int) -> Expect:
    """A list answer: at least `n` of its lines each name one of its sources by title (the
    issue's "one line per paper: title, date, contribution"), not quotes strung together."""

    def run(answer, catalogue):
        titles = {s["arxiv_id"]: normalise(s["title"]) for s in answer.sources}
        named = set()
        for line in answer.content.splitlines():
            text = normalise(line)
            named.update(i for i, title in titles.items() if title and title in text)
        return None if len(named) >= n else f"{len(named)} line(s) name a listed paper, wanted ≥{n}"

    return Expect(f"lists ≥{n} papers by title", run)


def cites_only(predicate: Callable[[PaperFacts], bool], label: str) -> Expect:
    """Every cited paper satisfies `predicate` (vacuous when nothing is cited: pair with
    cites_at_least where something must be cited)."""

    def run(answer, catalogue):
        wrong = [c for c in answer.cited if not (f := _facts(c, catalogue)) or not predicate(f)]
        if wrong:
            shown = ", ".join(
                f"[{c['number']}] {c['arxiv_id']} ({c['published']})" for c in wrong[:3]
            )
            return f"{len(wrong)} cited paper(s) not {label}: {shown}"
        return None

    return Expect(f"cites only {label}", run)


def cites_some(predicate: Callable[[PaperFacts], bool], label: str, n: int = 1) -> Expect:
    def run(answer, catalogue):
        good = [c for c in answer.cited if (f := _facts(c, catalogue)) and predicate(f)]
        return None if len(good) >= n else f"cites {len(good)} paper(s) {label}, wanted ≥{n}"

    return Expect(f"cites ≥{n} {label}", run)


def cites_one_of(arxiv_ids: Iterable[str], label: str) -> Expect:
    wanted = list(arxiv_ids)

    def run(answer, catalogue):
        if set(answer.cited_ids()) & set(wanted):
            return None
        return f"cites none of {label} ({', '.join(wanted[:3])})"

    return Expect(f"cites one of {label}", run)


def cites_first(arxiv_id: str) -> Expect:
    def run(answer, catalogue):
        ids = answer.cited_ids()
        if not ids:
            return f"cites nothing; wanted {arxiv_id} first"
        return None if ids[0] == arxiv_id else f"cites {ids[0]} first, not {arxiv_id}"

    return Expect(f"cites {arxiv_id} first", run)


def cites_nothing() -> Expect:
    def run(answer, catalogue):
        return f"cites {answer.cited_ids()}" if answer.cited else None

    return Expect("cites nothing", run)


def retrieves_nothing() -> Expect:
    def run(answer, catalogue):
        n = len(answer.sources)
        return f"shows {n} source(s), e.g. “{_short(answer.sources[0]['title'])}”" if n else None

    return Expect("retrieves nothing", run)


def says_nothing_relevant() -> Expect:
    """The catalogue has nothing on it, said plainly: the `nothing_relevant` flag of the answer
    (docs: the relevance gate sets it exactly when its answer says so)."""

    def run(answer, catalogue):
        return None if answer.flag("nothing_relevant") is True else "no `nothing_relevant` flag"

    return Expect("says nothing relevant", run)


def replies() -> Expect:
    def run(answer, catalogue):
        if answer.status != "complete":
            return f"status {answer.status}"
        return None if len(answer.content.split()) >= 3 else f"reply “{answer.content}”"

    return Expect("a reply", run)


def offers_examples(n: int = 2) -> Expect:
    """A meta reply suggests example questions (lines or quotes ending with '?')."""

    def run(answer, catalogue):
        found = re.findall(r"[^\n?.!]{8,}\?", answer.content)
        return None if len(found) >= n else f"{len(found)} example question(s), wanted ≥{n}"

    return Expect(f"offers ≥{n} example questions", run)


def names(text: str, label: str | None = None, before_other_citations: str | None = None) -> Expect:
    """The answer names `text` (a title); with `before_other_citations` (the named paper's id),
    it does so before citing any other paper."""
    key = normalise(text)

    def run(answer, catalogue):
        content = normalise(answer.content)
        at = content.find(key)
        if at < 0:
            return f"does not name “{_short(text)}”"
        if before_other_citations:
            others = [c["number"] for c in answer.cited if c["arxiv_id"] != before_other_citations]
            firsts = [content.find(f"[{n}]") for n in others]
            first_other = min((i for i in firsts if i >= 0), default=len(content))
            if first_other < at:
                return f"names “{_short(text)}” only after citing other papers"
        return None

    return Expect(label or f"names “{_short(text, 30)}”", run)


def says(pattern: str, label: str) -> Expect:
    """The answer's text matches a regular expression (lower case): a label, a term."""
    compiled = re.compile(pattern)

    def run(answer, catalogue):
        return None if compiled.search(normalise(answer.content)) else f"never says {label}"

    return Expect(f"says {label}", run)


def window_is(start: date | None, end: date | None) -> Expect:
    """The understood window, to the day (an open end may also be written as today)."""

    def run(answer, catalogue):
        got_start = _day(answer.analysis.get("start"))
        got_end = _day(answer.analysis.get("end"))
        end_ok = got_end == end or (end == catalogue.today and got_end is None)
        if got_start == start and end_ok:
            return None
        return f"window {got_start} → {got_end}, wanted {start} → {end}"

    return Expect(f"window {start} → {end or 'open'}", run)


def _day(value) -> date | None:
    return date.fromisoformat(str(value)[:10]) if value else None


def filters_cleared(*names: str) -> Expect:
    """Filters of an earlier turn that a new topic must not keep (authors, categories, window)."""

    def run(answer, catalogue):
        kept = [n for n in names if answer.analysis.get(n)]
        return f"keeps the earlier {', '.join(kept)} filter" if kept else None

    return Expect(f"no {'/'.join(names)} filter carried", run)


def query_lacks(*words: str) -> Expect:
    """The searched query carries none of the earlier topic's words."""

    def run(answer, catalogue):
        query = normalise(answer.query)
        carried = [w for w in words if re.search(rf"\b{re.escape(w)}", query)]
        return f"query “{_short(answer.query, 70)}” carries {carried}" if carried else None

    return Expect(f"query lacks {list(words)}", run)


def subset_of_previous() -> Expect:
    """The follow-up works on the previous answer's papers: its sources are among them."""

    def run(answer, catalogue):
        if answer.previous is None or not answer.previous.sources:
            return "the previous answer has no sources to follow up on"
        before = set(answer.previous.source_ids())
        extra = [i for i in answer.source_ids() if i not in before]
        if extra:
            return f"{len(extra)} source(s) not in the previous answer, e.g. {extra[:3]}"
        return None

    return Expect("sources ⊆ previous answer's", run)


def is_previous_source(number: int) -> Expect:
    """ "the second one" is the previous answer's source [2]: it is cited, and only it."""

    def run(answer, catalogue):
        previous = answer.previous
        if previous is None or len(previous.sources) < number:
            return f"the previous answer has no source [{number}]"
        wanted = previous.sources[number - 1]["arxiv_id"]
        cited = answer.cited_ids()
        if cited == [wanted]:
            return None
        return f"cites {cited or 'nothing'}, wanted only the previous [{number}] {wanted}"

    return Expect(f"cites only previous [{number}]", run)


def previous_mentioning_cited(predicate: Callable[[PaperFacts], bool], label: str) -> Expect:
    """ "which of these X": when some of the previous answer's sources are X, some are cited."""

    def run(answer, catalogue):
        previous = answer.previous
        if previous is None:
            return "no previous answer"
        fitting = [
            i for i in previous.source_ids() if (f := catalogue.papers.get(i)) and predicate(f)
        ]
        if fitting and not set(fitting) & set(answer.cited_ids()):
            return f"{len(fitting)} previous source(s) {label}, none cited"
        return None

    return Expect(f"cites the previous sources {label}", run)


def grouped_by_period(min_periods: int = 2) -> Expect:
    """A timeline: at least `min_periods` lines naming a year (or era) with a paper count, and
    cited papers from at least two different years."""
    period_line = re.compile(r"(19|20)\d\d\b.*\b\d+\s+papers?\b|\b\d+\s+papers?\b.*(19|20)\d\d")

    def run(answer, catalogue):
        lines = [line for line in answer.content.splitlines() if period_line.search(line)]
        years = {c["published"][:4] for c in answer.cited}
        if len(lines) < min_periods:
            return f"{len(lines)} period line(s) with a count, wanted ≥{min_periods}"
        if len(years) < 2:
            return f"cited papers from {len(years)} year(s)"
        return None

    return Expect(f"grouped by ≥{min_periods} periods", run)


_AGE = re.compile(
    r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+"
    r"(days?|weeks?|months?|years?)\s+(old|ago|before)",
    re.IGNORECASE,
)


def notes_age() -> Expect:
    """Freshness: when the newest paper on it is over a month old, the answer says how old."""

    def run(answer, catalogue):
        return None if _AGE.search(answer.content) else "does not say how old the newest paper is"

    return Expect("says how old the newest is", run)

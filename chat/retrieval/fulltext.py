"""Lexical retrieval: BM25 inside PostgreSQL, over the index papers/indexing/lexical.py maintains.

A query becomes the lexemes of `to_tsvector('english', query)` (the tokenizer the index used),
each weighted by its IDF, `ln(1 + (N - df + 0.5) / (df + 0.5))`, as a pgvector `sparsevec`; a
paper's BM25 score is the inner product with its stored document weights (`<#>`).

Exact at bounded cost. Scoring is cheap per paper (~1 us) but a common word matches a large share
of the catalogue ("quantum" is in half of the 57k sample), so scoring every match grows with
the catalogue. So, MaxScore / threshold-algorithm style:
- the query's *selective* terms (sorted by document frequency, taken while their summed df stays
  within `settings.LEXICAL_CANDIDATE_CAP`) are read whole through the GIN index;
- each other term is read from its *champions* (`LexicalChampion`: every paper whose weight for
  it reaches the term's floor for the paper's year, B-tree by descending weight), the best
  `LEXICAL_WALK_DEPTH` in the window first;
- the union is scored with the *whole* query. A paper of year y read by neither can score at
  most sum(weight(t) * max(last weight read for t, t's floor in y)) over the walked terms (the
  floor alone when a list was read to its end): when the `LEXICAL_EXACT_HEAD`-th score is above
  that bound in every year of the window, the head of the ranking is exhaustive BM25's;
  otherwise the walk goes 4x deeper, each list continued where it stopped (keyset on (weight,
  paper)) and only the papers it adds scored and merged into the ranking; when that cannot
  lower the bound any more, or reading the rest costs less, MaxScore by combinations:
  in each year where an unread paper could still enter the head, every paper holding all the
  terms of one of the smallest sets whose bounds reach the head's last score (`needed_sets`)
  is scored. A paper with one weak term ("model" in the 2000s) but not the rest of a set cannot
  enter, so the read is an intersection of posting lists (`terms @> set`, inside the GIN index)
  rather than their union (`essential_terms`, one term of which every such paper holds: the
  rule before `settings.LEXICAL_NEEDED_SETS`).
A term's floor in a year is the lower of its global floor and its `LexicalTermYear` floor (the
year's own best papers): in a year where the term is weak (another field's era) the walk reaches
that year's best papers, where the global floor would leave the year without champions and force
reading the term whole there. So the first `LEXICAL_EXACT_HEAD` results are always exhaustive
BM25's (`exact=True`); the rest of the `n` are the best of the papers read. docs/BENCHMARKS.md
measures the cost at 100k and 1M.

Filters: the date window is a column of PaperLexicon (`published`, B-tree) and combines with the
GIN generator in one bitmap scan; hidden papers and exclusions are checked on the ranked head
(the join to papers costs more than the scoring); categories and authors are joined inside.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.conf import settings
from django.db import transaction

from chat.llm.sentences import printed_greek
from papers.indexing.lexical import SPARSE_DIMENSIONS, year_sql
from papers.indexing.periods import lexicon_year_indexes, year_bounds_sql
from papers.text import american_spelling, tex_to_plain

from .filters import SearchFilters


@dataclass(frozen=True, slots=True)
class QueryTerm:
    id: int
    lexeme: str
    df: int
    idf: float
    floor: float | None = None  # LexicalTerm.champion_floor: the term has champions


@dataclass(frozen=True, slots=True)
class LexicalHit:
    paper_id: int
    score: float
    published: datetime


@dataclass
class LexicalResult:
    hits: list[LexicalHit]
    lexemes: list[str] = field(default_factory=list)  # every query lexeme (for highlighting)
    terms: list[QueryTerm] = field(default_factory=list)  # those the index knows
    # "postings" (every term read whole), "champions" (common terms' best papers proved the
    # head), "essential" (+ every paper with one of the terms an unread paper would need),
    # "exhaustive" (+ every paper with any term), "none"
    generator: str = "none"
    exact: bool = True  # the head of the ranking equals exhaustive BM25's
    walks: int = 0  # champion walks (each 4x deeper than the last)
    walked: int = 0  # champion postings read by the last walk
    years: int = 0  # years of the window (the catalogue's when none) ...
    years_read: int = 0  # ... of which some terms were read whole ("essential", "exhaustive")


# A spelled Greek letter ("beta") is also the letters a paper prints ('β', 'β1', 'β2':
# chat.llm.sentences.printed_greek), those the bodies' vocabulary holds (every read paper's
# words, papers.indexing.lexical.BODIES; a unique index on the lexeme).
_QUERY_TERMS = """
WITH q AS (
    SELECT unnest(tsvector_to_array(to_tsvector('english', %(text)s))) AS lexeme
    UNION ALL
    SELECT b.lexeme FROM papers_bodyterm b WHERE b.lexeme = ANY(%(printed)s::text[])
)
SELECT q.lexeme, t.id, t.df, t.champion_floor,
       (SELECT documents FROM papers_lexicalstats WHERE id = 1)
FROM q LEFT JOIN papers_lexicalterm t ON t.lexeme = q.lexeme
"""


def idf(df: int, documents: int) -> float:
    return math.log(1.0 + (documents - df + 0.5) / (df + 0.5))


def query_terms(cursor, text: str) -> tuple[list[str], list[QueryTerm]]:
    """The query's lexemes, and those present in the index with their IDF."""
    # Spelt as most papers are: "initialised" is indexed "initialis", "initialization" "initi".
    text = american_spelling(tex_to_plain(text))
    cursor.execute(_QUERY_TERMS, {"text": text, "printed": printed_greek(text)})
    lexemes, terms = [], []
    for lexeme, term_id, df, floor, documents in cursor.fetchall():
        if lexeme in lexemes:  # a letter the query both prints and spells
            continue
        lexemes.append(lexeme)
        if term_id is not None and df and documents:
            terms.append(QueryTerm(term_id, lexeme, df, idf(df, documents), floor))
    return lexemes, terms


def sparse_literal(weights: dict[int, float]) -> str:
    body = ",".join(f"{i}:{w:.9g}" for i, w in sorted(weights.items()))
    return f"{{{body}}}/{SPARSE_DIMENSIONS}"


def split_selective(terms: list[QueryTerm], cap: int) -> tuple[list[QueryTerm], list[QueryTerm]]:
    """(rarest terms whose summed df fits the cap, the rest)."""
    selective, total = [], 0
    ordered = sorted(terms, key=lambda t: (t.df, t.id))
    for i, term in enumerate(ordered):
        if total + term.df > cap:
            return selective, ordered[i:]
        selective.append(term)
        total += term.df
    return selective, []


_RANK = """
SELECT l.paper_id, -(l.weights <#> %(qv)s::sparsevec) AS score, l.published
FROM {source} l {join}
WHERE {where}
ORDER BY score DESC, l.paper_id
LIMIT %(limit)s
"""

# Hidden papers and exclusions checked on the ranked head only: each row says if it passes.
_RANK_THEN_FILTER = """
WITH ranked AS MATERIALIZED ({rank})
SELECT r.paper_id, r.score, r.published, ({papers}) AS passes
FROM ranked r JOIN papers_paper p ON p.id = r.paper_id
ORDER BY r.score DESC, r.paper_id
"""


def _rank(
    cursor, qv, generator_sql, params, filters, n, source="papers_paperlexicon"
) -> list[LexicalHit]:
    params = dict(params, qv=qv, n=n)
    dates = filters.date_conditions("l.published", params)
    where = f"{generator_sql} AND {dates}"
    papers, params = filters.paper_conditions("p", params)
    if papers == "TRUE":  # hidden papers wanted and nothing excluded: no join at all
        cursor.execute(_RANK.format(source=source, join="", where=where), dict(params, limit=n))
        return [LexicalHit(pid, float(s), pub) for pid, s, pub in cursor.fetchall()]
    if filters.categories or filters.paper_ids is not None:
        sql = _RANK.format(
            source=source,
            join="JOIN papers_paper p ON p.id = l.paper_id",
            where=f"{where} AND {papers}",
        )
        cursor.execute(sql, dict(params, limit=n))
        return [LexicalHit(pid, float(s), pub) for pid, s, pub in cursor.fetchall()]
    head = 2 * n + len(filters.exclude_ids)
    rank = _RANK.format(source=source, join="", where=where)
    cursor.execute(_RANK_THEN_FILTER.format(rank=rank, papers=papers), dict(params, limit=head))
    rows = cursor.fetchall()
    hits = [LexicalHit(pid, float(s), pub) for pid, s, pub, passes in rows if passes][:n]
    if len(hits) < n and len(rows) == head:
        # More hidden/excluded papers in the head than the margin: filter before ranking.
        sql = _RANK.format(
            source=source,
            join="JOIN papers_paper p ON p.id = l.paper_id",
            where=f"{where} AND {papers}",
        )
        cursor.execute(sql, dict(params, limit=n))
        hits = [LexicalHit(pid, float(s), pub) for pid, s, pub in cursor.fetchall()]
    return hits


def lexical_search(
    cursor, text: str, filters: SearchFilters, n: int, *, cap: int | None = None
) -> LexicalResult:
    """The `n` best papers for `text` by BM25 within `filters` (bounded cost, see module doc)."""
    lexemes, terms = query_terms(cursor, text)
    return rank_terms(cursor, lexemes, terms, {t.id: t.idf for t in terms}, filters, n, cap=cap)


# Each walked term's floor in each year of the window (the catalogue's years when open-ended):
# the lower of its own and the year's (LEAST skips a missing year floor).
_WINDOW_FLOORS = f"""
SELECT q.term, g.year, {{floor}}
FROM unnest(%(walked)s::int[]) AS q(term)
JOIN papers_lexicalterm t ON t.id = q.term
CROSS JOIN generate_series(
    coalesce(%(first)s, (SELECT {year_sql("min(published)")} FROM papers_paperlexicon)),
    coalesce(%(last)s, (SELECT {year_sql("max(published)")} FROM papers_paperlexicon))
) AS g(year)
LEFT JOIN papers_lexicaltermyear y ON y.term_id = q.term AND y.year = g.year
"""

# Each walked term's next papers in the window, in (weight, paper) order from where its last walk
# stopped (keyset on (weight, paper); from the top the first time), `more` of them at most.
_WALK = """
SELECT q.term, count(c.paper_id), min(c.weight),
       (array_agg(c.paper_id ORDER BY c.weight, c.paper_id DESC))[1], array_agg(c.paper_id)
FROM unnest(%(walked)s::int[], %(after_weight)s::float8[], %(after_paper)s::bigint[])
     AS q(term, weight, paper) {join}
LEFT JOIN LATERAL (
    SELECT c.paper_id, c.weight FROM papers_lexicalchampion c
    WHERE c.term_id = q.term AND {dates} {floor}
      AND c.weight <= coalesce(q.weight, 'Infinity')
      AND NOT coalesce(c.weight = q.weight AND c.paper_id <= q.paper, false)
    ORDER BY c.weight DESC, c.paper_id LIMIT %(more)s
) c ON TRUE
GROUP BY q.term
"""
# Float32 sums in pgvector against float64 here: a margin well above their rounding.
_BOUND_MARGIN = 1e-5


def window_floors(cursor, walked: list[QueryTerm], filters) -> dict[int, dict[int, float]]:
    """term -> year of the window -> the term's champion floor in that year. With
    `settings.LEXICAL_YEAR_FLOORS` off, the term's global floor in every year (its global list
    alone is walked: the lists as they were before the year floors)."""
    params = {
        "walked": [t.id for t in walked],
        "first": filters.start.astimezone(UTC).year if filters.start else None,
        "last": filters.end.astimezone(UTC).year if filters.end else None,
    }
    floor = "LEAST(t.champion_floor, y.champion_floor)"
    if not settings.LEXICAL_YEAR_FLOORS:
        floor = "t.champion_floor"
    cursor.execute(_WINDOW_FLOORS.format(floor=floor), params)
    floors: dict[int, dict[int, float]] = {t.id: {} for t in walked}
    for term, year, value in cursor.fetchall():
        floors[term][year] = value
    return floors


class _Walk:
    """Where each walked term's champion walk stands: the papers read so far, and per term the
    last (weight, paper) read and whether its list in the window has ended. Deepening continues
    each list where it stopped, so no posting is read twice and only new papers get scored."""

    def __init__(self, walked, weights, filters, floors):
        self.weights, self.filters, self.floors = weights, filters, floors
        self.papers: set[int] = set()  # read
        self.depth = 0  # postings read of each list that has not ended
        self.last: dict[int, tuple[float, int] | None] = {t.id: None for t in walked}
        self.ended: set[int] = set()

    def deeper(self, cursor, depth: int) -> list[int]:
        """Read each unfinished list down to `depth` postings; the papers not read before."""
        going = [term for term in self.last if term not in self.ended]
        more, self.depth = depth - self.depth, depth
        if not going or more <= 0:
            return []
        params = {
            "walked": going,
            "after_weight": [(self.last[t] or (None, None))[0] for t in going],
            "after_paper": [(self.last[t] or (None, None))[1] for t in going],
            "more": more,
        }
        dates = self.filters.date_conditions("c.published", params)
        # Without year floors, the postings below the global floor are not the global list's.
        join, floor = "", ""
        if not settings.LEXICAL_YEAR_FLOORS:
            join = "JOIN papers_lexicalterm t ON t.id = q.term"
            floor = "AND c.weight >= t.champion_floor"
        cursor.execute(_WALK.format(dates=dates, join=join, floor=floor), params)
        new: set[int] = set()
        for term, count, lowest, lowest_paper, ids in cursor.fetchall():
            new.update(i for i in ids if i is not None)
            if count:
                self.last[term] = (lowest, lowest_paper)
            if count < more:
                self.ended.add(term)
        new -= self.papers
        self.papers |= new
        return sorted(new)

    def bounds(self) -> dict[int, dict[int, float]]:
        """year -> term -> the most an unread paper of that year gets from the term: below the
        last paper read (when the list has not ended) and below its floor in the year (else
        the walk would have read it)."""
        bounds: dict[int, dict[int, float]] = {}
        for term, years in self.floors.items():
            last = self.last[term]
            for year, floor_y in years.items():
                below = floor_y if term in self.ended or last is None else max(last[0], floor_y)
                bounds.setdefault(year, {})[term] = max(self.weights[term], 0.0) * below
        return bounds

    @property
    def exhausted(self) -> bool:
        """Walking deeper cannot lower any bound: every list ended or went below its floors."""
        for term, years in self.floors.items():
            last = self.last[term]
            if term not in self.ended and last is not None and last[0] > min(years.values()):
                return False
        return True


def essential_terms(bounds: dict[int, float], threshold: float) -> list[int]:
    """MaxScore: the walked terms an unread paper must contain to score above `threshold` (the
    terms left once the smallest bounds summing below it are set aside)."""
    ordered = sorted(bounds, key=lambda t: (bounds[t], t))
    total = 0.0
    for i, term in enumerate(ordered):
        total += bounds[term]
        if total * (1 + _BOUND_MARGIN) >= threshold:
            return ordered[i:]
    return []


# Enumerating the sets of more walked terms than this (2^n subsets) is not worth it: their
# essential terms are read instead.
_NEEDED_SETS_MAX_TERMS = 12


def needed_sets(bounds: dict[int, float], threshold: float) -> list[tuple[int, ...]]:
    """MaxScore by combinations: the smallest sets of walked terms whose bounds sum to
    `threshold`. An unread paper scores at most the bounds of the terms it holds, so it can
    enter the head only if it holds every term of one of these sets; [] when none reaches it.
    Each set holds an essential term (`essential_terms`), so this reads no more than they do,
    and less when a term only counts together with others."""
    if threshold <= 0 or len(bounds) > _NEEDED_SETS_MAX_TERMS:
        return [(term,) for term in essential_terms(bounds, threshold)]
    terms = sorted((t for t in bounds if bounds[t] > 0), key=lambda t: (-bounds[t], t))
    found: list[tuple[int, ...]] = []
    for size in range(1, len(terms) + 1):
        for combo in itertools.combinations(terms, size):
            # Smallest sets first: a set holding a found one is not among the smallest.
            if any(set(smaller) <= set(combo) for smaller in found):
                continue
            if sum(bounds[t] for t in combo) * (1 + _BOUND_MARGIN) >= threshold:
                found.append(combo)
    return sorted(tuple(sorted(combo)) for combo in found)


def _generator(
    whole: list[int],
    read: set[int],
    needed: list[tuple[tuple[tuple[int, ...], ...], list[int]]] | None = None,
) -> tuple[str, dict]:
    """Papers with a term of `whole`, papers read, and for each (sets of terms, years) of
    `needed` the papers of those years holding all the terms of one set (no year condition for
    []). Single-term sets are one overlap (`&&`), the others containments (`@>`): each a GIN
    scan."""
    parts, params = [], {"gen": whole, "read": sorted(read)}
    if whole:  # (an empty array would make GIN scan the whole index)
        parts.append("l.terms && %(gen)s::int[]")
    for i, (sets, years) in enumerate(needed or []):
        holds = _holds(sets, f"need{i}", params)
        parts.append(f"(({' OR '.join(holds)}) AND {_in_years(years, f'need{i}', params)})")
    if read:
        parts.append("l.paper_id = ANY(%(read)s::bigint[])")
    return f"({' OR '.join(parts) or 'FALSE'})", params


def _holds(sets, name: str, params: dict) -> list[str]:
    """"Holds every term of one of these sets": one overlap for the single terms, one
    containment per larger set (each a GIN scan)."""
    holds = []
    if singles := sorted(terms[0] for terms in sets if len(terms) == 1):
        params[name] = singles
        holds.append(f"l.terms && %({name})s::int[]")
    for j, terms in enumerate(terms for terms in sets if len(terms) > 1):
        params[f"{name}_{j}"] = list(terms)
        holds.append(f"l.terms @> %({name}_{j})s::int[]")
    return holds


def _by_year_source(needed: list[tuple[tuple, list[int]]], params: dict) -> str:
    """The lexicon rows of each year holding one of the year's needed sets, year by year
    (UNION ALL: a paper lies in one year), each year's bounds spelt as its GIN index's predicate
    so the planner reads that index alone (papers.indexing.periods). (One OR over the years would
    not do: the planner factors a set common to every year out of it, then scans the catalogue-
    wide index.)"""
    sets_of: dict[int, list[tuple[int, ...]]] = {}
    for sets, years in needed:
        for year in years:
            sets_of.setdefault(year, []).extend(sets)
    branches = []
    for year, sets in sorted(sets_of.items()):
        holds = _holds(sorted(set(sets)), f"need_y{year}", params)
        branches.append(
            "SELECT l.paper_id, l.published, l.weights FROM papers_paperlexicon l"
            f" WHERE ({' OR '.join(holds)}) AND {year_bounds_sql(year, 'l.published')}"
        )
    return f"({' UNION ALL '.join(branches)})"


def _in_years(years: list[int], name: str, params: dict) -> str:
    """`l.published` within these calendar years (UTC), one range per run of consecutive years;
    TRUE for [] (every year)."""
    runs: list[tuple[int, int]] = []
    for year in sorted(years):
        if runs and runs[-1][1] == year - 1:
            runs[-1] = (runs[-1][0], year)
        else:
            runs.append((year, year))
    spans = []
    for first, last in runs:
        params[f"{name}_{first}"] = datetime(first, 1, 1, tzinfo=UTC)
        params[f"{name}_{last}_end"] = datetime(last + 1, 1, 1, tzinfo=UTC)
        spans.append(f"(l.published >= %({name}_{first})s AND l.published < %({name}_{last}_end)s)")
    return f"({' OR '.join(spans)})" if spans else "TRUE"


_ESTIMATE = "EXPLAIN (FORMAT JSON) SELECT 1 FROM {source} l WHERE {where}"
_DOCUMENTS = (
    "SELECT greatest(reltuples, 1) FROM pg_class WHERE oid = 'papers_paperlexicon'::regclass"
)


def _share(cursor, filters: SearchFilters, years: list[int]) -> float:
    """The planner's estimate of the catalogue's share in the window's `years` (~0.3 ms): what
    reading a term whole there costs, as a share of its papers."""
    params: dict = {}
    where = f"{filters.date_conditions('l.published', params)} AND {_in_years(years, 'y', params)}"
    cursor.execute(_ESTIMATE.format(source="papers_paperlexicon", where=where), params)
    rows = float(cursor.fetchone()[0][0]["Plan"]["Plan Rows"])
    cursor.execute(_DOCUMENTS)
    return min(1.0, rows / float(cursor.fetchone()[0]))


def _rank_whole(
    cursor, qv, generator_sql, params, filters, n, source="papers_paperlexicon"
) -> list[LexicalHit]:
    """`_rank` over terms read whole, with `settings.LEXICAL_WORK_MEM` for this query: the bitmap
    of (term AND window) then stays exact. At PostgreSQL's default 4 MB a window of a 1M
    catalogue turned it lossy, and every row of ~70k pages was read and rechecked to find 83
    (1.3 s against 0.12 s at 64 MB: docs/BENCHMARKS.md, "Windowed BM25 at 1M")."""
    with transaction.atomic(using=cursor.db.alias):
        cursor.execute("SELECT set_config('work_mem', %s, true)", [settings.LEXICAL_WORK_MEM])
        return _rank(cursor, qv, generator_sql, params, filters, n, source)


def rank_terms(
    cursor,
    lexemes: list[str],
    terms: list[QueryTerm],
    weights: dict[int, float],
    filters: SearchFilters,
    n: int,
    *,
    cap: int | None = None,
) -> LexicalResult:
    """The `n` best papers for a weighted query: term id -> weight (the IDF for a plain query;
    an expanded query, chat/retrieval/refine.py, weighs its terms otherwise). The first
    `settings.LEXICAL_EXACT_HEAD` are exhaustive BM25's (see the module doc)."""
    if n <= 0 or not terms or (filters.paper_ids is not None and not filters.paper_ids):
        return LexicalResult([], lexemes, terms)
    cap = settings.LEXICAL_CANDIDATE_CAP if cap is None else cap
    qv = sparse_literal({t.id: weights[t.id] for t in terms})
    selective, rest = split_selective(terms, cap)
    walked = [t for t in rest if t.floor is not None]
    # Rare terms, and common ones without champions yet (a new index), are read whole.
    whole = [t.id for t in selective] + [t.id for t in rest if t.floor is None]
    if not walked:
        hits = _rank_whole(cursor, qv, *_generator(whole, set()), filters, n)
        return LexicalResult(hits, lexemes, terms, "postings", True)
    head = min(n, settings.LEXICAL_EXACT_HEAD)
    df = {t.id: t.df for t in walked}
    walk = _Walk(walked, weights, filters, window_floors(cursor, walked, filters))
    depth, walks, hits = settings.LEXICAL_WALK_DEPTH, 0, None
    while True:
        new = walk.deeper(cursor, depth)
        walks += 1
        if hits is None:  # the terms read whole, and the first papers read
            hits = _rank(cursor, qv, *_generator(whole, set(new)), filters, n)
        elif new:  # only the papers this walk added: the others are ranked already
            hits = _merge(hits, _rank(cursor, qv, *_generator([], set(new)), filters, n), n)
        threshold = hits[head - 1].score if len(hits) >= head else 0.0
        bounds = walk.bounds()
        # year -> the sets of terms one of which an unread paper of that year must hold (none:
        # it cannot enter the head)
        needs = {
            year: sets
            for year, year_bounds in bounds.items()
            if (sets := _needs(year_bounds, threshold))
        }
        if not needs:  # no unread paper can enter the head
            return LexicalResult(
                hits, lexemes, terms, "champions", True, walks, len(walk.papers), len(bounds),
            )  # fmt: skip
        if walk.exhausted:
            break
        # Read the rest in the years that need it when that costs less than walking 4x deeper
        # (3x as many new papers as read so far).
        if _rest_estimate(cursor, filters, needs, df) <= 3 * len(walk.papers):
            break
        depth *= 4
    # The papers holding a needed set (those read and the whole terms are ranked already).
    where, params, source = _rest(cursor, filters, needs, bounds)
    hits = _merge(hits, _rank_whole(cursor, qv, where, params, filters, n, source), n)
    every = len(needs) == len(bounds) and all(
        sorted(sets) == [(t.id,) for t in sorted(walked, key=lambda t: t.id)]
        for sets in needs.values()
    )
    return LexicalResult(
        hits, lexemes, terms, "exhaustive" if every else "essential", True, walks,
        len(walk.papers), len(bounds), len(needs),
    )  # fmt: skip


def _needs(bounds: dict[int, float], threshold: float) -> tuple[tuple[int, ...], ...]:
    """The sets of terms one of which an unread paper must hold to reach `threshold`: the
    smallest combinations (`needed_sets`), or with `settings.LEXICAL_NEEDED_SETS` off each
    essential term alone (a paper with any of them is read)."""
    if settings.LEXICAL_NEEDED_SETS:
        return tuple(needed_sets(bounds, threshold))
    return tuple((term,) for term in sorted(essential_terms(bounds, threshold)))


# At most this many GIN scans (sets x years) for a last read through the years' own indexes;
# beyond, one scan of each set in the catalogue-wide index.
_YEAR_SCANS_MAX = 160


def _rest(cursor, filters, needs: dict[int, tuple], bounds: dict) -> tuple[str, dict, str]:
    """The generator of the papers holding a needed set, in the years that need it: each set
    read once over all its years, the sets of the same years together; through each year's own
    lexicon index when the search has a window and each of its years has one
    (`settings.LEXICAL_YEAR_INDEXES`: a scan of common terms in the catalogue-wide index costs
    all their postings, of every year). With
    `settings.LEXICAL_NEEDED_SETS` off, as before: each year's essential terms, the years with
    the same terms together, through the catalogue-wide index."""
    grouped: dict[tuple, list] = {}
    if settings.LEXICAL_NEEDED_SETS:
        years_of: dict[tuple[int, ...], list[int]] = {}
        for year, sets in needs.items():
            for terms in sets:
                years_of.setdefault(terms, []).append(year)
        for terms, years in years_of.items():
            grouped.setdefault(tuple(sorted(years)), []).append(terms)
        scans = sum(
            len(years) * (any(len(t) == 1 for t in sets) + sum(len(t) > 1 for t in sets))
            for years, sets in grouped.items()
        )
        by_year = (
            settings.LEXICAL_YEAR_INDEXES
            and filters.has_window
            and scans <= _YEAR_SCANS_MAX
            and set(needs) <= lexicon_year_indexes(cursor)
        )
        if not by_year and len(grouped) == 1 and len(needs) == len(bounds):
            # every year, one arm: the window's own condition (else each arm keeps its years: an
            # arm without one would fetch its papers of every year before the window is checked)
            grouped = {(): next(iter(grouped.values()))}
        needed = [(tuple(sorted(sets)), list(years)) for years, sets in sorted(grouped.items())]
        if by_year:
            params: dict = {}
            return "TRUE", params, _by_year_source(needed, params)
        return *_generator([], set(), needed), "papers_paperlexicon"
    for year, sets in needs.items():
        grouped.setdefault(sets, []).append(year)
    if len(grouped) == 1 and len(needs) == len(bounds):
        grouped = {sets: [] for sets in grouped}  # every year: no year condition
    return *_generator([], set(), sorted(grouped.items())), "papers_paperlexicon"


def _rest_estimate(cursor, filters, needs: dict[int, tuple], df) -> float:
    """At most how many papers reading the rest would score: the share of the catalogue in the
    years that need it times the papers of the needed terms (each essential term's, as before
    `settings.LEXICAL_NEEDED_SETS`; with it, also each set's rarest term's, whichever is
    smaller). An upper bound, not the planner's estimate: terms of one topic come together
    ("languag" and "model"), so an estimate that takes them as independent read "large
    language models reasoning" whole at 1M (0.7-1.1 s) where four walks proved it (0.3 s)."""
    essential = {term for sets in needs.values() for terms in sets for term in terms}
    if not settings.LEXICAL_NEEDED_SETS:
        essential = {term for sets in needs.values() for (term,) in sets}
    papers = sum(df[t] for t in essential)
    if settings.LEXICAL_NEEDED_SETS:
        distinct = {terms for sets in needs.values() for terms in sets}
        papers = min(papers, sum(min(df[t] for t in terms) for terms in distinct))
    return _share(cursor, filters, sorted(needs)) * papers


def _merge(hits: list[LexicalHit], more: list[LexicalHit], n: int) -> list[LexicalHit]:
    """The best `n` of two rankings (a paper in both has the same score), in _RANK's order."""
    best = {hit.paper_id: hit for hit in more}
    best.update((hit.paper_id, hit) for hit in hits)
    return sorted(best.values(), key=lambda hit: (-hit.score, hit.paper_id))[:n]

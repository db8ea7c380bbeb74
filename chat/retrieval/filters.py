"""The filters every retriever applies inside its own SQL, and how they are turned into SQL.

Both retrievers (dense over Passage, lexical over PaperLexicon) filter in the query itself rather
than after it: a date window or a category applied to a top-100 afterwards would leave fewer
than k results whenever the window is selective.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime


@dataclass(frozen=True)
class SearchFilters:
    """What may be returned. `start`/`end` are inclusive, aware datetimes (UTC)."""

    start: datetime | None = None
    end: datetime | None = None
    # "cs.CL" matches that category; a bare archive ("cs", "quant-ph") also matches "cs.*".
    categories: tuple[str, ...] = ()
    # Author names as typed ("Hinton", "Yann LeCun"): a paper must list every one of them.
    authors: tuple[str, ...] = ()
    exclude_ids: tuple[int, ...] = ()
    include_hidden: bool = False
    # Resolved from `authors` by `resolve_authors` (None: no author filter).
    paper_ids: tuple[int, ...] | None = field(default=None, compare=False)

    @property
    def has_window(self) -> bool:
        return self.start is not None or self.end is not None

    @property
    def narrows(self) -> bool:
        """True when the filters may leave a small part of the catalogue."""
        return self.has_window or bool(self.categories) or self.paper_ids is not None

    def paper_conditions(self, paper: str = "p", params: dict | None = None) -> tuple[str, dict]:
        """SQL conditions on the papers table aliased `paper` (hidden, categories, authors,
        exclusions), ANDed, and their parameters. Dates are left to each retriever, which has
        them on its own table (Passage.published, PaperLexicon.published)."""
        params = {} if params is None else params
        clauses = []
        if not self.include_hidden:
            clauses.append(f"NOT {paper}.hidden")
        if self.categories:
            exact = [c for c in self.categories if "." in c]
            archives = [c for c in self.categories if "." not in c]
            parts = []
            if exact or archives:
                # Archives are also categories in their own right ("quant-ph", "hep-th").
                params["f_categories"] = exact + archives
                parts.append(f"{paper}.categories && %(f_categories)s::varchar[]")
            if archives:
                params["f_archives"] = [f"{a}.%" for a in archives]
                parts.append(
                    f"EXISTS (SELECT 1 FROM unnest({paper}.categories) AS c"
                    " WHERE c LIKE ANY(%(f_archives)s))"
                )
            clauses.append("(" + " OR ".join(parts) + ")")
        if self.paper_ids is not None:
            params["f_paper_ids"] = list(self.paper_ids)
            clauses.append(f"{paper}.id = ANY(%(f_paper_ids)s)")
        if self.exclude_ids:
            params["f_exclude"] = list(self.exclude_ids)
            clauses.append(f"{paper}.id <> ALL(%(f_exclude)s)")
        return " AND ".join(clauses) or "TRUE", params

    def date_conditions(self, column: str, params: dict) -> str:
        clauses = []
        if self.start is not None:
            params["f_start"] = self.start
            clauses.append(f"{column} >= %(f_start)s")
        if self.end is not None:
            params["f_end"] = self.end
            clauses.append(f"{column} <= %(f_end)s")
        return " AND ".join(clauses) or "TRUE"


# The authors of a paper are in Paper.search_vector with weight C (written by the ingest), so an
# author filter is one GIN lookup: every word of every name must be an author word of the paper.
_AUTHOR_PAPERS = """
SELECT p.id FROM papers_paper p
WHERE p.search_vector @@ (
    SELECT string_agg(quote_literal(lexeme) || ':C', ' & ')::tsquery
    FROM unnest(tsvector_to_array(to_tsvector('english', %(names)s))) AS lexeme
    WHERE lexeme ~ '^[[:alnum:]]+$'
)
"""


def resolve_authors(cursor, filters: SearchFilters) -> SearchFilters:
    """The filters with `paper_ids` set to the papers listing all of `filters.authors`."""
    if not filters.authors:
        return filters
    from papers.text import tex_to_plain

    names = " ".join(tex_to_plain(name) for name in filters.authors)
    cursor.execute(_AUTHOR_PAPERS, {"names": names})
    ids = tuple(row[0] for row in cursor.fetchall())
    return replace(filters, paper_ids=ids)

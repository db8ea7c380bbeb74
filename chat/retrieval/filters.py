"""The filters every retriever applies inside its own SQL, and how they are turned into SQL.

Both retrievers (dense over Passage, lexical over PaperLexicon) filter in the query itself rather
than after it: a date window or a category applied to a top-100 afterwards would leave fewer
than k results whenever the window is selective.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from papers.identifiers import matching_categories
from papers.models import Paper


@dataclass(frozen=True)
class SearchFilters:
    """What may be returned. `start`/`end` are inclusive, aware datetimes (UTC)."""

    start: datetime | None = None
    end: datetime | None = None
    # As Paper.objects.in_category: "cs.CL" itself; a bare archive ("cs") also every "cs.*".
    categories: tuple[str, ...] = ()
    # Author names as typed ("Yann LeCun"): a paper must list each, as Paper.objects.by_author.
    authors: tuple[str, ...] = ()
    exclude_ids: tuple[int, ...] = ()
    include_hidden: bool = False
    # Withdrawn papers stay in the catalogue (their pages say so) but are not offered as sources.
    include_withdrawn: bool = False
    # The papers a result must be one of (None: any): a thread's scope (chat.scopes), narrowed
    # further by `resolve_authors` to the papers of `authors`.
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
        if not self.include_withdrawn:
            clauses.append(f"NOT {paper}.withdrawn")
        if self.categories:
            params["f_categories"] = matching_categories(self.categories)
            clauses.append(f"{paper}.categories && %(f_categories)s::varchar[]")
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


def resolve_authors(filters: SearchFilters) -> SearchFilters:
    """The filters with `paper_ids` narrowed to the papers listing all of `filters.authors`
    (within the ids already there: a scoped thread's author question stays in its scope)."""
    if not filters.authors:
        return filters
    papers = Paper.objects.all()
    if filters.paper_ids is not None:
        papers = papers.filter(id__in=filters.paper_ids)
    for name in filters.authors:
        papers = papers.by_author(name)
    return replace(filters, paper_ids=tuple(papers.values_list("id", flat=True)))

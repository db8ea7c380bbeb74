"""See what search understands and returns: the analysis, then the ranked papers.

    manage.py search "diffusion models in the last two years" [--now 2026-11-21] [--k 10] [--json]

The same `chat.retrieval.search.search` as the page, the API and the chat. `--json` prints
`{"analysis": {...}, "results": [{"arxiv_id", "title", "published", "score", ...}], ...}`.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand, CommandError

from chat.retrieval.search import MAX_K, SearchError, search


def _now(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        day = date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"--now must be a date like 2026-11-21, not {value!r}") from None
    return datetime.combine(day, time(12, 0), UTC)  # noon UTC of that day


class Command(BaseCommand):
    help = "Search the catalogue as the search page does; print the analysis and ranked papers."

    def add_arguments(self, parser):
        parser.add_argument("query", help='e.g. "diffusion models since 2023"')
        parser.add_argument("--now", help="pretend today is YYYY-MM-DD (noon UTC)")
        parser.add_argument("--k", type=int, default=10, help=f"papers to return, 1..{MAX_K}")
        parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
        parser.add_argument(
            "--include-hidden", action="store_true", help="also papers hidden by staff"
        )

    def handle(self, *args, **options):
        try:
            response = async_to_sync(search)(
                options["query"],
                k=options["k"],
                now=_now(options["now"]),
                include_hidden=options["include_hidden"],
            )
        except SearchError as exc:
            raise CommandError(str(exc)) from None
        if options["json"]:
            self.stdout.write(json.dumps(response.to_dict(), indent=2, ensure_ascii=False))
            return
        self.print_analysis(response.analysis)
        for notice in response.notices:
            self.stdout.write(f"note: {notice}")
        if not response.hits:
            self.stdout.write("no papers found")
        for rank, hit in enumerate(response.hits, start=1):
            title = " ".join(hit.title.split())
            self.stdout.write(
                f"{rank:3d}. {hit.score:.4f}  {hit.published:%Y-%m-%d}  {hit.arxiv_id:<18s} "
                f"[{hit.primary_category}] {title[:90]}"
            )
            if hit.why:
                self.stdout.write(f"     why: {'; '.join(hit.why)}")
        timings = ", ".join(f"{name} {ms:.1f}" for name, ms in response.timings.items())
        self.stdout.write(f"timings (ms): {timings}")

    def print_analysis(self, analysis) -> None:
        window = "none"
        if analysis.start or analysis.end:
            start = f"{analysis.start:%Y-%m-%d}" if analysis.start else "…"
            end = f"{analysis.end:%Y-%m-%d}" if analysis.end else "…"
            window = f"{start} → {end}"
        lines = [
            f"query:      {analysis.query or '(none)'}",
            f"temporal:   {analysis.is_temporal}  window: {window}  "
            f"recency: {analysis.recency_weight:.2f}"
            + (f"  phrase: {analysis.phrase!r}" if analysis.phrase else ""),
        ]
        if analysis.authors:
            lines.append(f"authors:    {', '.join(analysis.authors)}")
        if analysis.categories:
            lines.append(f"categories: {', '.join(analysis.categories)}")
        if analysis.arxiv_id:
            lines.append(f"like:       {analysis.arxiv_id}")
        lines.append(f"read by:    {analysis.source}{'' if analysis.confident else ' (unsure)'}")
        for line in lines:
            self.stdout.write(line)

"""The search page, /search/?q=…: the same `search()` as the chat and the API, for anyone.

The window the query was read as is shown as a chip ("since 2024-11-21, recency 0.6") with a
plain GET form to change it and a link to drop it, so it works without JavaScript:

- `from`, `to` (YYYY-MM-DD, blank = open) and `recency` (0..1) present in the URL replace what
  the analysis found (the chip's form always sends all three);
- `window=off` drops the window and recency; `authors=off` and `categories=off` drop those
  filters.
"""

from __future__ import annotations

from datetime import date
from urllib.parse import urlencode

from asgiref.sync import sync_to_async
from django.conf import settings
from django.shortcuts import render
from django.utils import timezone

from chat.retrieval.search import MAX_QUERY_CHARS, SearchError, search
from chat.window import window_label
from security import throttles

CHIP_FIELDS = ("from", "to", "recency")
MAX_PAGE = 10  # search(offset) stops at 1000; ten pages of results is what people read


def _page_number(value: str) -> int:
    try:
        number = int(value or 1)
    except ValueError:
        raise SearchError(f"page must be a whole number, not {value!r}") from None
    if not 1 <= number <= MAX_PAGE:
        raise SearchError(f"page must be from 1 to {MAX_PAGE}")
    return number


def _day(value: str, name: str) -> date | None:
    value = value.strip()
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise SearchError(f"{name} must be a date like 2024-11-21, not {value!r}") from None


def _weight(value: str) -> float:
    value = value.strip()
    if not value:
        return 0.0
    try:
        return float(value)
    except ValueError:
        raise SearchError(f"recency must be a number from 0 to 1, not {value!r}") from None


def overrides_from(params) -> dict:
    """What the user changed on the chips, as `search(overrides=...)`."""
    overrides: dict = {}
    if params.get("window") == "off":
        overrides.update(start=None, end=None, recency_weight=0.0)
    elif any(field in params for field in CHIP_FIELDS):
        overrides.update(
            start=_day(params.get("from", ""), "from"),
            end=_day(params.get("to", ""), "to"),
            recency_weight=_weight(params.get("recency", "")),
        )
    if params.get("authors") == "off":
        overrides["authors"] = []
    if params.get("categories") == "off":
        overrides["categories"] = []
    return overrides


def url_with(params, **changes) -> str:
    """This page's query string with some parameters changed (None removes one)."""
    merged = {key: params.get(key) for key in params}
    for key, value in changes.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return "?" + urlencode({k: v for k, v in merged.items() if v is not None})


def window_chip(analysis, today: date) -> dict | None:
    """The chip's label and its form's values, or None when the query has no time intent."""
    start, end, weight = analysis.start, analysis.end, analysis.recency_weight
    if not (start or end or weight > 0):
        return None
    parts = [window_label({"start": start, "end": end}, today)]
    if weight > 0:
        parts.append(f"recency {weight:.1f}")
    return {
        "label": ", ".join(part for part in parts if part) or "up to today",
        "from": f"{start:%Y-%m-%d}" if start else "",
        "to": f"{end:%Y-%m-%d}" if end else "",
        "recency": f"{weight:.1f}",
    }


async def search_page(request):
    params = request.GET
    query = params.get("q", "").strip()
    context: dict = {"q": query, "max_chars": MAX_QUERY_CHARS}
    status = 200
    wait = None
    if query:
        # Signed-in users by account (the API's budget too), anonymous visitors by address.
        wait = await sync_to_async(throttles.retry_after)(
            request, throttles.SearchUserThrottle, throttles.SearchAnonThrottle
        )
    if wait is not None:
        context["error"] = f"Too many searches from you just now; try again in {wait} s."
        status = 429
    elif query:
        per_page = settings.SEARCH_RESULTS
        sort = params.get("sort") or "relevance"
        try:
            number = _page_number(params.get("page", ""))
            response = await search(
                query, k=per_page, overrides=overrides_from(params) or None,
                offset=(number - 1) * per_page, sort=sort,
            )
        except SearchError as exc:
            context["error"] = str(exc)
            status = 400
        else:
            analysis = response.analysis
            first = (number - 1) * per_page + 1
            last_page = min(MAX_PAGE, -(-response.total // per_page))
            context.update(
                sort=sort,
                sort_urls={
                    name: url_with(params, sort=None if name == "relevance" else name, page=None)
                    for name in ("relevance", "date")
                },
                first=first,
                last=first + len(response.hits) - 1,
                total=response.total,
                page_number=number,
                prev_url=url_with(params, page=number - 1 if number > 2 else None)
                if number > 1 else None,
                next_url=url_with(params, page=number + 1) if number < last_page else None,
                response=response,
                hits=response.hits,
                analysis=analysis,
                chip=window_chip(analysis, timezone.now().date()),
                remove_window_url=url_with(
                    params, window="off", **{field: None for field in CHIP_FIELDS}
                ),
                remove_authors_url=url_with(params, authors="off"),
                remove_categories_url=url_with(params, categories="off"),
                total_ms=round(response.timings.get("total", 0.0)),
                restore_window_url=url_with(params, window=None)
                if params.get("window") == "off"
                else None,
            )
    # Rendering reads request.user (the header): a database access, so not on the event loop.
    response = await sync_to_async(render)(request, "search.html", context, status=status)
    if wait is not None:
        response["Retry-After"] = str(wait)
    return response

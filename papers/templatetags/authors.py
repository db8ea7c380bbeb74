"""`{{ paper.authors_text|author_links }}`: every author name on a card or page links to that
author's page (papers:author). The one place names become links."""

from functools import lru_cache

from django import template
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from papers.text import author_key

register = template.Library()

# A card names this many authors, then "+N more" (the paper page names them all).
CARD_AUTHORS = 8


def author_url(name: str) -> str:
    return _author_path(author_key(name), get_script_prefix(), get_urlconf())


@lru_cache(maxsize=8192)
def _author_path(key: str, prefix: str, urlconf) -> str:
    # Every source card of an answer links each author: `reverse` was 3% of the server's CPU
    # in `bench_chat concurrent` (docs/BENCHMARKS.md, "Cutting the answer path's CPU"), and the
    # same authors come back. Keyed by what `reverse` reads besides the key.
    return reverse("papers:author", kwargs={"key": key}, urlconf=urlconf)


def author_names(names) -> list[str]:
    """The names that can have a page, from the denormalised "A. One, B. Two" or a list."""
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",")]
    return [n for n in names if n and author_key(n)]


def author_entries(names, limit: int = CARD_AUTHORS) -> dict:
    """The links as data, for pages that draw cards in the browser (chat.js's live source
    cards): {"links": [{"name", "url"}], "more": names not shown}."""
    names = author_names(names)
    shown = names[:limit] if limit else names
    return {
        "links": [{"name": n, "url": author_url(n)} for n in shown],
        "more": len(names) - len(shown),
    }


@register.filter
def author_links(names, limit: int = CARD_AUTHORS):
    """Names (the denormalised "A. One, B. Two", or a list) as escaped links, at most `limit`."""
    names = author_names(names)
    shown = names[: int(limit)] if limit else names
    links = format_html_join(
        ", ", '<a class="author" href="{}">{}</a>', ((author_url(n), n) for n in shown)
    )
    if len(names) > len(shown):
        return format_html("{} <span class=\"muted\">+{} more</span>", links, len(names) - len(shown))
    return mark_safe(links)  # noqa: S308 -- built by format_html_join: every name escaped

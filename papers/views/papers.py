"""The paper browser (/papers/) and a paper's page (/papers/<arxiv id>/). Hidden papers are
never listed, searched or shown."""

import calendar
import re
from datetime import UTC, date, datetime, time

from django.contrib.postgres.search import SearchQuery, SearchRank
from django.core.paginator import Paginator
from django.db.models import F
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from papers.bibtex import bibtex_download, bibtex_entry
from papers.catalogue import catalogue_status
from papers.fulltext.status import fulltext_status
from papers.identifiers import CATEGORY, InvalidArxivId, parse_arxiv_id, split_version
from papers.models import Author, Paper, active_embedding_model
from papers.text import tex_to_plain
from security import inputs

PAGE_SIZE = 20
SIMILAR_PAPERS = 5
MAX_QUERY_CHARS = 300
CARD_FIELDS = ("arxiv_id", "title", "authors_text", "published", "primary_category", "withdrawn")


def _parse_day(text: str, *, end: bool) -> datetime:
    """ "2024", "2024-03" or "2024-03-15" as the first (or, for `end`, last) moment it covers."""
    text = text.strip()
    if re.fullmatch(r"\d{4}", text):
        day = date(int(text), 12 if end else 1, 31 if end else 1)
    elif re.fullmatch(r"\d{4}-\d{2}", text):
        year, month = (int(p) for p in text.split("-"))
        day = date(year, month, calendar.monthrange(year, month)[1] if end else 1)
    else:
        day = date.fromisoformat(text)  # ValueError for anything else
    return datetime.combine(day, time.max if end else time.min, tzinfo=UTC)


def paper_list(request):
    params = request.GET
    if (problem := inputs.first_problem(params.values())) is not None:
        # NUL or a lone surrogate would fail in the query, as a 500; say what is wrong instead.
        return render(
            request, "400.html", {"message": problem, "back": reverse("papers:list")}, status=400
        )
    query = params.get("q", "").strip()[:MAX_QUERY_CHARS]
    category = params.get("category", "").strip()
    author = params.get("author", "").strip()[:MAX_QUERY_CHARS]
    errors: list[str] = []

    # A pasted identifier or arXiv link goes straight to the paper.
    if query:
        try:
            arxiv_id, _ = parse_arxiv_id(query)
        except InvalidArxivId:
            pass
        else:
            if Paper.objects.visible().filter(arxiv_id=arxiv_id).exists():
                return redirect("papers:detail", arxiv_id=arxiv_id)

    papers = Paper.objects.visible()
    window = {}
    for name, end in (("from", False), ("to", True)):
        value = params.get(name, "").strip()
        if value:
            try:
                window[name] = _parse_day(value, end=end)
            except ValueError:
                errors.append(f"“{value}” is not a date: use 2024, 2024-03 or 2024-03-15.")
    if "from" in window and "to" in window and window["from"] > window["to"]:
        errors.append("The “from” date is after the “to” date.")
    else:
        papers = papers.published_between(window.get("from"), window.get("to"))
    if category:
        if re.fullmatch(CATEGORY, category):
            papers = papers.in_category(category)
        else:
            errors.append(f"“{category}” is not an arXiv category (like cs.CL or hep-th).")
    if author:
        papers = papers.by_author(author)

    plain_query = tex_to_plain(query)
    if plain_query:
        search = SearchQuery(plain_query, search_type="websearch", config="english")
        papers = (
            papers.filter(search_vector=search)
            .annotate(rank=SearchRank(F("search_vector"), search))
            .order_by("-rank", "-published")
        )
    else:
        papers = papers.order_by("-published")

    page = Paginator(papers.only(*CARD_FIELDS), PAGE_SIZE).get_page(params.get("page"))
    filters = params.copy()
    filters.pop("page", None)
    return render(
        request,
        "papers/list.html",
        {
            "page": page,
            "query": query,
            "category": category,
            "author": author,
            "date_from": params.get("from", ""),
            "date_to": params.get("to", ""),
            "errors": errors,
            # The count names every filter it applied, and none it could not read.
            "date_error": any("date" in e for e in errors),
            "category_error": any("category" in e for e in errors),
            "filters": filters.urlencode(),
            "filtered": bool(query or category or author or window),
            "catalogue": catalogue_status(),
        },
    )


def paper_detail(request, arxiv_id: str):
    bare, version = split_version(arxiv_id)
    if bare != arxiv_id:
        # One page per paper, whatever version or subject class ("math.GT/…") a link names; the
        # version named (an answer cites the one it read) is kept, to say if a newer one exists.
        url = reverse("papers:detail", kwargs={"arxiv_id": bare})
        return redirect(f"{url}?version={version}" if version else url, permanent=True)
    paper = get_object_or_404(Paper.objects.visible(), arxiv_id=bare)
    try:
        read_version = int(request.GET.get("version", ""))
    except ValueError:
        read_version = None
    authors = [a.author for a in paper.authorships.select_related("author").order_by("position")]
    model = active_embedding_model()
    similar = Paper.objects.visible().similar_to(paper, model, SIMILAR_PAPERS) if model else []
    return render(
        request,
        "papers/detail.html",
        {
            "paper": paper,
            "fulltext": fulltext_status(paper),
            "authors": authors,
            "author_names": [a.name for a in authors],
            "similar": similar,
            "embedding_model": model,
            # A link naming an older version than the catalogue has (a cited source card).
            "older_version": read_version
            if read_version and read_version < paper.version
            else None,
        },
    )


def paper_bibtex(request, arxiv_id: str):
    """The paper's BibTeX entry (arXiv's shape) as a .bib download."""
    bare, _version = split_version(arxiv_id)
    paper = get_object_or_404(Paper.objects.visible(), arxiv_id=bare)
    return bibtex_download(bibtex_entry(paper), paper.arxiv_id)


def author_page(request, key: str):
    """An author's papers in the catalogue, newest first (from the Author model: one spelling of
    a name is one author; links come from the author_links filter)."""
    author = get_object_or_404(Author, key=key)
    papers = (
        Paper.objects.visible().filter(authorships__author=author).order_by("-published")
    )
    page = Paginator(papers.only(*CARD_FIELDS), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "papers/author.html", {"author": author, "page": page})


@require_GET
def fulltext_status_json(request, arxiv_id: str):
    """The paper's full-text state, polled by its page while the text is queued or being read."""
    paper = get_object_or_404(Paper.objects.visible(), arxiv_id=split_version(arxiv_id)[0])
    response = JsonResponse(fulltext_status(paper))
    response["Cache-Control"] = "no-store"
    return response

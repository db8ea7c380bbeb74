"""Library pages: the collections, one collection, saving a paper, notes, BibTeX, and asking.

Every collection is looked up through its owner (`_owned_collection`), so another user's
collection id answers 404 exactly like one that does not exist.
"""

import re

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_POST

from chat.scopes import Scope, start_scoped_thread
from library.models import NOTE_MAX, Collection, SavedPaper, name_problem, save_paper
from papers.bibtex import bibtex_download, bibtex_for
from papers.identifiers import InvalidArxivId, parse_arxiv_id
from papers.models import Paper
from papers.text import clean_title
from security import inputs


def _owned_collection(request, pk) -> Collection:
    return get_object_or_404(Collection, pk=pk, owner=request.user)


def _refused(request, problem: str, back: str, status: int = 400) -> HttpResponse:
    """Input that cannot be stored: a 400 that says why, with the way back."""
    if _wants_json(request):
        return JsonResponse({"error": {"code": "invalid", "message": problem}}, status=status)
    return render(request, "400.html", {"message": problem, "back": back}, status=status)


def _wants_json(request) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def _back(request, default: str) -> str:
    """Where a form came from (`next`), if it is one of our own pages."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return default


def _clean_name(request) -> tuple[str, str | None]:
    name = clean_title(request.POST.get("name", ""))
    return name, inputs.problem(name) or name_problem(name)


@login_required
@require_GET
def index(request):
    collections = Collection.objects.owned_by(request.user).with_counts()
    return render(request, "library/index.html", {"collections": collections})


@login_required
@require_POST
def create_collection(request):
    name, problem = _clean_name(request)
    if problem:
        return _refused(request, problem, reverse("library:index"))
    collection = Collection.objects.create(owner=request.user, name=name)
    messages.success(request, f"Collection “{name}” created.")
    return redirect("library:collection", pk=collection.pk)


@login_required
@require_GET
def collection_page(request, pk):
    collection = _owned_collection(request, pk)
    saved = collection.saved.select_related("paper").order_by("-added_at")
    return render(
        request,
        "library/collection.html",
        {
            "collection": collection, "saved": saved, "note_max": NOTE_MAX,
            "bibtex_url": reverse("library:bibtex", args=[collection.pk]) if saved else "",
        },
    )


@login_required
@require_POST
def rename_collection(request, pk):
    collection = _owned_collection(request, pk)
    name, problem = _clean_name(request)
    if problem:
        return _refused(request, problem, reverse("library:collection", args=[pk]))
    collection.name = name
    collection.save(update_fields=["name", "updated_at"])
    messages.success(request, "Collection renamed.")
    return redirect("library:collection", pk=pk)


@login_required
@require_POST
def delete_collection(request, pk):
    collection = _owned_collection(request, pk)
    collection.delete()
    messages.success(request, f"Collection “{collection.name}” deleted.")
    return redirect("library:index")


@login_required
@require_POST
def save(request):
    """Save a paper (`arxiv_id`) into one of the user's collections (`collection`), or into a
    new one (`new_name`). Answers JSON to scripts, a redirect back to the page otherwise."""
    back = _back(request, reverse("library:index"))
    try:
        arxiv_id, _version = parse_arxiv_id(request.POST.get("arxiv_id", ""))
    except InvalidArxivId as exc:
        return _refused(request, str(exc), back)
    paper = Paper.objects.visible().filter(arxiv_id=arxiv_id).first()
    if paper is None:
        return _refused(request, f"No paper {arxiv_id} in the catalogue.", back, status=404)
    note = request.POST.get("note", "")
    if problem := inputs.problem(note) or (
        f"Notes are limited to {NOTE_MAX} characters." if len(note) > NOTE_MAX else None
    ):
        return _refused(request, problem, back)
    new_name = clean_title(request.POST.get("new_name", ""))
    if new_name:
        if problem := inputs.problem(new_name) or name_problem(new_name):
            return _refused(request, problem, back)
        collection = Collection.objects.create(owner=request.user, name=new_name)
    else:
        collection_id = request.POST.get("collection", "")
        if not re.fullmatch(r"[0-9]{1,18}", collection_id):
            return _refused(request, "Choose a collection or name a new one.", back)
        collection = _owned_collection(request, int(collection_id))
    _saved, created = save_paper(collection, paper, note)
    text = (
        f"Saved to “{collection.name}”." if created else f"Already in “{collection.name}”."
    )
    if _wants_json(request):
        return JsonResponse({
            "saved": True, "created": created, "message": text,
            "collection": {"id": collection.pk, "name": collection.name,
                           "url": reverse("library:collection", args=[collection.pk])},
        })
    messages.success(request, text)
    return redirect(back)


def _owned_saved(request, pk, saved_pk) -> SavedPaper:
    return get_object_or_404(
        SavedPaper.objects.select_related("collection"),
        pk=saved_pk, collection__pk=pk, collection__owner=request.user,
    )


@login_required
@require_POST
def edit_note(request, pk, saved_pk):
    saved = _owned_saved(request, pk, saved_pk)
    note = request.POST.get("note", "").strip()
    back = reverse("library:collection", args=[pk])
    if problem := inputs.problem(note):
        return _refused(request, problem, back)
    if len(note) > NOTE_MAX:
        return _refused(request, f"Notes are limited to {NOTE_MAX} characters.", back)
    saved.note = note
    saved.save(update_fields=["note"])
    messages.success(request, "Note saved.")
    return redirect(f"{back}#saved-{saved.pk}")


@login_required
@require_POST
def remove_paper(request, pk, saved_pk):
    saved = _owned_saved(request, pk, saved_pk)
    saved.delete()
    saved.collection.save(update_fields=["updated_at"])
    messages.success(request, "Removed from the collection.")
    return redirect("library:collection", pk=pk)


def collection_scope(collection: Collection) -> Scope:
    """The chat scope of a collection: its papers, named by it."""
    ids = tuple(collection.saved.order_by("added_at").values_list("paper_id", flat=True))
    return Scope(kind="collection", ref=str(collection.pk), label=collection.name, paper_ids=ids)


@login_required
@require_POST
def ask_collection(request, pk):
    """A new chat thread restricted to the collection's papers."""
    collection = _owned_collection(request, pk)
    scope = collection_scope(collection)
    if not scope.paper_ids:
        messages.error(request, "Save a paper into this collection before asking about it.")
        return redirect("library:collection", pk=pk)
    thread = start_scoped_thread(request.user, scope, title=f"About “{collection.name}”")
    return redirect("chat:thread", pk=thread.pk)


@login_required
@require_GET
def collection_bibtex(request, pk):
    """The collection as a .bib file: one arXiv-style entry per paper, oldest saved first, each
    with the reader's note as a `note` field."""
    collection = _owned_collection(request, pk)
    saved = list(
        collection.saved.order_by("added_at").select_related("paper")
        .prefetch_related("paper__authorships__author")
    )
    text = bibtex_for([s.paper for s in saved], notes={s.paper_id: s.note for s in saved})
    return bibtex_download(text, slugify(collection.name) or "collection")

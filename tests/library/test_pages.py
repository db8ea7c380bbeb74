"""Library pages: collections, saving from any page, notes, removal, and owner scoping."""

import pytest
from django.urls import reverse

from chat.models import Thread
from chat.scopes import scope_of
from library.models import Collection, SavedPaper

pytestmark = pytest.mark.django_db


def test_library_lists_my_collections_with_counts(owner_client, collection, stranger):
    Collection.objects.create(owner=stranger, name="Sam's secret list")
    page = owner_client.get("/library/").content.decode()
    assert "Reading list" in page and "1 paper" in page
    assert "secret" not in page


def test_anonymous_is_sent_to_log_in(anonymous):
    response = anonymous.get("/library/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_create_rename_delete(owner_client, owner):
    response = owner_client.post("/library/new/", {"name": "  Diffusion   for video "})
    collection = Collection.objects.get(owner=owner)
    assert collection.name == "Diffusion for video"
    assert response["Location"] == reverse("library:collection", args=[collection.pk])
    owner_client.post(f"/library/{collection.pk}/rename/", {"name": "Video"})
    collection.refresh_from_db()
    assert collection.name == "Video"
    owner_client.post(f"/library/{collection.pk}/delete/")
    assert not Collection.objects.filter(pk=collection.pk).exists()


@pytest.mark.parametrize("name", ["", "   ", "x" * 201, "bad\x00name"])
def test_bad_names_are_refused_with_a_reason(owner_client, owner, name):
    response = owner_client.post("/library/new/", {"name": name})
    assert response.status_code == 400
    assert b"name" in response.content or b"NUL" in response.content
    assert not Collection.objects.filter(owner=owner).exists()


def test_save_from_a_page_comes_back_to_it(owner_client, collection, papers):
    response = owner_client.post("/library/save/", {
        "arxiv_id": "2402.00002v3", "collection": collection.pk, "next": "/search/?q=rag",
    })
    assert response.status_code == 302 and response["Location"] == "/search/?q=rag"
    assert set(collection.papers().values_list("arxiv_id", flat=True)) == {
        "2401.00001", "2402.00002"}


def test_save_twice_keeps_one_row_and_its_note(owner_client, collection, papers):
    owner_client.post("/library/save/", {"arxiv_id": "2401.00001", "collection": collection.pk})
    saved = SavedPaper.objects.get(collection=collection)
    assert saved.note == "Read section 3"


def test_save_into_a_new_collection_answers_json(owner_client, owner, papers):
    response = owner_client.post(
        "/library/save/", {"arxiv_id": "2403.00003", "new_name": "Molecules"},
        HTTP_ACCEPT="application/json",
    )
    data = response.json()
    assert data["created"] and data["collection"]["name"] == "Molecules"
    assert Collection.objects.get(owner=owner, name="Molecules").papers().get().arxiv_id == (
        "2403.00003")


def test_save_refuses_unknown_paper_and_foreign_next(owner_client, collection):
    response = owner_client.post("/library/save/", {
        "arxiv_id": "2412.99999", "collection": collection.pk, "next": "https://evil.example/",
    })
    assert response.status_code == 404 and b"2412.99999" in response.content
    assert b"evil.example" not in response.content


def test_stranger_cannot_save_into_my_collection(stranger_client, collection):
    response = stranger_client.post(
        "/library/save/", {"arxiv_id": "2402.00002", "collection": collection.pk})
    assert response.status_code == 404
    assert collection.saved.count() == 1


def test_collection_page_shows_papers_and_notes_escaped(owner_client, collection):
    saved = collection.saved.get()
    owner_client.post(
        f"/library/{collection.pk}/saved/{saved.pk}/note/", {"note": "<script>x</script> good"})
    page = owner_client.get(f"/library/{collection.pk}/").content.decode()
    assert "Diffusion models for video" in page
    assert "&lt;script&gt;x&lt;/script&gt; good" in page and "<script>x" not in page


def test_remove_paper(owner_client, collection):
    saved = collection.saved.get()
    owner_client.post(f"/library/{collection.pk}/saved/{saved.pk}/remove/")
    assert not collection.saved.exists()


@pytest.mark.parametrize("path", [
    "/library/{pk}/", "/library/{pk}/rename/", "/library/{pk}/delete/", "/library/{pk}/ask/",
    "/library/{pk}/saved/{saved}/note/", "/library/{pk}/saved/{saved}/remove/",
])
def test_stranger_gets_404_everywhere(stranger_client, collection, path):
    url = path.format(pk=collection.pk, saved=collection.saved.get().pk)
    method = stranger_client.get if url.endswith(f"{collection.pk}/") else stranger_client.post
    assert method(url, {"name": "mine now", "note": "mine"}).status_code == 404
    collection.refresh_from_db()
    assert collection.name == "Reading list" and collection.saved.get().note == "Read section 3"


def test_ask_about_a_collection_opens_a_scoped_thread(owner_client, owner, collection, papers):
    response = owner_client.post(f"/library/{collection.pk}/ask/")
    thread = Thread.objects.get(owner=owner)
    assert response["Location"] == reverse("chat:thread", args=[thread.pk])
    scope = scope_of(thread)
    assert scope.kind == "collection" and scope.ref == str(collection.pk)
    assert scope.label == "Reading list" and scope.paper_ids == (papers[0].pk,)


def test_ask_about_an_empty_collection_says_what_to_do(owner_client, owner):
    empty = Collection.objects.create(owner=owner, name="Empty")
    response = owner_client.post(f"/library/{empty.pk}/ask/", follow=True)
    assert b"Save a paper into this collection" in response.content
    assert not Thread.objects.filter(owner=owner).exists()


def test_save_menu_on_search_paper_page_and_sources(owner_client, collection, saved_thread):
    paper_page = owner_client.get("/papers/2401.00001/").content.decode()
    assert 'class="save-menu"' in paper_page and "Reading list" in paper_page
    thread_page = owner_client.get(f"/chat/{saved_thread.pk}/").content.decode()
    assert thread_page.count('name="arxiv_id" value="2401.00001"') == 1  # the saved card
    assert 'id="save-menu-template"' in thread_page


def test_no_save_menu_for_anonymous(anonymous, papers):
    assert b"save-menu" not in anonymous.get("/papers/2401.00001/").content


def test_collection_exports_bibtex_that_parses(owner_client, collection, papers):
    import bibtexparser

    owner_client.post("/library/save/", {"arxiv_id": "2402.00002", "collection": collection.pk})
    response = owner_client.get(f"/library/{collection.pk}/bibtex/")
    assert response["Content-Type"].startswith("application/x-bibtex")
    assert 'filename="reading-list.bib"' in response["Content-Disposition"]
    library = bibtexparser.parse_string(response.content.decode())
    entries = {e.fields_dict["eprint"].value: e for e in library.entries}
    assert list(entries) == ["2401.00001", "2402.00002"]  # oldest saved first
    first = entries["2401.00001"]
    assert first.entry_type == "misc" and first.fields_dict["archivePrefix"].value == "arXiv"
    assert first.fields_dict["author"].value == "Ada Lovelace and Alan Turing"
    assert first.fields_dict["note"].value == "Read section 3"
    assert "note" not in entries["2402.00002"].fields_dict
    page = owner_client.get(f"/library/{collection.pk}/").content.decode()
    assert f'href="/library/{collection.pk}/bibtex/"' in page


def test_stranger_cannot_export_my_collection(stranger_client, collection):
    assert stranger_client.get(f"/library/{collection.pk}/bibtex/").status_code == 404

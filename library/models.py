"""A user's library: named collections of saved papers, each with a note.

Every query goes through the owner (`Collection.objects.owned_by(user)`), so another user's
collection id answers 404 exactly like one that does not exist.
"""

from django.conf import settings
from django.db import models

from papers.models import Paper


class CollectionQuerySet(models.QuerySet):
    def owned_by(self, user):
        return self.filter(owner=user)

    def with_counts(self):
        return self.annotate(paper_count=models.Count("saved"))


class Collection(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="collections"
    )
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = CollectionQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_at"]
        indexes = [
            # The library page: a user's collections, most recently changed first.
            models.Index(fields=["owner", "-updated_at"], name="library_coll_owner_upd_idx"),
        ]

    def __str__(self):
        return self.name

    def papers(self):
        """The collection's papers, most recently saved first."""
        return Paper.objects.filter(saved__collection=self).order_by("-saved__added_at")


class SavedPaper(models.Model):
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="saved")
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="saved")
    note = models.TextField(blank=True)
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-added_at"]
        constraints = [
            # A paper is saved once per collection (saving again keeps the first, and its note).
            models.UniqueConstraint(
                fields=["collection", "paper"], name="library_unique_paper_per_collection"
            ),
        ]

    def __str__(self):
        return f"{self.paper_id} in {self.collection_id}"


NAME_MAX = Collection._meta.get_field("name").max_length
NOTE_MAX = 10_000  # characters of a note: a paragraph or several, not a paper


def name_problem(name: str) -> str | None:
    """Why `name` (already cleaned) cannot name a collection, or None."""
    if not name:
        return "A collection needs a name."
    if len(name) > NAME_MAX:
        return f"Collection names are limited to {NAME_MAX} characters."
    return None


def save_paper(collection: Collection, paper: Paper, note: str = "") -> tuple[SavedPaper, bool]:
    """Save `paper` into `collection` (idempotent: saving again keeps the first note unless a new
    one is given). Returns the saved row and whether it is new."""
    saved, created = SavedPaper.objects.get_or_create(
        collection=collection, paper=paper, defaults={"note": note}
    )
    if not created and note and note != saved.note:
        saved.note = note
        saved.save(update_fields=["note"])
    collection.save(update_fields=["updated_at"])
    return saved, created

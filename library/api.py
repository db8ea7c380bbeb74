"""Library API: a user's collections and the papers saved in them. Every lookup goes through
the caller, so another user's collection answers 404, exactly like an id that does not exist."""

from django.db import IntegrityError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_view,
)
from rest_framework import generics, serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from api.pagination import ApiCursorPagination
from library.models import NAME_MAX, NOTE_MAX, Collection, SavedPaper, save_paper
from papers.identifiers import InvalidArxivId, parse_arxiv_id
from papers.models import Paper
from papers.text import clean_title
from security import inputs

COLLECTION_ID = OpenApiParameter(
    "collection_id", OpenApiTypes.INT, OpenApiParameter.PATH,
    description="The collection's id (from `GET /api/collections/`).",
)
ARXIV_ID = OpenApiParameter(
    "arxiv_id", OpenApiTypes.STR, OpenApiParameter.PATH,
    description="The saved paper's arXiv id (a version suffix is ignored).",
)


class StorableCharField(serializers.CharField):
    """Refuses NUL and lone surrogates with a message that says where."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if (problem := inputs.problem(value)) is not None:
            raise serializers.ValidationError(problem, code="invalid_text")
        return value


class CollectionSerializer(serializers.ModelSerializer):
    name = StorableCharField(max_length=NAME_MAX, help_text="The collection's name.")
    paper_count = serializers.IntegerField(read_only=True, help_text="Papers saved in it.")

    def validate_name(self, value: str) -> str:
        value = clean_title(value)
        if not value:
            raise serializers.ValidationError("A collection needs a name.")
        return value

    class Meta:
        model = Collection
        fields = ["id", "name", "paper_count", "created_at", "updated_at"]
        read_only_fields = ["id", "paper_count", "created_at", "updated_at"]


class SavedPaperSerializer(serializers.ModelSerializer):
    arxiv_id = StorableCharField(
        source="paper.arxiv_id", max_length=60,
        help_text="The paper's arXiv id (2401.12345 or hep-th/9901001; a version is ignored).",
    )
    title = serializers.CharField(source="paper.title", read_only=True, help_text="Its title.")
    note = StorableCharField(
        max_length=NOTE_MAX, required=False, allow_blank=True, default="",
        help_text="Your note on the paper.",
    )

    class Meta:
        model = SavedPaper
        fields = ["arxiv_id", "title", "note", "added_at"]
        read_only_fields = ["title", "added_at"]

    def validate_arxiv_id(self, value: str) -> str:
        try:
            arxiv_id, _version = parse_arxiv_id(value)
        except InvalidArxivId as exc:
            raise serializers.ValidationError(str(exc)) from None
        return arxiv_id


class NoteSerializer(serializers.ModelSerializer):
    note = StorableCharField(max_length=NOTE_MAX, allow_blank=True, help_text="Your note.")

    class Meta:
        model = SavedPaper
        fields = ["note"]


def collection_for(user, collection_id) -> Collection:
    collection = Collection.objects.owned_by(user).with_counts().filter(pk=collection_id).first()
    if collection is None:
        raise NotFound("No such collection.")
    return collection


class CollectionPagination(ApiCursorPagination):
    ordering = ("-updated_at", "-id")


class SavedPagination(ApiCursorPagination):
    ordering = ("-added_at", "-id")


@extend_schema_view(
    get=extend_schema(operation_id="collections_list", summary="List your collections",
                      description="Your library's collections, most recently changed first.",
                      tags=["library"]),
    post=extend_schema(operation_id="collections_create", summary="Create a collection",
                       responses={201: CollectionSerializer}, tags=["library"]),
)
class CollectionListView(generics.ListCreateAPIView):
    serializer_class = CollectionSerializer
    pagination_class = CollectionPagination

    def get_queryset(self):
        return Collection.objects.owned_by(self.request.user).with_counts()

    def perform_create(self, serializer):
        collection = serializer.save(owner=self.request.user)
        collection.paper_count = 0


@extend_schema_view(
    get=extend_schema(operation_id="collections_retrieve", parameters=[COLLECTION_ID],
                      summary="One of your collections", tags=["library"]),
    patch=extend_schema(operation_id="collections_update", parameters=[COLLECTION_ID],
                        summary="Rename a collection", tags=["library"]),
    delete=extend_schema(operation_id="collections_destroy", parameters=[COLLECTION_ID],
                         summary="Delete a collection",
                         description="Deletes the collection and its notes (not the papers).",
                         tags=["library"]),
)
class CollectionDetailView(generics.RetrieveUpdateDestroyAPIView):
    serializer_class = CollectionSerializer
    http_method_names = ["get", "patch", "delete", "head", "options"]

    def get_object(self):
        return collection_for(self.request.user, self.kwargs["collection_id"])


@extend_schema_view(
    get=extend_schema(operation_id="collections_papers_list", parameters=[COLLECTION_ID],
                      summary="Papers in a collection",
                      description="Saved papers with your notes, most recently saved first.",
                      tags=["library"]),
    post=extend_schema(operation_id="collections_papers_create", parameters=[COLLECTION_ID],
                       summary="Save a paper into a collection",
                       description="Idempotent: saving a paper again keeps one row (a "
                       "non-empty note replaces the old one).",
                       responses={201: SavedPaperSerializer, 200: SavedPaperSerializer},
                       tags=["library"]),
)
class SavedPaperListView(generics.ListCreateAPIView):
    serializer_class = SavedPaperSerializer
    pagination_class = SavedPagination

    def get_queryset(self):
        collection = collection_for(self.request.user, self.kwargs["collection_id"])
        return collection.saved.select_related("paper")

    def create(self, request, *args, **kwargs):
        collection = collection_for(request.user, self.kwargs["collection_id"])
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        arxiv_id = serializer.validated_data["paper"]["arxiv_id"]
        paper = Paper.objects.visible().filter(arxiv_id=arxiv_id).first()
        if paper is None:
            raise NotFound(f"No paper {arxiv_id} in the catalogue.")
        try:
            saved, created = save_paper(collection, paper, serializer.validated_data["note"])
        except IntegrityError:  # saved by a concurrent request: the row exists now
            saved, created = collection.saved.get(paper=paper), False
        return Response(self.get_serializer(saved).data, status=201 if created else 200)


@extend_schema_view(
    get=extend_schema(operation_id="collections_papers_retrieve",
                      parameters=[COLLECTION_ID, ARXIV_ID], summary="One saved paper",
                      responses=SavedPaperSerializer, tags=["library"]),
    patch=extend_schema(operation_id="collections_papers_update",
                        parameters=[COLLECTION_ID, ARXIV_ID], summary="Edit the note",
                        request=NoteSerializer, responses=SavedPaperSerializer,
                        tags=["library"]),
    delete=extend_schema(operation_id="collections_papers_destroy",
                         parameters=[COLLECTION_ID, ARXIV_ID],
                         summary="Remove a paper from a collection", tags=["library"]),
)
class SavedPaperDetailView(generics.RetrieveUpdateDestroyAPIView):
    http_method_names = ["get", "patch", "delete", "head", "options"]

    def get_serializer_class(self):
        return NoteSerializer if self.request.method == "PATCH" else SavedPaperSerializer

    def get_object(self):
        collection = collection_for(self.request.user, self.kwargs["collection_id"])
        try:
            arxiv_id, _version = parse_arxiv_id(self.kwargs["arxiv_id"])
        except InvalidArxivId:
            arxiv_id = ""
        saved = collection.saved.select_related("paper").filter(paper__arxiv_id=arxiv_id).first()
        if saved is None:
            raise NotFound(f"No paper {self.kwargs['arxiv_id']} in this collection.")
        return saved

    def update(self, request, *args, **kwargs):
        super().update(request, *args, **kwargs)
        return Response(SavedPaperSerializer(self.get_object()).data)

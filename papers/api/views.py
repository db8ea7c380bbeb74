"""Papers API: the catalogue with filters, one paper, and its nearest neighbours."""

from django.contrib.postgres.search import SearchQuery
from django.db.models import Prefetch
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework import generics
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.response import Response
from rest_framework.views import APIView

from api.pagination import ApiCursorPagination
from papers.api.serializers import (
    BibtexSerializer,
    PaperDetailSerializer,
    PaperFilterSerializer,
    PaperSerializer,
    SimilarPapersSerializer,
    SimilarParamsSerializer,
    day_end,
    day_start,
)
from papers.bibtex import bibtex_entry, citation_key
from papers.identifiers import ARXIV_ID, split_version
from papers.models import Authorship, Paper, Passage, active_embedding_model
from papers.text import tex_to_plain

ARXIV_ID_PARAMETER = OpenApiParameter(
    "arxiv_id",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    pattern=rf"^{ARXIV_ID}(v\d+)?$",
    description="arXiv identifier, new style (2401.12345) or old style with its slash "
    "(hep-th/9901001); a version suffix (v2) is accepted and ignored.",
    examples=[
        OpenApiExample("new style", value="2401.12345"),
        OpenApiExample("old style", value="hep-th/9901001"),
    ],
)


class PaperPagination(ApiCursorPagination):
    ordering = ("-published", "-id")


def with_authors(papers):
    """Papers with their authors prefetched in order (one query, not one per paper)."""
    return papers.prefetch_related(
        Prefetch("authorships", queryset=Authorship.objects.select_related("author"))
    )


def papers_for(user):
    """The papers a user may see: staff see hidden ones too."""
    return with_authors(Paper.objects.all() if user.is_staff else Paper.objects.visible())


def get_paper_for(user, arxiv_id: str) -> Paper:
    """The paper with this id (any version suffix dropped), or 404 if absent or hidden."""
    bare_id, _version = split_version(arxiv_id)
    paper = papers_for(user).filter(arxiv_id=bare_id).first()
    if paper is None:
        raise NotFound(f"No paper {bare_id} in the catalogue.")
    return paper


class PaperListView(generics.ListAPIView):
    serializer_class = PaperSerializer
    pagination_class = PaperPagination

    @extend_schema(
        operation_id="papers_list",
        summary="List papers",
        description="The catalogue newest first, filtered by any combination of full-text "
        "query, category, author and first-publication window. Cursor-paginated.",
        parameters=[PaperFilterSerializer],
        responses=OpenApiResponse(PaperSerializer(many=True), description="A page of papers."),
        tags=["papers"],
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        filters = PaperFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        params = filters.validated_data
        user = self.request.user

        qs = papers_for(user)
        if params.get("hidden"):
            if not user.is_staff:
                raise PermissionDenied("Only staff can list hidden papers.")
            qs = qs.filter(hidden=True)
        else:
            qs = qs.filter(hidden=False)
        if q := tex_to_plain(params.get("q")):
            # Same normalisation as the indexed text (TeX and accents folded), English stemming.
            qs = qs.filter(search_vector=SearchQuery(q, search_type="websearch", config="english"))
        if category := params.get("category"):
            qs = qs.in_category(category)
        if author := params.get("author"):
            qs = qs.by_author(author)
        start, end = params.get("from"), params.get("to")
        return qs.published_between(
            day_start(start) if start else None, day_end(end) if end else None
        )


class PaperDetailView(generics.RetrieveAPIView):
    serializer_class = PaperDetailSerializer

    @extend_schema(
        operation_id="papers_retrieve",
        summary="One paper",
        description="A paper with its authors (in order), categories and arXiv metadata.",
        parameters=[ARXIV_ID_PARAMETER],
        responses=OpenApiResponse(PaperDetailSerializer, description="The paper."),
        tags=["papers"],
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_object(self):
        return get_paper_for(self.request.user, self.kwargs["arxiv_id"])


class PaperSimilarView(APIView):
    @extend_schema(
        operation_id="papers_similar",
        summary="Papers similar to one paper",
        description="The paper's nearest neighbours by embedding (cosine distance between "
        "passage vectors of the active embedding model only): the same list as the paper's "
        "page. Hidden papers are never returned.",
        parameters=[ARXIV_ID_PARAMETER, SimilarParamsSerializer],
        responses=OpenApiResponse(SimilarPapersSerializer, description="The neighbours."),
        tags=["papers"],
    )
    def get(self, request, arxiv_id):
        params = SimilarParamsSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        paper = get_paper_for(request.user, arxiv_id)
        model = active_embedding_model()
        embedded = bool(model) and Passage.objects.abstracts().filter(paper=paper, model=model).exists()
        similar = (
            with_authors(Paper.objects.visible()).similar_to(paper, model, params.validated_data["k"])
            if embedded
            else []
        )
        return Response(
            SimilarPapersSerializer(
                {"arxiv_id": paper.arxiv_id, "model": model or "", "embedded": embedded,
                 "results": similar}
            ).data
        )


class PaperBibtexView(APIView):
    @extend_schema(
        operation_id="papers_bibtex",
        summary="A paper's BibTeX",
        description="The paper's BibTeX entry in arXiv's own shape (`@misc{key, title, author, "
        "year, eprint, archivePrefix, primaryClass, url}`), in a JSON envelope. The same entry "
        "is downloadable as a .bib file from the paper's page (`/papers/<arxiv_id>/bibtex/`).",
        parameters=[ARXIV_ID_PARAMETER],
        responses=OpenApiResponse(BibtexSerializer, description="The entry."),
        tags=["papers"],
    )
    def get(self, request, arxiv_id):
        paper = get_paper_for(request.user, arxiv_id)
        return Response(
            BibtexSerializer(
                {"arxiv_id": paper.arxiv_id, "key": citation_key(paper),
                 "bibtex": bibtex_entry(paper)}
            ).data
        )

"""/api/papers/... and /api/ingest/... (included under "api/" by flatuniverse/urls.py)."""

from django.urls import path, re_path, register_converter

from papers.api import ingest, views
from papers.api.converters import ArxivIdConverter

register_converter(ArxivIdConverter, "arxiv")

urlpatterns = [
    path("papers/", views.PaperListView.as_view(), name="api-papers"),
    path("papers/<arxiv:arxiv_id>/", views.PaperDetailView.as_view(), name="api-paper"),
    path(
        "papers/<arxiv:arxiv_id>/similar/",
        views.PaperSimilarView.as_view(),
        name="api-paper-similar",
    ),
    path(
        "papers/<arxiv:arxiv_id>/bibtex/",
        views.PaperBibtexView.as_view(),
        name="api-paper-bibtex",
    ),
    path("ingest/", ingest.IngestStartView.as_view(), name="api-ingest"),
    re_path(
        r"^ingest/(?P<ingest_id>[0-9a-f]{32})/$",
        ingest.IngestStatusView.as_view(),
        name="api-ingest-status",
    ),
]

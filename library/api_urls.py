"""/api/collections/... (included under "api/" by flatuniverse/urls.py)."""

from django.urls import path

import papers.api.urls  # noqa: F401  registers the "arxiv" path converter used below
from library import api

urlpatterns = [
    path("collections/", api.CollectionListView.as_view(), name="api-collections"),
    path("collections/<int:collection_id>/", api.CollectionDetailView.as_view(),
         name="api-collection"),
    path("collections/<int:collection_id>/papers/", api.SavedPaperListView.as_view(),
         name="api-collection-papers"),
    path("collections/<int:collection_id>/papers/<arxiv:arxiv_id>/",
         api.SavedPaperDetailView.as_view(), name="api-collection-paper"),
]

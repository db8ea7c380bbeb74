"""/api/papers/... (included under "api/" by flatuniverse/urls.py)."""

from django.urls import path, register_converter

from papers.api import views
from papers.api.converters import ArxivIdConverter

register_converter(ArxivIdConverter, "arxiv")

urlpatterns = [
    path("papers/", views.PaperListView.as_view(), name="api-papers"),
    path("papers/<arxiv:arxiv_id>/", views.PaperDetailView.as_view(), name="api-paper"),
]

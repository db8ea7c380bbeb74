from django.urls import path, register_converter

from papers.api.converters import ArxivIdConverter
from papers.views import catalogue, papers

# Old-style ids contain a slash (hep-th/9901001); the converter matches both styles (+ version).
register_converter(ArxivIdConverter, "arxiv_id")

app_name = "papers"

urlpatterns = [
    path("", papers.paper_list, name="list"),
    path("catalogue/", catalogue.catalogue_json, name="catalogue"),
    path("authors/<str:key>/", papers.author_page, name="author"),
    path("<arxiv_id:arxiv_id>/", papers.paper_detail, name="detail"),
    path("<arxiv_id:arxiv_id>/fulltext/", papers.fulltext_status_json, name="fulltext-status"),
    path("<arxiv_id:arxiv_id>/bibtex/", papers.paper_bibtex, name="bibtex"),
]

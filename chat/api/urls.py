"""/api/search/ and /api/threads/... (included under "api/" by flatuniverse/urls.py)."""

from django.urls import path

from chat.api import arxiv_search, follow, messages, search, threads

urlpatterns = [
    path("search/", search.SearchView.as_view(), name="api-search"),
    path("search/arxiv/", arxiv_search.ArxivSearchView.as_view(), name="api-search-arxiv"),
    path("threads/", threads.ThreadListView.as_view(), name="api-threads"),
    path("threads/<uuid:thread_id>/", threads.ThreadDetailView.as_view(), name="api-thread"),
    path(
        "threads/<uuid:thread_id>/export/",
        threads.ThreadExportView.as_view(),
        name="api-thread-export",
    ),
    path("threads/<uuid:thread_id>/follow/", follow.ThreadFollowView.as_view(),
         name="api-thread-follow"),
    path(
        "threads/<uuid:thread_id>/notion/",
        threads.ThreadNotionView.as_view(),
        name="api-thread-notion",
    ),
    path(
        "threads/<uuid:thread_id>/messages/",
        messages.thread_messages,
        name="api-thread-messages",
    ),
]

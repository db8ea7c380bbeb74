from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from chat.views import health
from chat.views import search as search_views
from papers.views import home

urlpatterns = [
    path("", home.home, name="home"),
    path("healthz", health.healthz, name="healthz"),
    path("accounts/", include("accounts.urls")),
    path("admin/", admin.site.urls),
    path("papers/", include("papers.urls")),
    path("chat/", include("chat.urls")),
    path("library/", include("library.urls")),
    path("search/", search_views.search_page, name="search"),
    path("api/", include("papers.api.urls")),
    path("api/", include("chat.api.urls")),
    path("api/", include("library.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves its script from a URL: the Content-Security-Policy forbids inline.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
]

# JSON errors under /api/ (unknown URLs, malformed ids), Django's pages elsewhere.
handler404 = "api.errors.page_not_found"
handler500 = "api.errors.server_error"

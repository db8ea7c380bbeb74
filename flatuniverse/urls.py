from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from chat.views import health
from chat.views import search as search_views
from papers.views import home

# The admin says whose it is (Django's default is "Django administration").
admin.site.site_header = "Flatuniverse administration"
admin.site.site_title = "Flatuniverse administration"
admin.site.index_title = "Catalogue, ingest runs and accounts"

urlpatterns = [
    path("", home.home, name="home"),
    # Pages link their icon (base.html); browsers still ask for /favicon.ico on the admin and
    # on JSON, and each miss was logged as a 404 warning.
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
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

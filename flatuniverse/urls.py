from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from chat.views import accounts as account_views
from chat.views import search as search_views
from chat.views import tokens as token_views
from papers.views import health, home

urlpatterns = [
    path("", home.home, name="home"),
    path("healthz", health.healthz, name="healthz"),
    path("accounts/signup/", account_views.signup, name="signup"),
    path("accounts/tokens/", token_views.api_tokens, name="api_tokens"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("papers/", include("papers.urls")),
    path("chat/", include("chat.urls")),
    path("search/", search_views.search_page, name="search"),
    path("api/", include("papers.api.urls")),
    path("api/", include("chat.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
]

# JSON errors under /api/ (unknown URLs, malformed ids), Django's pages elsewhere.
handler404 = "chat.api.errors.page_not_found"
handler500 = "chat.api.errors.server_error"

from django.contrib import admin
from django.urls import include, path

from chat.views import accounts as account_views
from papers.views import health, home

urlpatterns = [
    path("", home.home, name="home"),
    path("healthz", health.healthz, name="healthz"),
    path("accounts/signup/", account_views.signup, name="signup"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("papers/", include("papers.urls")),
    path("chat/", include("chat.urls")),
]

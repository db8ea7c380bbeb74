from django.urls import include, path

from accounts import views

urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("tokens/", views.api_tokens, name="api_tokens"),
    path("", include("django.contrib.auth.urls")),
]

from django.urls import include, path

from accounts import views

urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("tokens/", views.api_tokens, name="api_tokens"),
    path("preferences/", views.preferences, name="preferences"),
    path("password_change/", views.PasswordChangeView.as_view(), name="password_change"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path("password_reset/", views.PasswordResetView.as_view(), name="password_reset"),
    path("", include("django.contrib.auth.urls")),
]

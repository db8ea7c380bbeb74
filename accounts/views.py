"""Sign-up and the API-token page; log in, log out and password change are Django's own views
(django.contrib.auth.urls)."""

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods
from rest_framework.authtoken.models import Token

from accounts.forms import AccountPasswordChangeForm, SignupForm
from accounts.models import Preferences
from security import throttles

NEW_KEY_SESSION = "api_token_new_key"


def _later(seconds: int) -> str:
    minutes = -(-seconds // 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}" if seconds >= 60 else f"{seconds} s"


def _too_many(response, wait: int):
    response.status_code = 429
    response["Retry-After"] = str(wait)
    return response


class PasswordResetView(auth_views.PasswordResetView):
    """Django's reset form, with PASSWORD_RESET_RATE_LIMIT_PER_HOUR e-mails per client address:
    the form sends mail to any address typed in, so unlimited it is a mail cannon."""

    def form_valid(self, form):
        if (
            wait := throttles.retry_after(self.request, throttles.PasswordResetThrottle)
        ) is not None:
            form.add_error(
                None, f"Too many reset requests from your address; try again in {_later(wait)}."
            )
            return _too_many(self.form_invalid(form), wait)
        return super().form_valid(form)


class PasswordChangeView(auth_views.PasswordChangeView):
    form_class = AccountPasswordChangeForm


class LogoutView(auth_views.LogoutView):
    """Django's log-out, saying so on the page it lands on (the home page)."""

    def post(self, request, *args, **kwargs):
        was_signed_in = request.user.is_authenticated
        response = super().post(request, *args, **kwargs)
        if was_signed_in:
            messages.success(request, "You are logged out.")
        return response


@sensitive_post_parameters("password1", "password2")
def signup(request):
    if request.user.is_authenticated:
        return redirect("chat:index")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        # Counted only when an account would be made: a typo in the form costs nothing.
        if (wait := throttles.retry_after(request, throttles.SignupThrottle)) is not None:
            form.add_error(
                None, f"Too many new accounts from your address; try again in {_later(wait)}."
            )
            return _too_many(render(request, "registration/signup.html", {"form": form}), wait)
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome to Flatuniverse, {user.username}.")
        return redirect("chat:index")
    return render(request, "registration/signup.html", {"form": form})


@login_required
@require_http_methods(["GET", "POST"])
def api_tokens(request):
    """Create (or regenerate) the one token DRF allows per user, or revoke it. The full key is
    shown once, right after it is made; afterwards only its last characters, so a glance at the
    screen does not leak it."""
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "create":
            # Replacing the row (not just its key) also resets `created`, which the page shows.
            Token.objects.filter(user=request.user).delete()
            token = Token.objects.create(user=request.user)
            # Post/redirect/get: the key travels once through the session, then is forgotten.
            request.session[NEW_KEY_SESSION] = token.key
            messages.success(request, "New API token created. Copy it now: it is shown once.")
        elif action == "revoke":
            deleted, _ = Token.objects.filter(user=request.user).delete()
            if deleted:
                messages.success(request, "API token revoked: programs using it are now refused.")
        else:
            return HttpResponseBadRequest("Unknown action.")
        return redirect("api_tokens")

    token = Token.objects.filter(user=request.user).first()
    new_key = request.session.pop(NEW_KEY_SESSION, None)
    if token is None or new_key != token.key:
        new_key = None
    return render(
        request,
        "accounts/tokens.html",
        {
            "token": token,
            "new_key": new_key,
            "key_tail": token.key[-4:] if token else "",
            "api_root": request.build_absolute_uri("/api/"),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def preferences(request):
    """What the user chose: for now, the daily digest of followed threads' updates."""
    from chat.digest import email_configured

    prefs = Preferences.of(request.user)
    if request.method == "POST":
        prefs.watch_digest = request.POST.get("watch_digest") == "on"
        prefs.save(update_fields=["watch_digest"])
        messages.success(request, "Preferences saved.")
        return redirect("preferences")
    return render(request, "accounts/preferences.html", {
        "prefs": prefs, "email_configured": email_configured(), "email": request.user.email,
    })

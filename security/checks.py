"""What production mode refuses to start with (read by flatuniverse.settings, before Django is
set up, so it imports nothing of Django's configuration)."""

from django.core.checks.security.base import (
    SECRET_KEY_INSECURE_PREFIX,
    SECRET_KEY_MIN_LENGTH,
    SECRET_KEY_MIN_UNIQUE_CHARACTERS,
)

CONSOLE_EMAIL = "django.core.mail.backends.console.EmailBackend"


def weak_secret_key(key: str) -> str | None:
    """Why `key` is too weak to sign sessions and reset links (Django's own rule), or None."""
    if key.startswith(SECRET_KEY_INSECURE_PREFIX):
        return f"SECRET_KEY starts with {SECRET_KEY_INSECURE_PREFIX!r}"
    if len(key) < SECRET_KEY_MIN_LENGTH:
        return f"SECRET_KEY has {len(key)} characters; use at least {SECRET_KEY_MIN_LENGTH}"
    if len(set(key)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS:
        return f"SECRET_KEY has fewer than {SECRET_KEY_MIN_UNIQUE_CHARACTERS} distinct characters"
    return None


def production_problems(*, secret_key: str, email_backend: str, console_email_allowed: bool):
    """Every reason production mode must not start, as sentences naming the setting to fix."""
    problems = []
    if not secret_key:
        problems.append("FLATUNIVERSE_PRODUCTION needs SECRET_KEY set in the environment")
    elif (weak := weak_secret_key(secret_key)) is not None:
        problems.append(
            f"{weak}; generate one with: python -c 'import secrets; print(secrets.token_urlsafe(50))'"
        )
    if email_backend == CONSOLE_EMAIL and not console_email_allowed:
        problems.append(
            "EMAIL_BACKEND is the console backend, which prints password-reset links into the"
            " server log; configure SMTP (EMAIL_BACKEND, EMAIL_HOST...) or set"
            " EMAIL_CONSOLE_IN_PRODUCTION=true to accept that"
        )
    return problems

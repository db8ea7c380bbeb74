"""The base: database, health endpoint, pages."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.django_db
def test_database_is_postgres_with_pgvector():
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        version = cursor.fetchone()[0]
    assert connection.vendor == "postgresql"
    assert tuple(int(p) for p in version.split(".")[:2]) >= (0, 8)


@pytest.mark.django_db
def test_healthz_reports_database_and_backends_to_staff(staff_client):
    response = staff_client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["reachable"] is True
    assert body["database"]["pending_migrations"] == []
    assert body["database"]["vector"]
    assert body["embedding"]["backend"]
    assert body["llm"]["backend"]


@pytest.mark.django_db
def test_healthz_tells_anonymous_callers_status_and_booleans_only(anonymous, owner_client, settings):
    """Backend URLs (credentials can live in them), model names, database error lines (hosts,
    socket paths) and migration names are for staff only (issue #13, finding 7)."""
    settings.LLM_BACKEND = "openai"
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_BASE_URL = "http://user:secret@llm.internal:8080/v1"
    for caller in (anonymous, owner_client):
        response = caller.get("/healthz")
        body = response.json()
        assert response.status_code == 200, body
        catalogue = body.pop("catalogue")
        assert body == {
            "status": "ok",
            "database": {"ok": True, "reachable": True, "vector": True, "migrated": True},
            "embedding": {"ready": True},
            "llm": {"ready": True},
            "degraded": [],
        }
        # The catalogue's counts and dates are public (/papers/ shows them to anyone).
        assert set(catalogue) == {"papers", "newest_published", "indexed", "pending_index",
                                  "indexing", "indexing_progress", "last_ingest"}
        assert "secret" not in response.content.decode()


@pytest.mark.django_db
def test_healthz_is_503_with_pending_migrations(anonymous):
    # Unapply the newest sessions migration inside the test's transaction (PostgreSQL DDL is
    # transactional, so the test database is restored when the test ends).
    from django.core.management import call_command

    call_command("migrate", "sessions", "zero", verbosity=0)
    response = anonymous.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unhealthy"
    assert body["database"]["migrated"] is False
    assert "pending_migrations" not in body["database"], "migration names are for staff"


@pytest.mark.django_db
def test_anonymous_is_sent_to_login_from_chat(anonymous):
    response = anonymous.get("/chat/")
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/", "/accounts/login/", "/accounts/signup/", "/admin/login/"])
def test_public_pages_respond(anonymous, path):
    assert anonymous.get(path).status_code == 200


@pytest.mark.django_db
def test_staff_reaches_admin(staff_client):
    assert staff_client.get("/admin/").status_code == 200


def _run_manage(*args, env_extra=None, timeout=60):
    env = {**os.environ, **(env_extra or {})}
    env.pop("PYTEST_CURRENT_TEST", None)
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT,
    )


def test_unreachable_database_url_gives_one_clear_line():
    result = _run_manage(
        "migrate", env_extra={"DATABASE_URL": "postgres://nobody@127.0.0.1:1/nowhere"}
    )
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("flatuniverse: cannot connect to PostgreSQL at 127.0.0.1:1/nowhere")
    assert "Traceback" not in result.stderr


def test_database_without_pgvector_gives_one_clear_line():
    """The machine's own PostgreSQL 15 (when present) has no pgvector: a real server to refuse."""
    probe = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-Atc",
         "SELECT count(*) FROM pg_available_extensions WHERE name='vector'"],
        capture_output=True, text=True,
    ) if _has_psql() else None
    if probe is None or probe.returncode != 0 or probe.stdout.strip() != "0":
        pytest.skip("needs a PostgreSQL without pgvector on 127.0.0.1:5432")
    result = _run_manage(
        "migrate", env_extra={"DATABASE_URL": "postgres://postgres@127.0.0.1:5432/postgres"}
    )
    assert result.returncode == 2
    assert "has no pgvector" in result.stderr
    assert "Traceback" not in result.stderr


def _has_psql() -> bool:
    from shutil import which

    return which("psql") is not None


def test_production_settings_pass_check_deploy():
    result = _run_manage(
        "check", "--deploy", "--fail-level", "WARNING",
        env_extra={
            "FLATUNIVERSE_PRODUCTION": "true",
            "SECRET_KEY": "x" * 20 + "-a-long-random-secret-key-for-this-check-only-9f8e7d",
            "ALLOWED_HOSTS": "flatuniverse.example.org",
            "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        },
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_mode_refuses_to_start_without_secret_key():
    env = {"FLATUNIVERSE_PRODUCTION": "true", "SECRET_KEY": ""}
    result = _run_manage("check", env_extra=env)
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


SMTP = "django.core.mail.backends.smtp.EmailBackend"
STRONG_KEY = "k" * 20 + "-a-long-random-secret-key-for-this-check-only-9f8e7d"


@pytest.mark.parametrize(
    "env, complaint",
    [
        ({"SECRET_KEY": "short-but-set", "EMAIL_BACKEND": SMTP}, "SECRET_KEY has 13 characters"),
        ({"SECRET_KEY": "a" * 60, "EMAIL_BACKEND": SMTP}, "distinct characters"),
        ({"SECRET_KEY": "django-insecure-" + STRONG_KEY, "EMAIL_BACKEND": SMTP}, "django-insecure-"),
        ({"SECRET_KEY": STRONG_KEY}, "EMAIL_CONSOLE_IN_PRODUCTION"),  # the console default
    ],
    ids=["short-key", "repetitive-key", "insecure-prefix", "console-mail"],
)
def test_production_mode_refuses_a_weak_key_or_reset_links_in_the_log(env, complaint):
    """A weak SECRET_KEY signs guessable sessions and reset links; the console mail backend
    prints reset links into the server log: production refuses both (issue #13, finding 12)."""
    result = _run_manage("check", env_extra={"FLATUNIVERSE_PRODUCTION": "true", **env})
    assert result.returncode != 0
    assert complaint in result.stderr


def test_production_mode_may_keep_console_mail_when_told_to():
    env = {"FLATUNIVERSE_PRODUCTION": "true", "SECRET_KEY": STRONG_KEY,
           "EMAIL_CONSOLE_IN_PRODUCTION": "true"}
    result = _run_manage("check", env_extra=env)
    assert result.returncode == 0, result.stderr


@pytest.mark.django_db
def test_healthz_is_503_when_the_llm_backend_cannot_answer(staff_client, settings):
    settings.LLM_BACKEND = "openai"
    settings.OPENAI_API_KEY = ""
    response = staff_client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["llm"]["ready"] is False
    assert "OPENAI_API_KEY" in response.json()["llm"]["detail"]

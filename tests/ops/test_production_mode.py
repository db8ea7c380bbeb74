"""Production mode, configured only by the environment (docs/DEPLOYMENT.md): behind a TLS proxy,
static files collected once and served compressed by WhiteNoise, plain HTTP sent to HTTPS except
the health probe."""

import os
import subprocess
import sys

import httpx
import pytest

from tests import live_server
from tests.live_server import LiveServer

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True), pytest.mark.timeout(90)]


@pytest.fixture
def production_env(tmp_path) -> dict[str, str]:
    return {
        "FLATUNIVERSE_PRODUCTION": "true",
        "FLATUNIVERSE_TESTING": "false",  # the real storage backend (compressed static files)
        "FLATUNIVERSE_DATA_DIR": str(tmp_path),
        "SECRET_KEY": "p" * 30 + "-a-production-secret-for-this-test-only-0123456789",
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": live_server.test_database_url(),
        "EMBEDDING_BACKEND": "hashing",
        "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
    }


def test_collected_static_files_are_served_compressed_behind_the_proxy(production_env, tmp_path):
    collected = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput"], cwd=live_server.ROOT,
        env={**os.environ, **production_env}, capture_output=True, text=True, timeout=120,
    )
    assert collected.returncode == 0, collected.stderr
    assert (tmp_path / "staticfiles" / "css" / "app.css.gz").is_file()

    with LiveServer(env=production_env) as server:
        as_proxied = {"X-Forwarded-Proto": "https", "Accept-Encoding": "gzip"}
        static = httpx.get(server.url + "/static/css/app.css", headers=as_proxied, timeout=20)
        plain = httpx.get(server.url + "/static/css/app.css", timeout=20)
        health = httpx.get(server.url + "/healthz", headers=as_proxied, timeout=20)
        probe = httpx.get(server.url + "/healthz", timeout=20)  # a load balancer's, plain HTTP

    assert static.status_code == 200
    assert static.headers["content-encoding"] == "gzip", "collectstatic's .gz file, not the app's"
    assert "strict-transport-security" in {k.lower() for k in health.headers}
    assert plain.status_code == 301, "plain HTTP (no proxy header) goes to HTTPS"
    assert plain.headers["location"].startswith("https://")
    assert health.status_code == 200, health.text
    assert probe.status_code == 200, "health probes are not redirected"

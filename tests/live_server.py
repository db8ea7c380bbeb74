"""Real daphne processes serving the app against the current test database.

For tests that need a real HTTP/WebSocket server (browser, SSE, scale-out): the child process
gets a DATABASE_URL pointing at the test database this pytest run created, so rows the test
writes are visible to the server and the other way round (use `transactional_db`).

    with LiveServer() as server:
        httpx.get(server.url + "/healthz")
"""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import httpx
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_database_url() -> str:
    """A URL for the database the test run is using right now (settings already point at it)."""
    cfg = connection.settings_dict
    host = cfg.get("HOST") or ""
    port = f":{cfg['PORT']}" if cfg.get("PORT") and not host.startswith("/") else ""
    user = quote(cfg.get("USER") or "", safe="")
    password = f":{quote(cfg['PASSWORD'], safe='')}" if cfg.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{quote(host, safe='')}{port}/{cfg['NAME']}"


class LiveServer:
    """One daphne process on a free loopback port; stopped (and waited for) on exit."""

    def __init__(
        self, env: dict[str, str] | None = None, port: int | None = None, start_timeout: float = 120
    ):
        self.port = port or free_port()
        # Importing Django and the app takes 2 s on an idle machine, 10-30 s on a loaded one and
        # over 60 s on a 2-core machine running several suites at once.
        self.start_timeout = start_timeout
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}"
        self.extra_env = env or {}
        self.process: subprocess.Popen | None = None
        self.log_path = ROOT / "test-artifacts" / f"daphne-{self.port}.log"

    def __enter__(self) -> "LiveServer":
        self.log_path.parent.mkdir(exist_ok=True)
        env = {
            **os.environ,
            "DATABASE_URL": test_database_url(),
            "FLATUNIVERSE_TESTING": "1",
            **self.extra_env,
        }
        env.pop("PYTEST_CURRENT_TEST", None)
        self._log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port),
             "flatuniverse.asgi:application"],
            cwd=ROOT, env=env, stdout=self._log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"daphne exited early:\n{self.log_path.read_text()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code in (200, 503):
                    return self
            except httpx.HTTPError:
                time.sleep(0.1)
        self.__exit__(None, None, None)
        raise RuntimeError(
            f"daphne did not start in {self.start_timeout:.0f} s:\n{self.log_path.read_text()}"
        )

    def __exit__(self, *exc) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()

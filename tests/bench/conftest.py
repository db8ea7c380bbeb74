"""bench_api.py runs on the API tests' catalogue."""

from tests.api.conftest import close_background_connections, indexed_papers, papers  # noqa: F401

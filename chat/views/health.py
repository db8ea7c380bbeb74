"""/healthz: is this process able to serve? JSON for load balancers and humans alike.

Anyone gets the status and yes/no per part: enough for a probe. Only staff (signed in) get the
details: backend names and URLs, model names, the database's error line (which names hosts and
socket paths) and pending migrations, none of which a stranger should read.
"""

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse
from django.views.decorators.cache import never_cache

from chat.llm import backend_info
from papers.catalogue import catalogue_status
from papers.embeddings import get_embedder


def _database_status() -> dict:
    status = {"ok": False}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
        status["reachable"] = True
        status["vector"] = row[0] if row else None
        executor = MigrationExecutor(connection)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
        status["pending_migrations"] = [f"{m.app_label}.{m.name}" for m, _ in plan]
        status["embedded"] = settings.EMBEDDED_DATABASE
        status["ok"] = bool(row) and not plan
    except DatabaseError as exc:
        status["reachable"] = False
        status["error"] = str(exc).strip().splitlines()[0] if str(exc).strip() else "error"
    return status


def _embedding_status() -> dict:
    status = {"backend": settings.EMBEDDING_BACKEND, "ready": False}
    try:
        embedder = get_embedder()  # created once per process; the model itself loads lazily
        status.update(model=embedder.name, dimensions=embedder.dimensions, ready=True)
    except Exception as exc:  # a misconfigured backend must show here, not crash the check
        status["detail"] = str(exc)
    return status


def _catalogue_status() -> dict | None:
    """Counts and dates only (public: /papers/ shows them to anyone); None when the database
    cannot answer (the database section says why)."""
    try:
        catalogue = catalogue_status(categories=0)
    except DatabaseError:
        return None
    last = catalogue.last_ingest
    return {
        "papers": catalogue.papers,
        "newest_published": catalogue.newest_published.isoformat()
        if catalogue.newest_published
        else None,
        "indexed": catalogue.indexed,
        "pending_index": catalogue.pending_index,
        "indexing": catalogue.indexing,
        "indexing_progress": catalogue.progress.as_json() if catalogue.progress else None,
        "last_ingest": {
            "status": last.status,
            "finished_at": last.finished_at.isoformat() if last.finished_at else None,
        }
        if last
        else None,
    }


def _is_staff(request) -> bool:
    try:  # reading the session needs the database, which may be what is down
        return bool(request.user.is_authenticated and request.user.is_staff)
    except DatabaseError:
        return False


def public_view(body: dict) -> dict:
    """What anonymous callers see of the report: the status and booleans only."""
    database = body["database"]
    return {
        "status": body["status"],
        "database": {
            "ok": database["ok"],
            "reachable": database.get("reachable", False),
            "vector": bool(database.get("vector")),
            "migrated": database.get("reachable", False) and not database.get("pending_migrations"),
        },
        "embedding": {"ready": body["embedding"]["ready"]},
        "llm": {"ready": body["llm"]["ready"]},
        # Counts and dates: public, as /papers/ shows them to anyone.
        "degraded": body["degraded"],
        "catalogue": body["catalogue"],
    }


@never_cache
def healthz(request):
    database = _database_status()
    embedding = _embedding_status()
    llm = backend_info()
    healthy = database["ok"] and embedding["ready"] and llm["ready"]
    catalogue = _catalogue_status() if database["ok"] else None
    # The app works while vectors are made (BM25 finds the new papers): 200, but say so.
    degraded = ["vectors pending"] if catalogue and catalogue["pending_index"] else []
    body = {
        "status": "ok" if healthy else "unhealthy",
        "database": database,
        "embedding": embedding,
        "llm": llm,
        "channel_layer": "redis" if settings.REDIS_URL else "in-memory",
        "job_broker": "redis" if settings.REDIS_URL else "orm",
        "degraded": degraded,
        "catalogue": catalogue,
    }
    if not _is_staff(request):
        body = public_view(body)
    return JsonResponse(body, status=200 if healthy else 503)

"""/healthz: is this process able to serve? JSON for load balancers and humans alike."""

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse
from django.views.decorators.cache import never_cache


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


@never_cache
def healthz(request):
    database = _database_status()
    body = {
        "status": "ok" if database["ok"] else "unhealthy",
        "database": database,
        "embedding": {"backend": settings.EMBEDDING_BACKEND},
        "llm": {"backend": settings.LLM_BACKEND, "fallback": settings.LLM_FALLBACK},
        "channel_layer": "redis" if settings.REDIS_URL else "in-memory",
        "job_broker": "redis" if settings.REDIS_URL else "orm",
    }
    return JsonResponse(body, status=200 if database["ok"] else 503)

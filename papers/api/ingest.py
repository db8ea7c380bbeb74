"""Staff API to start an arXiv ingest and follow it.

Starting queues `papers.jobs.INGEST_JOB` on the django-q2 cluster, exactly what the nightly
schedule runs; the id handed back is the cluster's task id. Its status comes from the cluster's
own records: a task still in the ORM queue is `queued` (or `running` once a worker holds its
lock), a finished task is in django-q2's Task table with the job's result, which names the
IngestRun that holds the counts and errors.
"""

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone
from django_q.models import OrmQ, Task
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from papers.api.serializers import CATEGORY_PATTERN
from papers.jobs import INGEST_JOB, enqueue_ingest
from papers.models import IngestRun

REMEMBER_KEY = "api-ingest:{}"
# Longer than any ingest may run (Q_TIMEOUT), so a pending task is never forgotten.
REMEMBER_SECONDS = 7 * 24 * 3600


class IngestRequestSerializer(serializers.Serializer):
    categories = serializers.ListField(
        child=serializers.RegexField(CATEGORY_PATTERN, max_length=40),
        required=False, min_length=1, max_length=50,
        help_text="arXiv categories to fetch; default: the configured ARXIV_CATEGORIES.",
    )


class IngestRunSerializer(serializers.ModelSerializer):
    class Meta:
        model = IngestRun
        fields = [
            "id", "source", "status", "params", "window_start", "window_end", "new", "updated",
            "unchanged", "skipped", "errors", "timings", "started_at", "finished_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "id": {"help_text": "The run's id."},
            "source": {"help_text": "Where the papers came from."},
            "status": {"help_text": "The run's outcome so far."},
            "params": {"help_text": "Categories and options of the run."},
            "window_start": {"help_text": "Start of the submission window fetched."},
            "window_end": {"help_text": "End of the submission window fetched."},
            "new": {"help_text": "Papers added."},
            "updated": {"help_text": "Papers replaced by a newer version."},
            "unchanged": {"help_text": "Papers already up to date."},
            "skipped": {"help_text": "Records that could not be used."},
            "errors": {"help_text": "What went wrong, per record or request (at most 100)."},
            "timings": {"help_text": "Seconds spent per stage."},
            "started_at": {"help_text": "When the run started."},
            "finished_at": {"help_text": "When it ended; null while running."},
        }


class IngestStatusSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="The ingest's id (the job cluster's task id).")
    status = serializers.ChoiceField(
        choices=["queued", "running", "succeeded", "failed"],
        help_text="queued: waiting for a worker (with the Redis broker also while running); "
        "running: a worker has it; succeeded or failed: finished (see `result` and `run`).",
    )
    started_at = serializers.DateTimeField(
        allow_null=True, help_text="When a worker started it; null while queued."
    )
    finished_at = serializers.DateTimeField(allow_null=True, help_text="When it finished.")
    result = serializers.JSONField(
        allow_null=True,
        help_text="The job's result when finished: status, run, counts, message; or the "
        "error text when the job itself failed.",
    )
    run = IngestRunSerializer(
        allow_null=True, help_text="The ingest run the job recorded, once finished."
    )


def _queued(task_id: str) -> OrmQ | None:
    """The task's row in the ORM broker's queue (there are only a few), or None."""
    if "orm" not in settings.Q_CLUSTER:
        return None
    return next((row for row in OrmQ.objects.all() if row.task_id() == task_id), None)


def _pending_ingest() -> str | None:
    """Id of an ingest still waiting or running in the ORM queue, if there is one."""
    if "orm" not in settings.Q_CLUSTER:
        return None
    for row in OrmQ.objects.all():
        if row.func() == INGEST_JOB:
            return row.task_id()
    return None


def _remember(task_id: str, user) -> None:
    """Note the task in the shared cache: with the Redis broker a queued task cannot be looked up
    by id until it has finished, and its status must not read 404 meanwhile."""
    cache.set(
        REMEMBER_KEY.format(task_id),
        {"enqueued_at": timezone.now().isoformat(), "by": user.get_username()},
        REMEMBER_SECONDS,
    )


def ingest_status(task_id: str) -> dict | None:
    task = Task.objects.filter(id=task_id).first()
    if task is not None:
        result = task.result
        run_id = result.get("run") if isinstance(result, dict) else None
        run = IngestRun.objects.filter(pk=run_id).first() if isinstance(run_id, int) else None
        failed = not task.success or (
            isinstance(result, dict) and result.get("status") == IngestRun.Status.FAILED
        )
        return {
            "id": task_id,
            "status": "failed" if failed else "succeeded",
            "started_at": task.started,
            "finished_at": task.stopped,
            "result": result if isinstance(result, dict | list | str | int | float) else str(result),
            "run": run,
        }
    row = _queued(task_id)
    if row is None and cache.get(REMEMBER_KEY.format(task_id)) is not None:
        # Started through this API but not finished, and no ORM queue to look in (Redis).
        return {
            "id": task_id, "status": "queued",
            "started_at": None, "finished_at": None, "result": None, "run": None,
        }
    if row is not None:
        # The ORM broker stamps `lock` with "now" on enqueue and pushes it into the future
        # (the retry deadline) when a worker takes the task.
        running = row.lock is not None and row.lock > timezone.now()
        return {
            "id": task_id,
            "status": "running" if running else "queued",
            "started_at": None, "finished_at": None, "result": None, "run": None,
        }
    return None


INGEST_ID_PARAMETER = OpenApiParameter(
    "ingest_id", OpenApiTypes.STR, OpenApiParameter.PATH, pattern=r"^[0-9a-f]{32}$",
    description="The id returned by `POST /api/ingest/`.",
)


class CanStartIngest(permissions.BasePermission):
    """Staff with the papers.start_ingest permission (as the admin's "Start ingest now")."""

    message = "Starting an ingest needs the papers.start_ingest permission."

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_staff
                    and request.user.has_perm(IngestRun.START_PERMISSION))


class IngestStartView(APIView):
    permission_classes = [CanStartIngest]

    @extend_schema(
        operation_id="ingest_start",
        summary="Start an arXiv ingest",
        description="Staff with the `papers.start_ingest` permission. Queues the same job as the nightly schedule: fetch papers "
        "submitted since the last successful run, then embed them. If an ingest is already "
        "waiting in the queue, that one is returned (200) instead of queueing another.",
        request=IngestRequestSerializer,
        responses={
            202: OpenApiResponse(IngestStatusSerializer, description="Queued."),
            200: OpenApiResponse(IngestStatusSerializer, description="One was already queued."),
        },
        examples=[OpenApiExample("two categories", value={"categories": ["cs.CL", "cs.IR"]},
                                 request_only=True)],
        tags=["ingest"],
    )
    def post(self, request):
        body = IngestRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        if (pending := _pending_ingest()) and (current := ingest_status(pending)):
            return Response(IngestStatusSerializer(current).data, status=status.HTTP_200_OK)
        kwargs = {}
        if "categories" in body.validated_data:
            kwargs["categories"] = body.validated_data["categories"]
        task_id = enqueue_ingest(f"api-ingest ({request.user.get_username()})"[:100], **kwargs)
        _remember(task_id, request.user)
        current = ingest_status(task_id) or {
            "id": task_id, "status": "queued", "started_at": None, "finished_at": None,
            "result": None, "run": None,
        }
        return Response(IngestStatusSerializer(current).data, status=status.HTTP_202_ACCEPTED)


class IngestStatusView(APIView):
    permission_classes = [permissions.IsAdminUser]

    @extend_schema(
        operation_id="ingest_status",
        summary="An ingest's status",
        description="Staff only. Where a started ingest is, and once finished its result and "
        "ingest run (counts, errors, timings).",
        parameters=[INGEST_ID_PARAMETER],
        responses=OpenApiResponse(IngestStatusSerializer, description="Where it is."),
        tags=["ingest"],
    )
    def get(self, request, ingest_id):
        current = ingest_status(ingest_id)
        if current is None:
            raise NotFound("No ingest with this id (finished ones are kept for a while only).")
        return Response(IngestStatusSerializer(current).data)

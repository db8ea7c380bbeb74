"""Threads API: a user's own chat threads. Every lookup goes through the caller, so another
user's thread id answers 404, exactly like an id that does not exist."""

from django.db.models import Count
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import generics, serializers
from rest_framework.exceptions import APIException, NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from api.pagination import ApiCursorPagination
from api.schema import error_response
from chat import notion, service
from chat.api.serializers import ThreadSerializer
from chat.export import thread_bibtex, thread_markdown
from chat.models import Thread

THREAD_ID_PARAMETER = OpenApiParameter(
    "thread_id", OpenApiTypes.UUID, OpenApiParameter.PATH,
    description="The thread's id (from `POST /api/threads/` or the thread list).",
)


class ThreadPagination(ApiCursorPagination):
    ordering = ("-updated_at", "-created_at")


def threads_of(user):
    return Thread.objects.owned_by(user).annotate(message_count=Count("messages"))


def get_thread_for(user, thread_id) -> Thread:
    """The caller's thread, or 404 whether it is missing or someone else's (never 403: that
    would confirm the id exists)."""
    thread = Thread.objects.owned_by(user).filter(pk=thread_id).first()
    if thread is None:
        raise NotFound("No such thread.")
    return thread


@extend_schema_view(
    get=extend_schema(
        operation_id="threads_list",
        summary="List your threads",
        description="Your chat threads, most recently active first. Cursor-paginated.",
        responses=OpenApiResponse(ThreadSerializer(many=True), description="A page of threads."),
        tags=["threads"],
    ),
    post=extend_schema(
        operation_id="threads_create",
        summary="Start a thread",
        description="Creates an empty thread; ask in it with `POST /api/threads/{id}/messages/`.",
        examples=[OpenApiExample("titled", value={"title": "Diffusion models"},
                                 request_only=True)],
        responses={201: OpenApiResponse(ThreadSerializer, description="The new thread.")},
        tags=["threads"],
    ),
)
class ThreadListView(generics.ListCreateAPIView):
    serializer_class = ThreadSerializer
    pagination_class = ThreadPagination

    def get_queryset(self):
        return threads_of(self.request.user)

    def perform_create(self, serializer):
        thread = serializer.save(owner=self.request.user)
        thread.message_count = 0


@extend_schema_view(
    get=extend_schema(operation_id="threads_retrieve", parameters=[THREAD_ID_PARAMETER],
                      summary="One of your threads",
                      description="The thread's title, dates and message count.",
                      responses=OpenApiResponse(ThreadSerializer, description="The thread."),
                      tags=["threads"]),
    patch=extend_schema(operation_id="threads_update", parameters=[THREAD_ID_PARAMETER],
                        summary="Rename a thread", description="Only `title` can change.",
                        responses=OpenApiResponse(ThreadSerializer,
                                                  description="The renamed thread."),
                        tags=["threads"]),
    delete=extend_schema(operation_id="threads_destroy", parameters=[THREAD_ID_PARAMETER],
                         summary="Delete a thread",
                         description="Stops the answer being written, if any, and deletes the "
                                     "thread and all its messages.",
                         tags=["threads"]),
)
class ThreadDetailView(generics.RetrieveUpdateDestroyAPIView):
    serializer_class = ThreadSerializer
    http_method_names = ["get", "patch", "delete", "head", "options"]

    def get_queryset(self):
        return threads_of(self.request.user)

    def get_object(self):
        thread = threads_of(self.request.user).filter(pk=self.kwargs["thread_id"]).first()
        if thread is None:
            raise NotFound("No such thread.")
        return thread

    def perform_destroy(self, instance):
        service.delete_thread(instance)


class ThreadExportSerializer(serializers.Serializer):
    markdown = serializers.CharField(
        help_text="Questions, answers and one numbered reference list (arXiv links with the "
        "versions read); citations numbered thread-wide, TeX kept as written."
    )
    bibtex = serializers.CharField(
        help_text="The thread's papers as BibTeX in arXiv's shape (@misc, eprint, "
        "archivePrefix, primaryClass), in reference order."
    )


class ThreadExportView(APIView):
    @extend_schema(
        operation_id="threads_export",
        summary="Export a thread",
        description="The thread as Markdown and its sources as BibTeX (the same files as the "
        "thread page's Export links). Your own threads only.",
        parameters=[THREAD_ID_PARAMETER],
        responses=OpenApiResponse(ThreadExportSerializer, description="The exports."),
        tags=["threads"],
    )
    def get(self, request, thread_id):
        thread = get_thread_for(request.user, thread_id)
        return Response(
            ThreadExportSerializer(
                {"markdown": thread_markdown(thread), "bibtex": thread_bibtex(thread)}
            ).data
        )


class NotionPageSerializer(serializers.Serializer):
    page_id = serializers.CharField(help_text="The new Notion page's id.")
    url = serializers.CharField(help_text="The new Notion page's URL (as Notion gives it).")


class NotionFailed(APIException):
    status_code = 502
    default_code = "notion_error"
    default_detail = "Notion refused the export."


class NotionNotConfigured(APIException):
    # Not a 5xx: nothing failed, the server is set up without it (a client should not retry).
    status_code = 409
    default_code = "not_configured"
    default_detail = "Notion export is not configured here."


class ThreadNotionView(APIView):
    @extend_schema(
        operation_id="threads_notion_export",
        summary="Export a thread to Notion",
        description="Creates a Notion page under the server's configured parent page "
        "(NOTION_API_KEY, NOTION_PARENT_PAGE_ID) with the thread's questions, answers and "
        "numbered references. Your own threads only.",
        parameters=[THREAD_ID_PARAMETER],
        request=None,
        responses={
            201: OpenApiResponse(NotionPageSerializer, description="The page was created."),
            502: error_response("Notion refused or failed (a wrong key, the parent page not "
                                "shared, its rate limit, Notion down): `error.message` says "
                                "which."),
            409: error_response("Notion export is not configured on this server "
                                "(`not_configured`)."),
        },
        tags=["threads"],
    )
    def post(self, request, thread_id):
        thread = get_thread_for(request.user, thread_id)
        try:
            page = notion.export_thread(thread)
        except notion.NotionNotConfigured as exc:
            raise NotionNotConfigured(exc.message) from None
        except notion.NotionError as exc:
            raise NotionFailed(exc.message) from None
        return Response(NotionPageSerializer(page).data, status=201)

"""Messages API: read a thread's conversation."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics

from chat.api.pagination import ApiCursorPagination
from chat.api.serializers import MessageSerializer
from chat.api.threads import THREAD_ID_PARAMETER, get_thread_for
from chat.models import Message


class MessagePagination(ApiCursorPagination):
    ordering = ("created_at", "id")
    page_size = 50


class MessageListView(generics.ListAPIView):
    serializer_class = MessageSerializer
    pagination_class = MessagePagination

    @extend_schema(
        operation_id="threads_messages_list",
        summary="A thread's messages",
        description="Questions and answers of one of your threads, oldest first, with each "
        "answer's sources. Cursor-paginated.",
        parameters=[THREAD_ID_PARAMETER],
        tags=["threads"],
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        thread = get_thread_for(self.request.user, self.kwargs["thread_id"])
        return Message.objects.filter(thread=thread)

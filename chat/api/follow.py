"""Following a thread over the API (chat.watch): what the thread page's "Follow" button does."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from chat import watch
from chat.api.threads import THREAD_ID_PARAMETER, get_thread_for
from chat.models import Follow


class FollowSerializer(serializers.Serializer):
    followed = serializers.BooleanField(help_text="Whether the thread is followed.")
    unseen = serializers.IntegerField(
        help_text="\"New since you asked\" updates posted since the thread was last opened."
    )
    announced = serializers.IntegerField(help_text="Papers announced in the thread so far.")
    checked_at = serializers.DateTimeField(
        allow_null=True, help_text="The last nightly re-run of the thread's question."
    )


def follow_state(followed: Follow | None) -> dict:
    return {
        "followed": followed is not None,
        "unseen": followed.unseen if followed else 0,
        "announced": len(followed.notified) if followed else 0,
        "checked_at": followed.checked_at if followed else None,
    }


class ThreadFollowView(APIView):
    @extend_schema(
        operation_id="threads_follow_retrieve", parameters=[THREAD_ID_PARAMETER],
        summary="Is the thread followed", tags=["threads"],
        responses=OpenApiResponse(FollowSerializer, description="The thread's follow state."),
    )
    def get(self, request, thread_id):
        thread = get_thread_for(request.user, thread_id)
        return Response(follow_state(Follow.objects.filter(thread=thread).first()))

    @extend_schema(
        operation_id="threads_follow_create", parameters=[THREAD_ID_PARAMETER], request=None,
        summary="Follow a thread",
        description="After each nightly ingest the thread's last question is asked again of the "
        "papers that arrived since it was last answered; relevant new ones are posted in it as "
        "a \"New since you asked\" message. Idempotent. 400 when the thread has no answered "
        "question, is about chosen papers, or you follow the most threads allowed.",
        responses={200: OpenApiResponse(FollowSerializer, description="Followed.")},
        tags=["threads"],
    )
    def post(self, request, thread_id):
        thread = get_thread_for(request.user, thread_id)
        try:
            followed = watch.follow(thread)
        except watch.CannotFollow as exc:
            raise ValidationError({"thread": [str(exc)]}) from None
        return Response(follow_state(followed))

    @extend_schema(
        operation_id="threads_follow_destroy", parameters=[THREAD_ID_PARAMETER],
        summary="Stop following a thread", responses={204: None}, tags=["threads"],
    )
    def delete(self, request, thread_id):
        thread = get_thread_for(request.user, thread_id)
        Follow.objects.filter(thread=thread).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)

"""Messages API: read a thread's conversation, and ask in it (JSON or server-sent events).

One URL serves both verbs. DRF does everything that is synchronous and shared with the rest of
the API (token or session authentication with CSRF, the ownership check, parsing and validating
the body, JSON errors); asking itself must run on the event loop, because the answer is a
background asyncio task of chat.service and a stream is an async generator. So the URL points
at an async function: it runs the DRF view in a worker thread and, when that view accepted a
question, asks and answers on the loop.
"""

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpResponse, JsonResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.renderers import JSONRenderer

from api.errors import error_body
from api.pagination import ApiCursorPagination
from api.schema import error_response
from chat import service
from chat.api.serializers import AskResultSerializer, AskSerializer, MessageSerializer
from chat.api.streaming import AnswerStream, sse_frame
from chat.api.threads import THREAD_ID_PARAMETER, get_thread_for
from chat.models import Message

EVENT_STREAM = "text/event-stream"

# AskRefused codes from chat.service, as HTTP statuses.
REFUSAL_STATUS = {
    "not_found": 404,
    "busy": 409,
    "rate_limited": 429,
    "invalid_question": 400,
    "empty_question": 400,
    "question_too_long": 400,
    "database_unavailable": 503,
    "invalid_filters": 400,
}

SSE_DESCRIPTION = """\
With `Accept: text/event-stream`: the answer as server-sent events while it is written, the same
events as the web app's WebSocket, each `event: <type>` with its JSON envelope as `data:`:

- `start`: `message_id` (the answer) and `user_message_id` (the question);
- `stage` (several): `stage` (`understanding`, `searching`, `reading`, `writing`) and `detail`,
  a line to show while waiting ("Searching 57,438 papers…");
- `analysis`: `query` (the standalone question searched), `analysis` (date window, topic),
  `window` (the window as a label), `filters` (every filter it was searched with: send them back,
  edited, as `filters` to re-ask) and `chips` (`kind`, `label`, `value`, `edited`: what to show);
- `sources`: `sources`, the numbered papers the answer may cite;
- `token` (many): `text` to append, at character `offset`;
- `done`: the final `content`, `html` (sanitised), `citations`, `timings`, `usage`, `backend`,
  `model`, `followups`; or `error`: `code` and `message` (the partial text is kept as `content`).

Lines starting with `:` are keep-alive comments. Closing the connection does not stop the answer:
it is saved and appears in the thread's messages."""

SSE_EXAMPLE = (
    'event: start\ndata: {"type":"start","message_id":"…","user_message_id":"…",'
    '"question":"diffusion models in the last 2 years"}\n\n'
    'event: analysis\ndata: {"type":"analysis","message_id":"…","query":"…","analysis":{…}}\n\n'
    'event: sources\ndata: {"type":"sources","message_id":"…","sources":[{"number":1,…}]}\n\n'
    'event: token\ndata: {"type":"token","message_id":"…","offset":0,"text":"Recent work"}\n\n'
    'event: done\ndata: {"type":"done","message_id":"…","status":"complete","content":"…",'
    '"citations":[1,2],…}\n\n'
)


def wants_event_stream(request) -> bool:
    """True when the client's Accept header names text/event-stream (an EventSource does)."""
    accept = request.META.get("HTTP_ACCEPT", "")
    return any(part.split(";")[0].strip().lower() == EVENT_STREAM for part in accept.split(","))


class MessagePagination(ApiCursorPagination):
    ordering = ("created_at", "id")
    page_size = 50


class AskAccepted(HttpResponse):
    """What the DRF view returns for a valid question: not sent to the client, but handed to the
    async side (thread_messages) which asks and answers."""

    def __init__(self, user, thread_id, question: str, stream: bool, filters: dict | None = None):
        super().__init__(status=202)
        self.user, self.thread_id, self.question, self.stream = user, thread_id, question, stream
        self.filters = filters


class ThreadMessagesView(generics.ListAPIView):
    serializer_class = MessageSerializer
    pagination_class = MessagePagination
    # Asks are limited by chat.service (per user, counted in the database, shared with the
    # WebSocket); this tells the schema to document the 429.
    rate_limited_methods = ("POST",)

    def perform_content_negotiation(self, request, force=False):
        # Lists and errors are JSON whatever the Accept header says; only a successful ask
        # streams, and that response is made outside DRF.
        return JSONRenderer(), "application/json"

    @extend_schema(
        operation_id="threads_messages_list",
        summary="A thread's messages",
        description="Questions and answers of one of your threads, oldest first, with each "
        "answer's sources. Cursor-paginated.",
        parameters=[THREAD_ID_PARAMETER],
        responses=OpenApiResponse(MessageSerializer(many=True), description="A page of messages."),
        tags=["threads"],
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        thread = get_thread_for(self.request.user, self.kwargs["thread_id"])
        return Message.objects.filter(thread=thread)

    @extend_schema(
        operation_id="threads_messages_ask",
        summary="Ask a question",
        description="Asks in one of your threads; the answer is grounded in retrieved papers "
        "and cites them as [1], [2]. By default the request waits for the whole answer and "
        "returns both messages as JSON (201). " + SSE_DESCRIPTION,
        parameters=[THREAD_ID_PARAMETER],
        request=AskSerializer,
        responses={
            201: OpenApiResponse(
                AskResultSerializer, description="The question and its finished answer."
            ),
            (200, EVENT_STREAM): OpenApiResponse(
                OpenApiTypes.STR,
                description="The answer as server-sent events (`Accept: text/event-stream`).",
                examples=[OpenApiExample("stream", value=SSE_EXAMPLE)],
            ),
            409: error_response("An answer is already being written in this thread."),
        },
        examples=[
            OpenApiExample(
                "question", value={"text": "What is new on diffusion models for text?"},
                request_only=True,
            ),
            OpenApiExample(
                "re-ask with edited filters",
                value={
                    "text": "diffusion models for text since 2024",
                    "filters": {"start": "2025-01-01", "end": None, "categories": ["cs.CL"]},
                },
                request_only=True,
            ),
        ],
        tags=["threads"],
    )
    def post(self, request, *args, **kwargs):
        thread = get_thread_for(request.user, self.kwargs["thread_id"])
        ask = AskSerializer(data=request.data)
        ask.is_valid(raise_exception=True)
        return AskAccepted(
            request.user, thread.pk, ask.validated_data["text"], wants_event_stream(request),
            ask.validated_data.get("filters") or None,
        )


_drf_view = ThreadMessagesView.as_view()


@csrf_exempt  # as for every DRF view: tokens need no CSRF, and DRF checks it for sessions
async def thread_messages(request, thread_id):
    response = await sync_to_async(_drf_view)(request, thread_id=thread_id)
    if not isinstance(response, AskAccepted):
        return response  # the message list, or an error
    try:
        stream = await AnswerStream.open(
            response.user, response.thread_id, response.question, response.filters
        )
    except service.AskRefused as refusal:
        return _refusal_response(refusal)
    if response.stream:
        return await _event_stream_response(request, stream)
    return await _json_answer(stream)


# Lets drf-spectacular find and document the DRF view behind the async function.
thread_messages.cls = ThreadMessagesView
thread_messages.initkwargs = {}


def _refusal_response(refusal: "service.AskRefused") -> JsonResponse:
    status = REFUSAL_STATUS.get(refusal.code, 400)
    response = JsonResponse(error_body(refusal.code, refusal.message), status=status)
    if status == 429:
        response["Retry-After"] = str(refusal.extra.get("retry_after", 60))
    return response


async def _event_stream_response(request, stream: AnswerStream) -> HttpResponse:
    async def frames():
        async for event in stream.events():
            yield sse_frame(event)

    if isinstance(request, ASGIRequest):
        response = StreamingHttpResponse(frames(), content_type=EVENT_STREAM)
    else:
        # Under WSGI (Django's test client) nothing can stream, and the loop this view runs on
        # ends with it: collect the whole stream now and send it as one body.
        response = HttpResponse(b"".join([frame async for frame in frames()]),
                                content_type=EVENT_STREAM)
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
    return response


async def _json_answer(stream: AnswerStream) -> JsonResponse:
    async for _event in stream.events():
        pass  # the JSON mode only needs the end

    def serialize():
        messages = Message.objects.in_bulk([stream.user_message_id, stream.message_id])
        final = stream.final or {}
        return AskResultSerializer(
            {
                "question": messages[stream.answer.turn.user_message_id],
                "answer": messages[stream.answer.message_id],
                "followups": final.get("followups") or [],
            }
        ).data

    return JsonResponse(await sync_to_async(serialize)(), status=201)

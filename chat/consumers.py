"""The thread socket: ws/threads/<uuid>/ (protocol in docs/WEBSOCKET.md).

The consumer only relays: it checks who is asking, passes `ask` and `stop` to chat.service, and
forwards the events published to the thread's group (chat.events). Answers do not belong to the
socket: closing it mid-answer changes nothing for the answer.

Who is asking is checked again before every frame that reads or changes data (an ask's with its
turn, chat.turns.create_turn), and when the user's account changes (chat.signed_in): a socket
whose session ended is closed. The other checks run on chat.lanes.socket_lanes, whose
connections stay open (Channels' database_sync_to_async opens and closes one per call: a
PostgreSQL backend started for every frame) and which answers' saves and searches never hold.
A user has at most
WS_MAX_SOCKETS_PER_USER sockets per process, and each socket at most WS_CONTROL_BURST control
frames at once (then WS_CONTROL_PER_SECOND).
"""

import asyncio
import json
import logging
from collections import Counter

from channels.auth import AuthMiddleware, get_user
from channels.generic.websocket import AsyncJsonWebsocketConsumer, AsyncWebsocketConsumer
from channels.sessions import CookieMiddleware, SessionMiddleware
from django.conf import settings

from chat import events, service, turns
from chat.lanes import socket_lanes
from chat.models import Thread
from chat.signed_in import fingerprint, still_signed_in
from chat.throttle import TokenBucket

logger = logging.getLogger(__name__)

# Room for a maximal question after JSON escaping (every character as \uXXXX) plus the envelope.
ENVELOPE_BYTES = 1024
# Close codes (the 4000s are the application's), mirroring HTTP's 401 and 429: after them a page
# reloads (to the log-in page) or stops reconnecting, instead of retrying (static/js/chat.js).
CLOSE_SIGNED_OUT = 4401
CLOSE_TOO_MANY_SOCKETS = 4429
# Frames that read or change data: the sender's session is checked again before each.
CHECKED_FRAMES = {"ask", "stop", "sync"}
# Frames limited by the socket's token bucket (an ask has its own, per-user limit).
CONTROL_FRAMES = {"stop", "sync", "ping"}

# Seconds a socket waits before checking its session after a password change or deactivation.
ACCOUNT_CHECK_DELAY = 1.0

# Open thread sockets in this process, per user id.
open_sockets: Counter[int] = Counter()


class LaneAuthMiddleware(AuthMiddleware):
    """Channels' AuthMiddleware with its user lookup (the session row, the user row, the
    session hash; `channels.auth.get_user`, unchanged) on chat.lanes.socket_lanes instead of
    `database_sync_to_async`, which ran it on the one sync thread every socket shares and then
    closed its connection (CONN_MAX_AGE 0): every handshake started a PostgreSQL backend."""

    async def resolve_scope(self, scope):
        scope["user"]._wrapped = await socket_lanes.run(get_user.func, scope)


def LaneAuthMiddlewareStack(inner):  # noqa: N802
    """Channels' AuthMiddlewareStack (cookies, then the session, then the user) with
    LaneAuthMiddleware."""
    return CookieMiddleware(SessionMiddleware(LaneAuthMiddleware(inner)))


def max_frame_chars() -> int:
    return settings.CHAT_MAX_QUESTION_CHARS * 6 + ENVELOPE_BYTES


class ThreadConsumer(AsyncJsonWebsocketConsumer):
    thread_id = None
    user = None
    counted = False  # in open_sockets
    closing = False

    async def connect(self):
        # Strangers and anonymous visitors are refused before the handshake completes: they are
        # sent nothing at all, not even whether the thread exists.
        user = self.scope.get("user")
        thread_id = self.scope["url_route"]["kwargs"]["thread_id"]
        if user is None or not user.is_authenticated:
            await self.close()
            return
        owns = await socket_lanes.run(Thread.objects.filter(pk=thread_id, owner_id=user.pk).exists)
        if not owns:
            await self.close()
            return
        limit = settings.WS_MAX_SOCKETS_PER_USER
        if limit > 0 and open_sockets[user.pk] >= limit:
            # Accepted only to say why: a refused handshake would look like a network error.
            logger.warning("socket_refused user=%s too many sockets (%d)", user.pk, limit)
            await self.accept()
            await self.send_json(events.too_many_sockets(limit))
            await self.close(code=CLOSE_TOO_MANY_SOCKETS)
            return
        open_sockets[user.pk] += 1  # no await since the check: no other connect in between
        self.counted = True
        self.user, self.thread_id = user, thread_id
        self.control = TokenBucket(settings.WS_CONTROL_BURST, settings.WS_CONTROL_PER_SECOND)
        try:
            await self.channel_layer.group_add(events.group_name(thread_id), self.channel_name)
            await self.channel_layer.group_add(events.user_group_name(user.pk), self.channel_name)
            await self.accept()
            await self.send_state()
        except BaseException:  # no disconnect() follows a failed connect: give the place back
            self.release_place()
            raise

    def release_place(self) -> None:
        if self.counted:
            self.counted = False
            open_sockets[self.user.pk] -= 1
            if open_sockets[self.user.pk] <= 0:
                del open_sockets[self.user.pk]

    async def send_state(self):
        """`resume` for an answer in progress (another tab, this tab before a reload), then
        `ready` naming it, so a page can reload answers that ended while it was not listening."""
        snapshot = await service.request_snapshot(self.thread_id, self.channel_name)
        if snapshot is not None:
            await self.send_json(snapshot)
        streaming = snapshot["message_id"] if snapshot else None
        await self.send_json(events.ready(self.thread_id, streaming))

    async def disconnect(self, code):
        self.release_place()
        if self.thread_id is not None:
            await self.channel_layer.group_discard(
                events.group_name(self.thread_id), self.channel_name
            )
            await self.channel_layer.group_discard(
                events.user_group_name(self.user.pk), self.channel_name
            )

    def session_key(self) -> str | None:
        session = self.scope.get("session")
        return session.session_key if session is not None else None

    async def still_signed_in(self, for_frame: bool = True) -> bool:
        """Whether the session this socket was opened with still signs its user in; if not, the
        socket is told and closed. With the database down, the frame is refused as any other
        work would be, and the socket stays open (it is checked again on the next one)."""
        if self.closing:
            return False
        try:
            signed_in = await socket_lanes.run(still_signed_in, self.session_key(), self.user.pk)
        except turns.DATABASE_DOWN as exc:
            logger.warning(
                "session_not_checked user=%s database unavailable: %s",
                self.user.pk,
                turns.reason(exc),
            )
            if for_frame:
                await self.send_error("database_unavailable", turns.DATABASE_DOWN_MESSAGE)
            return False
        if signed_in:
            return True
        await self.close_signed_out()
        return False

    async def close_signed_out(self) -> None:
        if self.closing:
            return
        self.closing = True
        logger.info("socket_closed user=%s thread=%s signed out", self.user.pk, self.thread_id)
        await self.send_json(events.signed_out())
        await self.close(code=CLOSE_SIGNED_OUT)

    async def receive(self, text_data=None, bytes_data=None):
        # Parsing is done here, not by the JSON consumer, so bad input becomes an error event
        # instead of an exception that would drop the connection.
        if self.closing:  # signed out: frames still in flight are ignored
            return
        if text_data is None:
            await self.send_error("binary_not_supported", "Send JSON text frames only.")
            return
        if len(text_data) > max_frame_chars():
            await self.send_error(
                "frame_too_large",
                f"Messages are limited to {max_frame_chars()} characters.",
            )
            return
        try:
            content = json.loads(text_data)
        except (ValueError, RecursionError):  # RecursionError: "[[[[…" nested too deep
            await self.send_error("invalid_json", "The message is not valid JSON.")
            return
        if not isinstance(content, dict) or not isinstance(content.get("type"), str):
            await self.send_error("invalid_message", 'Messages are JSON objects with a "type".')
            return
        await self.receive_json(content)

    async def receive_json(self, content, **kwargs):
        kind = content["type"]
        if kind in CONTROL_FRAMES:
            retry_after = self.control.take()
            if retry_after:
                await self.send_json(events.control_rate_limited(retry_after))
                return
        # An ask's session is checked with its turn, in one lane job (chat.turns.create_turn).
        if kind in CHECKED_FRAMES and kind != "ask" and not await self.still_signed_in():
            return
        try:
            if kind == "ask":
                await service.ask(
                    self.user, self.thread_id, content.get("text"), content.get("filters"),
                    session_key=self.session_key(),
                )
            elif kind == "stop":
                await service.stop(self.user, self.thread_id)
            elif kind == "sync":  # a page that heard nothing for a while checks it missed nothing
                await self.send_state()
            elif kind == "ping":
                await self.send_json(events.pong())
            else:
                await self.send_error(
                    "unknown_type",
                    f'Unknown message type "{kind[:40]}"; use "ask", "stop", "sync" or "ping".',
                )
        except service.AskRefused as refusal:
            await self.send_json(refusal.event())
        except turns.SignedOut:
            await self.close_signed_out()

    async def send_error(self, code: str, message: str) -> None:
        await self.send_json(events.error(code, message))

    async def dispatch(self, message):
        # Channels runs django.db.close_old_connections on its one sync thread before every
        # handler: for a token frame that is a thread round trip per socket per frame, queued
        # behind every socket's session check, for a handler that never touches the database.
        # The other handlers still get it.
        if message["type"] == "chat.event":
            await self.chat_event(message)
        else:
            await super().dispatch(message)

    # Group messages published through chat.events.
    async def chat_event(self, message):
        if not self.closing:
            await self.send_json(message["event"])

    async def chat_account(self, message):
        """The user's account changed (chat.signed_in): close if this session has ended."""
        ended = message.get("ended_session")
        if ended is not None:  # a log-out, of this session or another
            if ended == fingerprint(self.session_key()):
                await self.close_signed_out()
            return
        # A password change rotates the changer's own session just after saving: let it land,
        # so the page this closes reloads with the new session cookie, not the old one.
        await asyncio.sleep(ACCOUNT_CHECK_DELAY)
        await self.still_signed_in(for_frame=False)


class UnknownSocketConsumer(AsyncWebsocketConsumer):
    """Any other socket path (a thread id that is not a UUID, a typo): refused at the handshake
    (403) like a stranger's thread. Without it the router raises, and daphne answers 500."""

    async def connect(self):
        await self.close()

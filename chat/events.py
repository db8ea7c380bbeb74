"""Every envelope of the thread socket and the event stream is built here, and leaves through here.

Like zulip's `send_event` and `event_schema`: one function per event type, `SCHEMAS` pins each
type's fields (docs/WEBSOCKET.md says what they mean), `publish` sends an answer's events to the
thread's channel-layer group (`thread.<uuid hex>`, joined by every socket and API stream on the
thread), and tests/chat/test_events.py holds every envelope a real answer sends against `check`.

The answer pipeline (chat.pipeline.answer) yields its events without what only the running answer
knows (message id, offsets, html, follow-ups); chat.runner completes them (`for_answer`, `token`,
`final`). The control group (`thread.<uuid hex>.control`) carries `stop` and "send me the live
text" to the process running the answer, from any process sharing the layer.
"""

import uuid
from typing import Any

from channels.layers import get_channel_layer

from chat.models import Message
from chat.understanding.overrides import chips, filters_of
from chat.window import window_label

FAILED = Message.Status.FAILED

# --- Channel-layer groups ------------------------------------------------------------------------
def group_name(thread_id) -> str:
    return f"thread.{uuid.UUID(str(thread_id)).hex}"


def control_group_name(thread_id) -> str:
    return f"{group_name(thread_id)}.control"


def user_group_name(user_id: int) -> str:
    """Every socket of one user (chat.signed_in tells them to check their session again)."""
    return f"user.{int(user_id)}"


async def account_changed(user_id: int, ended_session: str | None = None) -> None:
    """The user logged out of `ended_session` (chat.signed_in.fingerprint; its sockets close), or
    changed password or was deactivated (each socket checks whether its session still signs the
    user in)."""
    message = {"type": "chat.account", "ended_session": ended_session}
    await get_channel_layer().group_send(user_group_name(user_id), message)


async def publish(thread_id, event: dict) -> None:
    """Send one event to every socket and stream watching the thread."""
    message = {"type": "chat.event", "event": event}
    await get_channel_layer().group_send(group_name(thread_id), message)


async def send_to(channel: str, event: dict) -> None:
    """Send one event to one socket (the reply to its snapshot request)."""
    await get_channel_layer().send(channel, {"type": "chat.event", "event": event})


async def send_stop(thread_id, message_id=None) -> None:
    """Ask the process running the thread's answer (`message_id`, or whichever) to stop it."""
    control = {"type": "chat.stop"}
    if message_id is not None:
        control["message_id"] = str(message_id)
    await get_channel_layer().group_send(control_group_name(thread_id), control)


async def request_live_text(thread_id, reply_channel: str, message_id: str) -> None:
    """Ask the process running the answer to send `reply_channel` a `resume` with its live text."""
    await get_channel_layer().group_send(
        control_group_name(thread_id),
        {"type": "chat.sync", "reply_channel": reply_channel, "message_id": message_id},
    )


# --- The socket's own events ---------------------------------------------------------------------
def ready(thread_id, streaming: str | None) -> dict:
    return {"type": "ready", "thread_id": str(thread_id), "streaming": streaming}


def pong() -> dict:
    return {"type": "pong"}


def error(code: str, message: str, **extra: Any) -> dict:
    """A refusal or bad input (no `message_id`), or an interrupted answer."""
    return {"type": "error", "code": code, "message": message, **extra}


def signed_out() -> dict:
    """The last frame of a socket whose session ended (log-out, password change, deactivation)."""
    return error("signed_out", "You are signed out; sign in again to go on with this chat.")


def too_many_sockets(limit: int) -> dict:
    """The only frame of a socket over the user's limit of open sockets."""
    return error(
        "too_many_sockets",
        f"Too many chats are open at once (at most {limit}); close some tabs and reload.",
        limit=limit,
    )


def control_rate_limited(retry_after: int) -> dict:
    """A `sync`, `stop` or `ping` beyond the socket's allowance: not carried out."""
    return error(
        "rate_limited",
        f"Too many messages on this connection; try again in {retry_after} s.",
        retry_after=retry_after,
    )


def resume(message_id, user_message_id: str | None, question: str, query: str, analysis: dict,
           sources: list, content: str, status: str) -> dict:
    return dict(type="resume", message_id=str(message_id), user_message_id=user_message_id,
                question=question, query=query, analysis=analysis,
                window=window_label(analysis), filters=filters_of(analysis),
                chips=chips(analysis), sources=sources, content=content, status=status)


# --- The pipeline's events (chat.pipeline.answer), completed by the running answer ---------------
def analysis(query: str, analysis: dict, window: str | None) -> dict:
    """How the question was read; `filters` (every filter it was searched with, what the page's
    chips edit and send back in `ask`) and `chips` (what to show) come from the analysis."""
    return {
        "type": "analysis", "query": query, "analysis": analysis, "window": window,
        "filters": filters_of(analysis), "chips": chips(analysis),
    }


def sources(cards: list[dict]) -> dict:
    return {"type": "sources", "sources": cards}


# The steps of an answer a page shows while it waits, in order (docs/WEBSOCKET.md).
STAGES = ("understanding", "searching", "reading", "writing")


def stage(name: str, detail: str) -> dict:
    """Progress: the answer entered step `name`; `detail` is the line to show ("Searching 57,438
    papers…")."""
    if name not in STAGES:
        raise ValueError(f"unknown stage {name!r}")
    return {"type": "stage", "stage": name, "detail": detail}


def delta(text: str) -> dict:
    """New text from the LLM; the running answer coalesces these into `token` events."""
    return {"type": "token", "text": text}


def outcome(kind: str, content: str, citations: list, dropped: list, usage: dict, backend: str,
            model: str, timings: dict, **extra: Any) -> dict:
    """The pipeline's `done` or `error` (with `code` and `message`)."""
    return {
        "type": kind, "content": content, "citations": citations, "dropped_citations": dropped,
        "usage": usage, "backend": backend, "model": model, "timings": timings, **extra,
    }


# --- An answer's events on the wire --------------------------------------------------------------
def start(message_id, user_message_id, question: str) -> dict:
    return dict(type="start", message_id=str(message_id), user_message_id=str(user_message_id),
                question=question)


def for_answer(event: dict, message_id) -> dict:
    """The pipeline's `analysis` or `sources`, as sent: with the answer's id."""
    return {**event, "message_id": str(message_id)}


def token(message_id, offset: int, text: str) -> dict:
    return {"type": "token", "message_id": str(message_id), "offset": offset, "text": text}


def final(kind: str, message_id, status: str, content: str, html: str, citations: list,
          dropped: list, timings: dict, usage: dict, backend: str, model: str, followups: list,
          **extra: Any) -> dict:
    """The `done` or `error` (with `code` and `message`) that ends an answer, sent once saved."""
    return {
        "type": kind, "message_id": str(message_id), "status": status, "content": content,
        "html": html, "citations": citations, "dropped_citations": dropped, "timings": timings,
        "usage": usage, "backend": backend, "model": model, "followups": followups, **extra,
    }


def not_saved(final_event: dict) -> dict:
    """The end of an answer whose final save found no database: shown, but not kept."""
    return {
        **final_event, "type": "error", "status": FAILED, "code": "database_unavailable",
        "message": "The answer could not be saved: the database cannot be reached.",
    }


def saved_final(message: Message) -> dict:
    """The end of an answer as its row says (its final event never reached the stream)."""
    failed = message.status == FAILED
    event = {
        "type": "error" if failed else "done", "message_id": str(message.pk),
        "status": message.status, "content": message.content, "citations": message.citations,
    }
    if failed:
        event.update(code="internal_error", message=message.error or "The answer failed.")
    return event


# --- Schemas: each type's required and optional fields, with their types -------------------------
SOURCE_CARD = {
    "number": int, "paper_id": int, "arxiv_id": str, "title": str, "authors": str,
    "published": str, "primary_category": str, "categories": list, "score": float,
    "passage": str, "url": str,
}
FILTERS = {
    "start": (str, type(None)), "end": (str, type(None)), "recency_weight": float,
    "authors": list, "categories": list, "arxiv_id": (str, type(None)),
}
CHIP = {"kind": str, "label": str, "value": (str, float, type(None)), "edited": bool}
# The version read ("2401.12345v2"): absent from cards saved before answers named it.
SOURCE_CARD_OPTIONAL = {
    "version": int, "cited_as": str,
    # The thread-wide reference number (chat.references); absent from older cards.
    "label": int,
    # Where the passage comes from (absent from cards saved before full text): "abstract" or
    # "fulltext"; a chunk's 1-based PDF pages ("p. 7" as `pages`), section, the sentence that
    # answers, and arXiv's PDF at that page.
    "kind": str, "page": (int, type(None)), "page_end": (int, type(None)), "pages": str,
    "section": str, "quote": str, "pdf_url": str,
    # The passage's own text of the quote, which the card marks: its line breaks kept, or a
    # quoted table row's own line (the quote says the row with its header and caption).
    "highlight": str,
    # Each author's page, made on the server for pages that draw cards in the browser:
    # {"links": [{"name", "url"}], "more": int} (absent from older cards).
    "author_links": dict,
}
_ANSWER_END = {"message_id": str, "status": str, "content": str, "citations": list}
# Absent only when the end is read back from the row (`saved_final`).
_ANSWER_END_DETAIL = {
    "html": str, "dropped_citations": list, "timings": dict, "usage": dict, "backend": str,
    "model": str, "followups": list,
    # True when the relevance gate found nothing in the catalogue on the question (no citations).
    "nothing_relevant": bool,
    # A model's sentences no cited source supports (chat.pipeline.support); absent: not checked.
    "unsupported": list,
}
SCHEMAS: dict[str, tuple[dict, dict]] = {
    "ready": ({"thread_id": str, "streaming": (str, type(None))}, {}),
    "pong": ({}, {}),
    "resume": ({
        "message_id": str, "user_message_id": (str, type(None)), "question": str, "query": str,
        "analysis": dict, "window": str, "filters": dict, "chips": list, "sources": list,
        "content": str, "status": str,
    }, {}),
    "start": ({"message_id": str, "user_message_id": str, "question": str}, {}),
    "analysis": ({
        "message_id": str, "query": str, "analysis": dict, "window": str, "filters": dict,
        "chips": list,
    }, {}),
    "sources": ({"message_id": str, "sources": list}, {}),
    "stage": ({"message_id": str, "stage": str, "detail": str}, {}),
    "token": ({"message_id": str, "offset": int, "text": str}, {}),
    "done": (_ANSWER_END, _ANSWER_END_DETAIL),
    "error": (
        {"code": str, "message": str},
        {**_ANSWER_END, **_ANSWER_END_DETAIL, "limit": int, "retry_after": int},
    ),
}


def check(event: dict) -> None:
    """Raise ValueError unless `event` has exactly its type's fields, with their types."""
    kind = event.get("type")
    if kind not in SCHEMAS:
        raise ValueError(f"unknown event type {kind!r}")
    required, optional = SCHEMAS[kind]
    _check_fields(event, {"type": str, **required}, optional, kind)
    if kind == "error" and "message_id" in event:  # an error that ends an answer
        _check_fields(event, {"type": str, **required, **_ANSWER_END}, optional, kind)
    for card in event.get("sources", ()):
        _check_fields(card, SOURCE_CARD, SOURCE_CARD_OPTIONAL, f"{kind}.sources[]")
    if "filters" in event:
        _check_fields(event["filters"], FILTERS, {}, f"{kind}.filters")
    for chip in event.get("chips", ()):
        _check_fields(chip, CHIP, {}, f"{kind}.chips[]")


def _check_fields(value: dict, required: dict, optional: dict, where: str) -> None:
    types = {**optional, **required}
    missing = sorted(required.keys() - value.keys())
    unknown = sorted(value.keys() - types.keys())
    wrong = sorted(k for k, v in value.items() if k in types and not isinstance(v, types[k]))
    if missing or unknown or wrong:
        raise ValueError(f"{where}: missing {missing}, unknown {unknown}, wrong type {wrong}")

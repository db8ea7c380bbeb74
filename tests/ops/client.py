"""A real client for the drills: HTTP login with the CSRF token, then real WebSockets.

Everything goes over loopback to daphne processes (tests.live_server.LiveServer), the way a
browser would: the session cookie from the login form, an Origin the server allows.
"""

import asyncio
import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
from django.conf import settings
from websockets.asyncio.client import ClientConnection, connect

# How long a drill waits for any one event before calling the server stuck.
EVENT_TIMEOUT = 20.0


@contextlib.contextmanager
def logged_in_client(base_url: str, username: str, password: str) -> Iterator[httpx.Client]:
    """An HTTP client logged in through the login form (CSRF token and all), keeping its cookies
    (session and CSRF) like a browser."""
    with httpx.Client(base_url=base_url, follow_redirects=False, timeout=30) as http:
        page = http.get("/accounts/login/")
        response = http.post(
            "/accounts/login/",
            data={"username": username, "password": password,
                  "csrfmiddlewaretoken": page.cookies["csrftoken"]},
            headers={"Referer": base_url + "/accounts/login/"},
        )
        assert response.status_code == 302, f"login failed: {response.status_code}"
        yield http


def login_cookie(base_url: str, username: str, password: str) -> str:
    """A `Cookie` header value for a session logged in through the login form."""
    with logged_in_client(base_url, username, password) as http:
        session = http.cookies[settings.SESSION_COOKIE_NAME]
    return f"{settings.SESSION_COOKIE_NAME}={session}"


@dataclass
class Answer:
    """Everything one socket saw of one answer."""

    message_id: str
    events: list[dict] = field(default_factory=list)
    text: str = ""  # rebuilt from `token` offsets, as docs/WEBSOCKET.md tells clients to

    @property
    def final(self) -> dict:
        return self.events[-1]

    @property
    def kinds(self) -> list[str]:
        return [e["type"] for e in self.events]

    def apply(self, event: dict) -> None:
        self.events.append(event)
        if event["type"] == "token":
            offset, chunk = event["offset"], event["text"]
            if offset + len(chunk) > len(self.text) and offset <= len(self.text):
                self.text = self.text[:offset] + chunk
        elif event["type"] == "resume" and len(event.get("content") or "") > len(self.text):
            self.text = event["content"]


class Tab:
    """One WebSocket on a thread, like one browser tab."""

    def __init__(self, ws: ClientConnection):
        self.ws = ws
        self.ready: dict | None = None

    @classmethod
    async def open_raw(cls, server_ws_url: str, thread_id, cookie: str, origin: str) -> "Tab":
        """A socket the server accepted, before anything it sends is read."""
        ws = await connect(
            f"{server_ws_url}/ws/threads/{thread_id}/",
            origin=origin,
            additional_headers={"Cookie": cookie},
            max_size=None,
            open_timeout=EVENT_TIMEOUT,
        )
        return cls(ws)

    @classmethod
    async def open(cls, server_ws_url: str, thread_id, cookie: str, origin: str) -> "Tab":
        tab = await cls.open_raw(server_ws_url, thread_id, cookie, origin)
        while tab.ready is None:
            event = await tab.next_event()
            if event["type"] == "ready":
                tab.ready = event
        return tab

    async def next_event(self, timeout: float = EVENT_TIMEOUT) -> dict:
        raw = await asyncio.wait_for(self.ws.recv(), timeout)
        return json.loads(raw)

    async def send(self, payload: dict) -> None:
        await self.ws.send(json.dumps(payload))

    async def ask(self, text: str) -> None:
        await self.send({"type": "ask", "text": text})

    async def refusal(self) -> dict:
        """The next `error` event that belongs to no answer (a refusal of bad input)."""
        while True:
            event = await self.next_event()
            if event["type"] == "error" and "message_id" not in event:
                return event

    async def answer(self, until_first_token: bool = False) -> Answer:
        """Read one answer from its `start` (or `resume`) to its `done` or `error`."""
        answer: Answer | None = None
        while True:
            event = await self.next_event()
            if answer is None:
                if event["type"] in ("start", "resume"):
                    answer = Answer(event["message_id"])
                elif event["type"] == "error" and "message_id" not in event:
                    raise AssertionError(f"the ask was refused: {event}")
                else:
                    continue
            if event.get("message_id") != answer.message_id:
                continue
            answer.apply(event)
            if event["type"] in ("done", "error"):
                return answer
            if until_first_token and event["type"] == "token":
                return answer

    async def finish(self, answer: Answer) -> Answer:
        """Go on reading an answer returned by `answer(until_first_token=True)`."""
        while True:
            event = await self.next_event()
            if event.get("message_id") != answer.message_id:
                continue
            answer.apply(event)
            if event["type"] in ("done", "error"):
                return answer

    async def close(self) -> None:
        await self.ws.close()

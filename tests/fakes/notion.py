"""A local stand-in for Notion's public API (`POST /v1/pages`, `PATCH /v1/blocks/{id}/children`),
for tests: the edge of the world, spoken to over real HTTP by chat.notion.

It checks what Notion checks and answers as Notion does: a Bearer token equal to `key` (else
401 `unauthorized`), a `Notion-Version` header (else 400 `missing_version`), at most 100
children per request and 2,000 characters per rich-text item (else 400 `validation_error`).
`fail_next(status, headers)` scripts an error for the next request. Every request is recorded
as (method, path, headers, body).

    with FakeNotion(key="secret") as fake:
        settings.NOTION_API_URL = fake.url
        fake.fail_next(429, {"Retry-After": "7"})
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ERROR_CODES = {401: "unauthorized", 404: "object_not_found", 429: "rate_limited",
               500: "internal_server_error", 502: "bad_gateway", 503: "service_unavailable"}


def _problem(body: dict) -> str | None:
    children = body.get("children") or []
    if len(children) > 100:
        return f"body.children.length should be ≤ 100, instead was {len(children)}."
    for block in children:
        kind = block.get("type")
        for item in (block.get(kind) or {}).get("rich_text", []):
            if len(item.get("text", {}).get("content", "")) > 2000:
                return "body.children.rich_text.text.content.length should be ≤ 2000."
    return None


class FakeNotion:
    def __init__(self, key: str = "secret_test"):
        self.key = key
        self.requests: list[tuple[str, str, dict, dict]] = []
        self.pages: dict[str, list[dict]] = {}  # page id -> its blocks
        self._script: deque[tuple[int, dict]] = deque()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _answer(self, status: int, payload: dict, headers: dict | None = None):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _error(self, status: int, code: str, message: str, headers=None):
                self._answer(status, {"object": "error", "status": status, "code": code,
                                      "message": message}, headers)

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    return self._error(400, "invalid_json", "Error parsing JSON body.")
                with fake._lock:
                    fake.requests.append((self.command, self.path, dict(self.headers), body))
                    scripted = fake._script.popleft() if fake._script else None
                if scripted:
                    status, headers = scripted
                    return self._error(status, ERROR_CODES.get(status, "error"),
                                       f"Scripted failure {status}.", headers)
                if self.headers.get("Authorization") != f"Bearer {fake.key}":
                    return self._error(401, "unauthorized", "API token is invalid.")
                if not self.headers.get("Notion-Version"):
                    return self._error(400, "missing_version",
                                       "Notion-Version header failed validation.")
                if problem := _problem(body):
                    return self._error(400, "validation_error", problem)
                if self.command == "POST" and self.path == "/v1/pages":
                    page_id = str(uuid.uuid4())
                    with fake._lock:
                        fake.pages[page_id] = list(body.get("children") or [])
                    return self._answer(200, {
                        "object": "page", "id": page_id,
                        "url": f"https://www.notion.so/{page_id.replace('-', '')}",
                    })
                parts = self.path.strip("/").split("/")
                if self.command == "PATCH" and len(parts) == 4 and parts[:2] == ["v1", "blocks"]:
                    with fake._lock:
                        if parts[2] not in fake.pages:
                            return self._error(404, "object_not_found", "Could not find block.")
                        fake.pages[parts[2]].extend(body.get("children") or [])
                    return self._answer(200, {"object": "list", "results": []})
                return self._error(400, "invalid_request_url", "Invalid request URL.")

            do_POST = do_PATCH = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def fail_next(self, status: int, headers: dict | None = None) -> None:
        with self._lock:
            self._script.append((status, headers or {}))

    def __enter__(self) -> FakeNotion:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

"""A local stand-in for arxiv.org/pdf serving real PDFs (../shared/data/arxiv-pdf) over HTTP.

    with FakePdfServer() as server:
        settings.ARXIV_PDF_URL = server.url_template      # http://127.0.0.1:PORT/pdf/{arxiv_id}v{version}
        server.script("2007.01282", "html")               # this paper answers with an error page

`GET /pdf/<id>v<n>` answers `<id>v<n>.pdf` from the data folder, or bytes given with `serve()`
(a generated PDF: no text layer, encrypted, 300 pages). Faults, per id: "html" (200 text/html),
"truncate" (Content-Length of the whole file, half the bytes, then the connection closes),
"stall" (headers, then silence), "404", or `fail_next()` for 429/503 with Retry-After.

Run it by hand: `python -m tests.fakes.arxiv_pdfs` prints its URL template (for ARXIV_PDF_URL).
"""

import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.fakes import SHARED_DATA

DEFAULT_DATA = SHARED_DATA / "arxiv-pdf"
_PATH = re.compile(r"^/pdf/(?P<id>.+?)v(?P<version>\d+)$")
ERROR_PAGE = (
    b"<!DOCTYPE html><html><head><title>arXiv</title></head><body><h1>PDF unavailable</h1>"
    b"<p>We are generating this PDF; please try again later.</p></body></html>"
)


@dataclass
class Served:
    at: float
    path: str
    status: int
    user_agent: str


@dataclass
class FakePdfServer:
    data_dir: Path = DEFAULT_DATA
    requests: list[Served] = field(default_factory=list)
    concurrent_peak: int = 0

    def __post_init__(self):
        self._faults: dict[str, str] = {}
        self._bodies: dict[str, bytes] = {}
        self._fail_next: list[tuple[int, str | None]] = []
        self._lock = threading.Lock()
        self._in_flight = 0
        self._release = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    # --- scripting ---
    def script(self, arxiv_id: str, fault: str) -> None:
        if fault not in {"html", "truncate", "stall", "404"}:
            raise ValueError(f"unknown fault {fault!r}")
        self._faults[arxiv_id] = fault

    def serve(self, arxiv_id: str, content: bytes) -> None:
        """Answer this id (any version) with these bytes instead of a file."""
        self._bodies[arxiv_id] = content

    def fail_next(self, times: int = 1, status: int = 503, retry_after: str | None = None):
        self._fail_next.extend([(status, retry_after)] * times)

    # --- lifecycle ---
    @property
    def url_template(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/pdf/{{arxiv_id}}v{{version}}"

    def start(self) -> "FakePdfServer":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                fake._handle(self)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._release.set()  # let stalled handlers end
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # --- answering ---
    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self._in_flight += 1
            self.concurrent_peak = max(self.concurrent_peak, self._in_flight)
        try:
            self._answer(handler)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with self._lock:
                self._in_flight -= 1

    def _record(self, handler, status: int) -> None:
        self.requests.append(
            Served(time.monotonic(), handler.path, status, handler.headers.get("User-Agent", ""))
        )

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        handler.close_connection = True
        with self._lock:
            failure = self._fail_next.pop(0) if self._fail_next else None
        if failure is not None:
            status, retry_after = failure
            self._send(handler, status, b"busy", {"Retry-After": retry_after})
            return
        match = _PATH.match(handler.path)
        if not match:
            self._send(handler, 404, b"not found")
            return
        arxiv_id, version = match.group("id"), match.group("version")
        fault = self._faults.get(arxiv_id)
        if fault == "404":
            self._send(handler, 404, b"<html><body>Article withdrawn</body></html>")
            return
        if fault == "html":
            self._send(handler, 200, ERROR_PAGE, {"Content-Type": "text/html; charset=utf-8"})
            return
        body = self._bodies.get(arxiv_id)
        if body is None:
            path = self.data_dir / f"{arxiv_id}v{version}.pdf"
            if not path.is_file():
                self._send(handler, 404, b"no such paper")
                return
            body = path.read_bytes()
        if fault == "truncate":
            self._record(handler, 200)
            handler.send_response(200)
            handler.send_header("Content-Type", "application/pdf")
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body[: len(body) // 2])
            handler.wfile.flush()
            return  # the connection closes short of Content-Length
        if fault == "stall":
            self._record(handler, 200)
            handler.send_response(200)
            handler.send_header("Content-Type", "application/pdf")
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body[:1000])
            handler.wfile.flush()
            self._release.wait(30)  # silence until the test ends
            return
        self._send(handler, 200, body, {"Content-Type": "application/pdf"})

    def _send(self, handler, status: int, body: bytes, headers: dict | None = None) -> None:
        self._record(handler, status)
        handler.send_response(status)
        for name, value in (headers or {}).items():
            if value is not None:
                handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)


if __name__ == "__main__":
    with FakePdfServer() as server:
        print(f"serving {server.data_dir} at {server.url_template} (Ctrl-C stops)")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass

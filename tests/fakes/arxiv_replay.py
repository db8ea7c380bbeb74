"""A local stand-in for the arXiv query API that replays recorded responses.

Serves ../shared/data/arxiv-api/*.xml over real HTTP on 127.0.0.1 (a free port), so tests drive
the real `arxiv` client and our code end to end. Files are named after the query they answer:

    q_testing_s10_m10_<hash>.xml           search_query=all:testing&start=10&max_results=10
    id_astro-ph_0601001_s0_m100_<hash>.xml id_list=astro-ph/0601001&start=0&max_results=100

Our ingest asks `cat:cs.AI AND submittedDate:[...]`; `categories` maps a category to the
recorded query that stands for it ({"cs.AI": "q_testing"}). `total_results` caps the
advertised total so paging ends where the recordings end. Faults can be scripted: `fail_next`
answers the next requests with an error status, `die_after` drops the server after N requests
(everything after is a refused connection), like an arXiv outage in the middle of a run.

Run it by hand: `python tests/fakes/arxiv_replay.py` prints its URL (for ARXIV_API_URL).
"""

import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from tests.fakes import SHARED_DATA

DEFAULT_DATA = SHARED_DATA / "arxiv-api"
_TOTAL = re.compile(rb"(<opensearch:totalResults[^>]*>)(\d+)(</opensearch:totalResults>)")


@dataclass
class Request:
    at: float
    path: str
    params: dict[str, str]
    status: int


@dataclass
class _Fault:
    status: int
    retry_after: str | None


@dataclass
class ReplayArxiv:
    data_dir: Path = DEFAULT_DATA
    categories: dict[str, str] = field(default_factory=dict)
    # Free-form queries (a live search's `au:… AND (ti:w OR abs:w)`): the first regular
    # expression found in the query names the recording that answers it.
    queries: dict[str, str] = field(default_factory=dict)
    total_results: int | None = None
    requests: list[Request] = field(default_factory=list)
    concurrent_peak: int = 0

    def __post_init__(self):
        self._faults: list[_Fault] = []
        self._die_after: int | None = None
        self._lock = threading.Lock()
        self._in_flight = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- scripting ---
    def fail_next(self, times: int = 1, status: int = 503, retry_after: str | None = None) -> None:
        self._faults.extend(_Fault(status, retry_after) for _ in range(times))

    def die_after(self, served: int) -> None:
        """Stop accepting connections once `served` requests have been answered."""
        self._die_after = served

    # --- lifecycle ---
    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/api/query"

    def start(self) -> "ReplayArxiv":
        replay = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                replay._handle(self)

            def log_message(self, *args):  # keep test output clean
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # --- answering ---
    def pages(self) -> list[tuple[str, int]]:
        """(query, start) of every answered request, in order."""
        return [
            (
                r.params.get("search_query") or r.params.get("id_list", ""),
                int(r.params.get("start", 0)),
            )
            for r in self.requests
            if r.status == 200
        ]

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self._in_flight += 1
            self.concurrent_peak = max(self.concurrent_peak, self._in_flight)
        try:
            self._answer(handler)
        finally:
            with self._lock:
                self._in_flight -= 1

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        params = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        with self._lock:
            served = len(self.requests)
            dying = self._die_after is not None and served >= self._die_after
            fault = None if dying or not self._faults else self._faults.pop(0)
        if dying:
            # Close without answering and stop listening: the next connect is refused.
            handler.close_connection = True
            threading.Thread(target=self.stop, daemon=True).start()
            return
        if fault is not None:
            self._send(handler, fault.status, b"busy", params, {"Retry-After": fault.retry_after})
            return
        if parts.path.rstrip("/") != "/api/query":
            self._send(handler, 404, b"not found", params)
            return
        body = self._recorded(params)
        if body is None:
            self._send(handler, 404, b"no recording for this query", params)
            return
        self._send(handler, 200, body, params, {"Content-Type": "application/atom+xml"})

    def _send(self, handler, status: int, body: bytes, params: dict, headers: dict | None = None):
        self.requests.append(Request(time.monotonic(), handler.path, params, status))
        handler.send_response(status)
        for name, value in (headers or {}).items():
            if value is not None:
                handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def _recorded(self, params: dict[str, str]) -> bytes | None:
        start = params.get("start", "0")
        size = params.get("max_results", "10")
        if ids := params.get("id_list"):
            prefix = "id_" + ids.replace("/", "_").replace(",", "_")
        else:
            query = params.get("search_query", "")
            chosen = next(
                (p for pattern, p in self.queries.items() if re.search(pattern, query)), None
            )
            if chosen is not None:
                prefix = chosen
            elif match := re.search(r"cat:(\S+)", query):
                prefix = self.categories.get(match.group(1))
                if prefix is None:
                    return None
            elif match := re.fullmatch(r"all:(\w+)", query):
                prefix = f"q_{match.group(1)}"
            else:
                return None
        matches = sorted(self.data_dir.glob(f"{prefix}_s{start}_m{size}_*.xml"))
        if not matches:
            return None
        body = matches[0].read_bytes()
        if self.total_results is not None:
            body = _TOTAL.sub(
                lambda m: (
                    m.group(1) + str(min(int(m.group(2)), self.total_results)).encode() + m.group(3)
                ),
                body,
            )
        return body


if __name__ == "__main__":
    with ReplayArxiv(categories={"cs.AI": "q_testing"}, total_results=60) as replay:
        print(f"replaying {replay.data_dir} at {replay.url} (Ctrl-C stops)")
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass

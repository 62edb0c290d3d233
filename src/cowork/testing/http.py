"""A small threaded HTTP server for tests that need a real web endpoint (fetching, search APIs, OAuth)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["LocalServer", "Reply", "Route", "Seen"]


@dataclass
class Seen:
    """A request the local server received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def form(self) -> dict[str, list[str]]:
        return parse_qs(self.body.decode())


@dataclass
class Reply:
    status: int = 200
    body: bytes | str = b""
    content_type: str | None = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


Route = Reply | Callable[[Seen], Reply]


class LocalServer:
    """`with LocalServer({"/path": Reply(...) or handler}) as s:` serves on 127.0.0.1 and records requests."""

    def __init__(self, routes: Mapping[str, Route] | None = None) -> None:
        self.routes: dict[str, Route] = dict(routes or {})
        self.requests: list[Seen] = []
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._httpd is not None
        return self._httpd.server_address[1]

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        split = urlsplit(handler.path)
        length = int(handler.headers.get("content-length") or 0)
        seen = Seen(
            handler.command,
            split.path,
            parse_qs(split.query),
            {k.lower(): v for k, v in handler.headers.items()},
            handler.rfile.read(length) if length else b"",
        )
        self.requests.append(seen)
        route = self.routes.get(split.path, Reply(404, "not here", "text/plain"))
        reply = route(seen) if callable(route) else route
        if reply.delay and self._stop.wait(reply.delay):
            return
        body = reply.body.encode() if isinstance(reply.body, str) else reply.body
        try:
            handler.send_response(reply.status)
            if reply.content_type:
                handler.send_header("Content-Type", reply.content_type)
            handler.send_header("Content-Length", str(len(body)))
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(body)
        except OSError:
            pass  # the client stopped reading (size limit, timeout)

    def __enter__(self) -> LocalServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server._handle(self)

            do_POST = do_GET

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = False  # server_close() joins every handler thread
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._httpd is not None and self._thread is not None
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

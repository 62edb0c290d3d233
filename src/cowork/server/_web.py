"""The web UI: the page at `/`, its static files, and trading the printed `?token=` for a cookie.

The browser never keeps the token in a URL or in script-readable storage: `/?token=...` sets an HttpOnly,
SameSite=Strict cookie and redirects to `/`, and `/ws` accepts that cookie (behind the usual Origin check).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._auth import cookie_name, token_matches

__all__ = ["WEB_ROOT", "HostCheck", "valid_host", "web_routes"]

WEB_ROOT = Path(__file__).with_name("web")

# Scripts, styles and sockets only from this server; nothing may frame the page (clickjacking an approval).
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self' {ws}; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


_HOST = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}\.?)*|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?")
"""A Host header that is a name, an IPv4 address or a bracketed IPv6 address, with an optional port."""


def valid_host(host: str) -> bool:
    """Whether `host` (a Host header) is safe to use: nothing in it can end a header value or a CSP source."""
    return len(host) <= 300 and _HOST.fullmatch(host) is not None


def _security_headers(request: Request) -> dict[str, str]:
    host = request.headers.get("host", "")
    if not valid_host(host):
        host = ""  # the app refuses such requests first (`HostCheck`); never put it in a header regardless
    return {
        "Content-Security-Policy": _CSP.format(ws=f"ws://{host} wss://{host}" if host else ""),
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }


class _HeadersStatic:
    """StaticFiles plus the page's security headers (scripts are modules; a stale cache would mix versions)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [
                    (b"x-content-type-options", b"nosniff"),
                    (b"cache-control", b"no-cache"),
                    (b"referrer-policy", b"no-referrer"),
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self._app(scope, receive, send_with_headers)


def web_routes(token: Callable[[], str | None], port: Callable[[], int | None]) -> list[BaseRoute]:
    """Routes for `/`, `/auth/check` and `/static/...`; `token()` and `port()` are read per request."""

    def presented(request: Request) -> str | None:
        return request.cookies.get(cookie_name(port()))

    def signed_in(request: Request) -> bool:
        expected = token()
        return expected is None or token_matches(presented(request), expected)

    async def index(request: Request) -> Response:
        headers = _security_headers(request)
        given = request.query_params.get("token")
        expected = token()
        if given is not None:
            if expected is not None and not token_matches(given, expected):
                return FileResponse(WEB_ROOT / "index.html", status_code=401, headers=headers)
            # Trade the token for a cookie, and take it out of the address bar (and the history) at once.
            response = RedirectResponse("/", status_code=303, headers=headers)
            if expected is not None:
                response.set_cookie(
                    cookie_name(port()), expected, httponly=True, samesite="strict", path="/", secure=False
                )
            return response
        return FileResponse(WEB_ROOT / "index.html", headers=headers)

    async def auth_check(request: Request) -> Response:
        """Whether this browser holds the token (the page asks, since a refused WebSocket cannot say why)."""
        ok = signed_in(request)
        return JSONResponse({"authorized": ok, "auth": token() is not None}, status_code=200 if ok else 401)

    return [
        Route("/", index, methods=["GET"]),
        Route("/auth/check", auth_check, methods=["GET"]),
        Mount("/static", app=_HeadersStatic(StaticFiles(directory=WEB_ROOT / "static")), name="static"),
    ]


class HostCheck:
    """Refuse a request whose Host header is not a plain host name or address (400), before anything reads it."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            host = next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"host"), "")
            if host and not valid_host(host):
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008, "reason": "bad Host header"})
                    return
                response = Response("Bad Host header.\n", status_code=400, media_type="text/plain")
                await response(scope, receive, send)
                return
        await self._app(scope, receive, send)

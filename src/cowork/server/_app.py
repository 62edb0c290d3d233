"""The ASGI application: `/ws`, `POST /rpc`, `/healthz`, with token and Origin checks in front of both."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from cowork.core import Core
from cowork.protocol import ErrorCode, ErrorSource, Invalid, ProtocolError

from ._auth import cookie_name, origin_allowed, token_from, token_matches
from ._connection import ConnectionLimits, WsConnection
from ._dispatch import Dispatcher, encode_error
from ._web import HostCheck, web_routes

__all__ = ["ServerState", "create_app"]

log = logging.getLogger(__name__)

CLOSE_POLICY_VIOLATION = 1008


@dataclass
class ServerState:
    """What the app needs beyond the core: the token, and the port it is served on (for the Origin check)."""

    core: Core
    token: str | None
    port: int | None = None
    connections: set[WsConnection] = field(default_factory=set)

    def idle(self) -> bool:
        return not self.connections and self.core.runtime.running_count() == 0


def _rpc_error(status: int, error: ProtocolError) -> Response:
    return Response(encode_error(None, error), status_code=status, media_type="application/json")


def create_app(state: ServerState) -> Starlette:
    core = state.core
    dispatcher = Dispatcher(core)
    server_cfg = core.config.server
    limits = ConnectionLimits(
        max_frame_bytes=server_cfg.max_frame_bytes,
        max_inflight=server_cfg.max_inflight_requests,
        queue_limit=server_cfg.outbound_queue_limit,
    )

    def authorized(headers: dict[str, str], query: dict[str, str], cookies: dict[str, str]) -> bool:
        presented = token_from(headers, query, cookies, cookie=cookie_name(state.port))
        return state.token is None or token_matches(presented, state.token)

    def origin_ok(origin: str | None) -> bool:
        return origin_allowed(origin, server_port=state.port, extra=server_cfg.allowed_origins)

    async def websocket_endpoint(ws: WebSocket) -> None:
        headers = {k.lower(): v for k, v in ws.headers.items()}
        if not origin_ok(headers.get("origin")):
            log.warning("refused WebSocket from origin %s", headers.get("origin"))
            await ws.close(code=CLOSE_POLICY_VIOLATION, reason="origin not allowed")
            return
        if not authorized(headers, dict(ws.query_params), dict(ws.cookies)):
            await ws.close(code=CLOSE_POLICY_VIOLATION, reason="unauthorized")
            return
        await ws.accept()
        connection = WsConnection(ws, core, dispatcher, limits)
        state.connections.add(connection)
        try:
            await connection.run()
        finally:
            state.connections.discard(connection)

    async def rpc_endpoint(request: Request) -> Response:
        headers = {k.lower(): v for k, v in request.headers.items()}
        if not origin_ok(headers.get("origin")):
            return _rpc_error(
                403, ProtocolError(ErrorCode.UNAUTHORIZED, "Origin not allowed.", source=ErrorSource.SERVER)
            )
        if not authorized(headers, dict(request.query_params), dict(request.cookies)):
            return _rpc_error(
                401,
                ProtocolError(
                    ErrorCode.UNAUTHORIZED,
                    "Missing or wrong bearer token (Authorization: Bearer <token>).",
                    source=ErrorSource.SERVER,
                ),
            )
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > limits.max_frame_bytes:
                return _rpc_error(
                    413,
                    ProtocolError(
                        ErrorCode.FRAME_TOO_LARGE,
                        f"Request body exceeds {limits.max_frame_bytes} bytes.",
                        source=ErrorSource.SERVER,
                    ),
                )
        try:
            items, is_batch = dispatcher.parse(bytes(body))
        except ProtocolError as exc:
            return _rpc_error(200, exc)
        answers = await asyncio.gather(
            *(
                asyncio.sleep(0, encode_error(item.id, item.error))
                if isinstance(item, Invalid)
                else dispatcher.call(item, None)
                for item in items
            )
        )
        responses = [a for a in answers if a is not None]
        if not responses:
            return Response(status_code=204)
        text = "[" + ",".join(responses) + "]" if is_batch else responses[0]
        return Response(text, media_type="application/json")

    async def healthz(_request: Request) -> Response:
        # `idle`: no client connected and no turn running, so a client may restart it (with its own settings).
        return JSONResponse({"status": "ok", "pid": os.getpid(), "idle": state.idle(), **await _statuses(core)})

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        await core.start()
        try:
            yield
        finally:
            await core.stop()

    return Starlette(
        routes=[
            WebSocketRoute("/ws", websocket_endpoint),
            Route("/rpc", rpc_endpoint, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            *web_routes(lambda: state.token, lambda: state.port),
        ],
        middleware=[Middleware(HostCheck)],
        lifespan=lifespan,
    )


async def _statuses(core: Core) -> dict[str, object]:
    """`subsystems` for `/healthz`: statuses only, as anyone on the machine may read it (the reasons, which name
    paths, servers and errors, go to authenticated callers through `health`). Empty when a check fails: clients
    find a live server by this answer, and a failing check must not make it look dead."""
    try:
        return {"subsystems": {s.name: s.status for s in (await core.health()).subsystems}}
    except Exception:
        log.exception("health check failed")
        return {}

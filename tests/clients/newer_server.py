"""A stand-in for a Cowork server newer than the client under test, on a real WebSocket in a thread of its own.

It answers the few methods a turn needs with valid protocol results, and after `turn/start` sends the frames it was
given: the samples' transcript, which holds event types the client knows, one it cannot know, a malformed one, and
frames of other kinds a newer server might send (an unknown notification method, a batch, a frame that is not JSON).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from websockets.asyncio.server import ServerConnection, serve

from cowork.clients.connection import ServerAddress
from cowork.protocol import (
    PROTOCOL_VERSION,
    Capabilities,
    ErrorCode,
    InitializeResult,
    OperationStatus,
    ProtocolError,
    PublicConfig,
    ServerInfo,
    SessionInfo,
    TurnStartResult,
    WireModel,
    error_response,
    notification,
    success_response,
)

from .samples import OP, transcript

SESSION = "ses_1"
NOW = datetime(2026, 1, 1, tzinfo=UTC)

Frames = Callable[[], list[str]]
"""What to send after `turn/start` is answered, as raw text frames."""


def newer_turn() -> list[str]:
    """The default turn: an unknown notification method, a frame that is not JSON, then the samples' transcript
    (the first two events batched in one frame, as JSON-RPC allows)."""
    events = [notification("session/event", params) for params in transcript(SESSION, OP)]
    return [
        json.dumps(notification("hologram/changed", {"shape": "cube"})),
        "this is not JSON",
        json.dumps(events[:2]),
        *(json.dumps(event) for event in events[2:]),
    ]


class NewerServer:
    """Serves one JSON-RPC WebSocket on 127.0.0.1 (any path, no token) until the `with` block ends."""

    def __init__(self, frames: Frames = newer_turn) -> None:
        self.frames = frames
        self.calls: list[str] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="newer-server", daemon=True)
        self._stop: asyncio.Future[None] | None = None
        self.port = 0

    @property
    def address(self) -> ServerAddress:
        return ServerAddress(f"http://127.0.0.1:{self.port}", None)

    def __enter__(self) -> NewerServer:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the test server did not start")
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set_result, None)
        self._thread.join(10)

    def _run(self) -> None:
        self._loop.run_until_complete(self._main())
        self._loop.close()

    async def _main(self) -> None:
        self._stop = self._loop.create_future()
        async with serve(self._connection, "127.0.0.1", 0) as server:
            self.port = next(iter(server.sockets)).getsockname()[1]
            self._ready.set()
            await self._stop

    async def _connection(self, ws: ServerConnection) -> None:
        async for raw in ws:
            message = json.loads(raw)
            method, id_ = message["method"], message.get("id")
            self.calls.append(method)
            result = _result(method)
            if result is None:
                error = ProtocolError(ErrorCode.METHOD_NOT_FOUND, f"{method} is not served here")
                await ws.send(json.dumps(error_response(id_, error)))
                continue
            await ws.send(json.dumps(success_response(id_, result)))
            if method == "turn/start":
                for frame in self.frames():
                    await ws.send(frame)


def _result(method: str) -> dict[str, Any] | None:
    session = SessionInfo(id=SESSION, title="", workspace="/project", created_at=NOW, updated_at=NOW, last_seq=0)
    results: dict[str, Any] = {
        "initialize": InitializeResult(
            protocol_version=PROTOCOL_VERSION + 1,
            server_info=ServerInfo(name="cowork", version="99.0"),
            capabilities=Capabilities(
                methods=[], event_types=[], tools=[], max_frame_bytes=1 << 20, max_inflight_requests=8
            ),
            config=PublicConfig(workspace="/project", home="/home"),
        ),
        "session/create": session,
        "session/get": {"session": session.wire(), "messages": [], "todos": [], "pending": {}},
        "turn/start": TurnStartResult(operation_id=OP, status=OperationStatus.RUNNING, duplicate=False),
        "ask/respond": {},
        "approval/respond": {},
    }
    result = results.get(method)
    return result.wire() if isinstance(result, WireModel) else result

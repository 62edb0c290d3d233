"""`RpcClient` against a server newer than itself: nothing the server sends stops the client reading."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from cowork.clients.connection import RpcClient
from cowork.protocol import (
    InitializeResult,
    OperationStatusChanged,
    ReceivedEvent,
    SessionEvent,
    SessionInfo,
    UnknownEvent,
    parse_event,
)

from .newer_server import NewerServer
from .samples import OP, UNKNOWN_TYPE, transcript

pytestmark = pytest.mark.anyio


async def test_the_client_keeps_working_after_everything_a_newer_server_sends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    received: list[ReceivedEvent] = []
    turn_over = asyncio.Event()

    def on_notification(method: str, params: dict[str, Any]) -> None:
        if method != "session/event":
            # A handler with a bug (or one that cannot cope with a newer notification) must not stop the reader.
            raise LookupError(f"no handler for {method}")
        event = parse_event(params)
        received.append(event)
        payload = event.payload
        if isinstance(payload, OperationStatusChanged) and payload.operation_id == OP and payload.status == "done":
            turn_over.set()

    with NewerServer() as server:
        client = await RpcClient.connect(server.address)
        client.on_notification = on_notification
        try:
            init = await client.request("initialize", None)
            assert isinstance(init, InitializeResult)
            await client.call("turn/start", {"sessionId": "ses_1", "text": "hi", "clientMessageId": "c1"})
            await asyncio.wait_for(turn_over.wait(), 20)
            # The reader is alive: a call made after all of it still gets its answer.
            session = await client.request("session/create", None)
            assert isinstance(session, SessionInfo) and not client.closed.is_set()
        finally:
            await client.close()

    sent = transcript()
    assert [e.seq for e in received] == [e["seq"] for e in sent]  # every event, in order, none lost
    unknown = [e for e in received if isinstance(e, UnknownEvent)]
    assert [(e.type, e.payload.problem is None) for e in unknown] == [(UNKNOWN_TYPE, True), ("tool_call", False)]
    assert unknown[0].payload.data == {"operationId": OP, "shape": "cube"}
    assert unknown[0].payload.operation_id == OP
    assert all(isinstance(e, SessionEvent) for e in received if e not in unknown)
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("not JSON" in line for line in logged)
    assert any("hologram/changed notification handler failed" in line for line in logged)

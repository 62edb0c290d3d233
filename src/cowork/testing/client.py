"""A test client: a real WebSocket JSON-RPC connection that collects every session event it receives."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from cowork.clients.connection import RpcClient, ServerAddress
from cowork.protocol import OperationStatus, OperationStatusChanged, SessionEvent

__all__ = ["EventClient"]


class EventClient:
    """Wraps `RpcClient`; `events` holds every `session/event` received, in arrival order."""

    def __init__(self, rpc: RpcClient) -> None:
        self.rpc = rpc
        self.events: list[SessionEvent] = []
        self.notifications: list[tuple[str, dict[str, Any]]] = []
        self._changed = asyncio.Event()
        rpc.on_notification = self._on_notification

    @classmethod
    async def connect(cls, address: ServerAddress, *, origin: str | None = None) -> EventClient:
        return cls(await RpcClient.connect(address, origin=origin))

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        self.notifications.append((method, params))
        if method == "session/event":
            self.events.append(SessionEvent.model_validate(params))
            self._changed.set()

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return await self.rpc.call(method, params)

    async def wait_for(self, predicate: Callable[[list[SessionEvent]], bool], within: float = 20.0) -> None:
        async def wait() -> None:
            while not predicate(self.events):
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(wait(), within)

    async def wait_turn_end(self, operation_id: str, within: float = 20.0) -> OperationStatus:
        """Wait for the operation's terminal `operation_status` event and return that status."""

        def ended(events: list[SessionEvent]) -> bool:
            return any(_terminal_status(e, operation_id) is not None for e in events)

        await self.wait_for(ended, within)
        for event in self.events:
            status = _terminal_status(event, operation_id)
            if status is not None:
                return status
        raise AssertionError("unreachable")

    async def wait_mcp_server(self, name: str, status: str = "running", within: float = 30.0) -> dict[str, Any]:
        """Poll `mcp/list` until the MCP server `name` has `status`; return its entry."""

        async def poll() -> dict[str, Any]:
            while True:
                servers = {s["name"]: s for s in (await self.call("mcp/list"))["servers"]}
                if servers.get(name, {}).get("status") == status:
                    return servers[name]
                await asyncio.sleep(0.1)

        return await asyncio.wait_for(poll(), within)

    def of_session(self, session_id: str) -> list[SessionEvent]:
        return [e for e in self.events if e.session_id == session_id]

    async def close(self) -> None:
        await self.rpc.close()


def _terminal_status(event: SessionEvent, operation_id: str) -> OperationStatus | None:
    payload = event.payload
    if (
        isinstance(payload, OperationStatusChanged)
        and payload.operation_id == operation_id
        and payload.status.has_stopped
    ):
        return payload.status
    return None

"""The connection a request came in on, as handlers see it."""

from __future__ import annotations

from typing import Protocol

from cowork.protocol import ErrorCode, ErrorSource, ProtocolError

__all__ = ["Peer", "needs_websocket"]


class Peer(Protocol):
    """The connection a request came in on, when it can receive notifications (a WebSocket)."""

    async def subscribe(self, session_id: str, after_seq: int | None) -> int: ...

    def unsubscribe(self, session_id: str) -> bool: ...


def needs_websocket(peer: Peer | None, method: str) -> Peer:
    """The peer, for a method that streams notifications to it.

    Raises:
        ProtocolError: `invalid_request` when the request came over `POST /rpc` (no peer).
    """
    if peer is None:
        raise ProtocolError(
            ErrorCode.INVALID_REQUEST,
            f"{method} needs a WebSocket connection (/ws); POST /rpc cannot receive notifications.",
            source=ErrorSource.SERVER,
        )
    return peer

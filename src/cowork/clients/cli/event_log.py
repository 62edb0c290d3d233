"""A session's whole event log over `events/replay`, page by page, for commands that look back (`/rewind`,
`/source`)."""

from __future__ import annotations

from cowork.clients.connection import RpcClient
from cowork.protocol import EventsReplayParams, ReceivedPayload, parse_event

__all__ = ["session_payloads"]


async def session_payloads(rpc: RpcClient, session_id: str) -> list[ReceivedPayload]:
    """Every event's payload, oldest first."""
    payloads: list[ReceivedPayload] = []
    after = 0
    while True:
        page = await rpc.call("events/replay", EventsReplayParams(session_id=session_id, after_seq=after, limit=10_000))
        events = [parse_event(raw) for raw in page.get("events") or []]
        payloads += [event.payload for event in events]
        if not page.get("hasMore") or not events:
            return payloads
        after = events[-1].seq

"""The clients' reading of `session/event`: `parse_event` never raises, so a newer server cannot stop a client.

Protocol evolution is additive (docs/protocol.md): a server newer than its client may send an event type the client
has never heard of. Clients dispatch on `ReceivedPayload` (every payload class plus `UnknownPayload`) with `match` and
`assert_never`, so each one shows such an event neutrally instead of crashing or silently dropping it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeAlias

from pydantic import ValidationError

from ._events import EVENT_PAYLOADS, EventPayload, SessionEvent

__all__ = ["ReceivedEvent", "ReceivedPayload", "UnknownEvent", "UnknownPayload", "parse_event"]


@dataclass(frozen=True)
class UnknownPayload:
    """The payload of an event this client cannot read: a type newer than its protocol, or a malformed known one."""

    type: str
    data: Mapping[str, Any] = field(default_factory=dict)
    """The payload as it came over the wire (camelCase keys)."""
    problem: str | None = None
    """None for a type this client does not know; why it did not validate for a known type."""

    @property
    def operation_id(self) -> str | None:
        """The operation it belongs to, when the raw payload says (so clients can filter it like the others)."""
        value = self.data.get("operationId")
        return value if isinstance(value, str) else None


@dataclass(frozen=True)
class UnknownEvent:
    """A `session/event` `parse_event` could not read as a `SessionEvent`; its envelope fields, as far as present."""

    session_id: str
    seq: int
    """0 when the envelope had no usable `seq` (such an event cannot be placed in the log)."""
    ts: datetime | None
    type: str
    payload: UnknownPayload


ReceivedEvent: TypeAlias = SessionEvent | UnknownEvent
"""What a client gets from `parse_event`."""

ReceivedPayload: TypeAlias = EventPayload | UnknownPayload
"""What a client dispatches on: every payload class, plus the neutral one for what it cannot read."""


def parse_event(params: Mapping[str, Any]) -> ReceivedEvent:
    """Read a `session/event` notification's params (or one `events/replay` entry); never raises.

    Protocol evolution is additive, so a newer server may send an event type this client does not know: that
    becomes an `UnknownEvent` (its type and raw payload) for the client to show neutrally. A known type whose
    payload does not validate (a server bug; fields are only ever added) becomes an `UnknownEvent` too, with
    `payload.problem` saying why, rather than an exception that would stop the client reading.

    Args:
        params: the notification's params as decoded from JSON.

    Returns:
        A `SessionEvent`, or an `UnknownEvent` for anything it cannot read.
    """
    try:
        return SessionEvent.model_validate(params)
    except ValidationError as exc:
        error = exc
    kind = params.get("type")
    kind = kind if isinstance(kind, str) else "?"
    problem = None if kind not in EVENT_PAYLOADS else _first_error(error)
    raw_payload = params.get("payload")
    seq = params.get("seq")
    return UnknownEvent(
        session_id=str(params.get("sessionId") or ""),
        seq=seq if isinstance(seq, int) and not isinstance(seq, bool) and seq > 0 else 0,
        ts=_timestamp(params.get("ts")),
        type=kind,
        payload=UnknownPayload(
            type=kind, data=dict(raw_payload) if isinstance(raw_payload, Mapping) else {}, problem=problem
        ),
    )


def _first_error(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f" (+{error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}" if where else f"{first['msg']}{more}"


def _timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None

"""Whole-transcript assertions: a session's events as `(type, key fields)` with ids made stable, and typed payloads.

A test compares the entire ordered list (as pydantic-ai's tests compare entire message histories), so an event
added, dropped or reordered fails it. Consecutive stream chunks of one step show as one entry: where a stream is
cut into events depends on how its bytes arrived (the coalescer's own tests check the cutting). Ids the core generates (`op_…`, `req_…`, `msg_…`, `in_…`) become `op1`,
`req1`, … in order of first appearance, and fields at their default value are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TypeVar

from cowork.protocol import EventPayload, SessionEvent

__all__ = ["KEY_FIELDS", "Entry", "payloads", "transcript"]

P = TypeVar("P", bound=EventPayload)
Entry = tuple[str, dict[str, Any]]

KEY_FIELDS: dict[str, tuple[str, ...]] = {
    "user_message": ("operation_id", "text", "steer"),
    "operation_status": ("operation_id", "status", "code", "parent_operation_id"),
    "model_stream_chunk": ("operation_id", "step", "text"),
    "reasoning": ("operation_id", "step", "text"),
    "assistant_message": ("operation_id", "step", "text"),
    "tool_call": ("operation_id", "step", "name", "arguments", "side_effects", "needs_approval"),
    "tool_result": ("operation_id", "step", "name", "is_error", "content"),
    "usage": ("operation_id", "step", "provider", "model"),
    "log": ("operation_id", "text"),
    "error": ("operation_id", "code"),
    "approval_requested": ("request_id", "operation_id", "name", "arguments", "rerun", "dangerous"),
    "approval_resolved": ("request_id", "operation_id", "approved", "message"),
    "ask": ("request_id", "operation_id", "question", "options", "kind"),
    "ask_resolved": ("request_id", "operation_id", "answer"),
    "guardrail": ("operation_id", "code", "request_id"),
    "agent_spawned": ("operation_id", "child_operation_id", "agent_type", "task"),
    "tool_interrupted": ("operation_id", "name", "action"),
    "route": ("operation_id", "tier", "code"),
}
"""The fields a transcript shows per event type (others show every field); free text such as reasons and
estimates is left out where it is not what a runtime test is about."""

_GENERATED_ID = re.compile(r"^(op|req|msg|in)_[0-9a-f]{20}$")


def payloads(events: Iterable[SessionEvent], kind: type[P]) -> list[P]:
    """The payloads of the events of one type, typed.

    Args:
        events: a session's events, in order.
        kind: the payload class (`ToolCall`, `ApprovalRequested`, …).

    Returns:
        Those payloads, in order.
    """
    return [e.payload for e in events if isinstance(e.payload, kind)]


def transcript(events: Iterable[SessionEvent], *, skip: Iterable[str] = ()) -> list[Entry]:
    """The ordered `(type, key fields)` of every event, with generated ids replaced by stable names.

    Args:
        events: a session's events, in order.
        skip: event types to leave out (e.g. `usage` where costs are beside the point).
    """
    names: dict[str, str] = {}
    counts: dict[str, int] = {}

    def stable(value: Any) -> Any:
        if isinstance(value, str) and (match := _GENERATED_ID.match(value)):
            if value not in names:
                prefix = match.group(1)
                counts[prefix] = counts.get(prefix, 0) + 1
                names[value] = f"{prefix}{counts[prefix]}"
            return names[value]
        if isinstance(value, dict):
            return {k: stable(v) for k, v in value.items()}
        if isinstance(value, list):
            return [stable(v) for v in value]
        return value

    skipped = set(skip)
    entries: list[Entry] = []
    for event in events:
        if event.type in skipped:
            continue
        fields = event.payload.model_dump(mode="json", exclude_defaults=True)
        keep = KEY_FIELDS.get(event.type)
        shown = stable({k: v for k, v in fields.items() if keep is None or k in keep})
        if event.type == "model_stream_chunk" and entries and _same_stream(entries[-1], shown):
            previous = entries[-1][1]
            entries[-1] = (event.type, {**previous, "text": previous.get("text", "") + shown.get("text", "")})
            continue
        entries.append((event.type, shown))
    return entries


def _same_stream(entry: Entry, chunk: dict[str, Any]) -> bool:
    """Whether `chunk` continues the stream chunk `entry` (how a stream is cut into events depends on how its
    bytes arrived, which a transcript leaves out: consecutive chunks of one step show as one)."""
    kind, fields = entry
    if kind != "model_stream_chunk":
        return False
    return {k: v for k, v in fields.items() if k != "text"} == {k: v for k, v in chunk.items() if k != "text"}

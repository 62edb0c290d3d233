"""Rebuilding an operation's state from the store: after a restart, or for an operation not in memory."""

from __future__ import annotations

import json
import time
from collections import deque
from typing import TYPE_CHECKING

from cowork.protocol import OperationStatus, ToolCallStatus
from cowork.store import Connection, Database, MessageRow, OperationRow, ToolCallRow, repos

from ._history import load_message, repair_with_positions, summary_message
from ._state import LedgerEntry, Limits, OperationState, Steer

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

__all__ = ["Thread", "load_operation_state", "read_thread"]


class Thread:
    """A thread's model-facing history as stored: a summary of the compressed part, then the messages after it."""

    def __init__(self, messages: list[ModelMessage], positions: list[int], rows: list[MessageRow], next_position: int):
        self.messages = messages
        self.positions = positions
        self.rows = rows
        self.next_position = next_position


def read_thread(conn: Connection, thread_id: str) -> Thread:
    summary = repos.summaries.latest(conn, thread_id)
    after = summary.up_to_position if summary else -1
    rows = repos.messages.for_thread(conn, thread_id, after_position=after)
    messages: list[ModelMessage] = [load_message(r.model_message) for r in rows]
    positions = [r.position for r in rows]
    if summary is not None:
        messages.insert(0, summary_message(summary.summary))
        positions.insert(0, -1)
    # Superseded messages (a retried answer) are not read, but their positions are taken.
    next_position = max(repos.messages.next_position(conn, thread_id), after + 1)
    return Thread(messages, positions, rows, next_position)


def _entry(row: ToolCallRow) -> LedgerEntry:
    return LedgerEntry(
        tool_call_id=row.tool_call_id,
        step=row.step,
        name=row.name,
        arguments=json.loads(row.arguments),
        side_effects=row.side_effects,
        status=ToolCallStatus(row.status),
        result=row.result,
        is_error=row.is_error,
        meta=json.loads(row.meta) if row.meta else {},
    )


async def load_operation_state(db: Database, op: OperationRow, limits: Limits, *, depth: int = 0) -> OperationState:
    """The state of a stored operation, ready for the runner to continue from its last persisted step."""

    def read(conn: Connection) -> tuple[Thread, list[ToolCallRow], list[Steer], dict[str, str], str | None]:
        thread = read_thread(conn, op.thread_id or op.session_id)
        root: str | None = None
        parent_id = op.parent_operation_id
        while parent_id is not None:  # a sub-agent's spend counts towards the request that started it all
            root = parent_id
            parent = repos.operations.get(conn, parent_id)
            parent_id = parent.parent_operation_id if parent is not None else None
        ledger = repos.tool_calls.for_operation(conn, op.id)
        steering = [Steer(r.id, r.text, r.client_message_id) for r in repos.inputs.queued(conn, op.id)]
        requests = {
            r.tool_call_id: r.id for r in repos.human_requests.pending(conn, operation_id=op.id) if r.tool_call_id
        }
        return thread, ledger, steering, requests, root

    thread, ledger, steering, requests, root = await db.read(read)
    latest = [row for row in ledger if row.step == op.step_count]
    trailing = thread.rows[-1] if thread.rows else None
    owns_trailing_calls = (
        trailing is not None and trailing.kind == "response" and trailing.operation_id == op.id and bool(latest)
    )
    if owns_trailing_calls:
        # The ledger, not a repair, decides what happens to this operation's own open calls.
        messages, positions = repair_with_positions(thread.messages[:-1], thread.positions[:-1])
        messages.append(thread.messages[-1])
        positions.append(thread.positions[-1])
    else:
        messages, positions = repair_with_positions(thread.messages, thread.positions)
        latest = []
    calls = {}
    for row in latest:
        entry = _entry(row)
        entry.request_id = requests.get(row.tool_call_id)
        calls[entry.tool_call_id] = entry
    finished = [row for row in ledger if row.status == ToolCallStatus.FINISHED]
    step_limit = limits.max_steps * (1 + op.step_count // limits.max_steps)
    return OperationState(
        id=op.id,
        session_id=op.session_id,
        thread_id=op.thread_id or op.session_id,
        origin=op.origin,
        status=OperationStatus(op.status),
        step=op.step_count,
        step_limit=step_limit,
        messages=messages,
        positions=positions,
        next_position=thread.next_position,
        checkin_at=time.monotonic() + limits.checkin_seconds,
        parent_id=op.parent_operation_id,
        agent_type=op.agent_type,
        depth=depth,
        calls=calls,
        steering=steering,
        outcomes=deque((bool(r.is_error) for r in finished), maxlen=100),
        signatures=[r.name + json.dumps(json.loads(r.arguments), sort_keys=True, default=str) for r in finished],
        summary=op.summary,
        root_id=root,
    )

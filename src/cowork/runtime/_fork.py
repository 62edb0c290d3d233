"""`session/fork`: a new session holding another's conversation up to one of the user's messages.

What is copied: the event log before that message (so every client shows the same conversation; without the
spend events, which stay the source's like its usage records), the main
thread's model-facing messages before it (so the model remembers it) with the context summaries made of them,
the session's settings, its todo list as the last copied `todos` event left it, and the checkpoints of the turns it
holds (so `/undo` and `/rewind` reach their changes). What is not: tool-call records, the files a session changed
(`session/diff` starts afresh) and the outputs kept for it; sub-agents' own threads.
The copy refers to the same operation ids in its events (they are the source's history); the new session's own
turns get new ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import anyio.to_thread

from cowork.protocol import (
    ErrorCode,
    ErrorSource,
    OperationStatus,
    ProtocolError,
    SessionForkParams,
    SessionForkResult,
)
from cowork.sessions import SessionService, new_id, session_not_found
from cowork.store import Connection, EventRow, MessageRow, OperationRow, SessionRow, repos

from ._operations import Operations

__all__ = ["fork_session"]

_PAGE = 10_000
_SPEND_EVENTS = frozenset(("usage", "budget_warning"))
"""Left out of the copy: the spend they report stays the source's (the usage ledger is not copied either)."""


@dataclass(frozen=True, slots=True)
class _Source:
    session: SessionRow
    events: list[EventRow]
    messages: list[MessageRow]
    operations: list[OperationRow]


def _read(conn: Connection, session_id: str) -> _Source | None:
    session = repos.sessions.get(conn, session_id)
    if session is None:
        return None
    events: list[EventRow] = []
    while True:
        page = repos.events.after(conn, session_id, events[-1].seq if events else 0, _PAGE)
        events += page
        if len(page) < _PAGE:
            break
    messages = repos.messages.for_session(conn, session_id)
    operations = repos.operations.for_session(conn, session_id)
    return _Source(session, events, messages, operations)


@dataclass(frozen=True, slots=True)
class _Turn:
    seq: int
    operation_id: str
    message_id: str
    text: str


def _turns(events: list[EventRow]) -> list[_Turn]:
    """The user's messages that started a turn (not those steering one), in order."""
    turns = []
    for event in events:
        if event.type != "user_message":
            continue
        payload = json.loads(event.payload)
        if not payload.get("steer"):
            turns.append(_Turn(event.seq, payload["operationId"], payload["messageId"], payload["text"]))
    return turns


def _cut(source: _Source, before_message: int | None) -> tuple[_Turn | None, int]:
    """The message the fork is cut before (None: nothing is left out) and how many of the user's messages it holds.

    Raises:
        ProtocolError: `invalid_params` for a message number the session does not have.
    """
    turns = _turns(source.events)
    if before_message is not None:
        if before_message > len(turns):
            raise ProtocolError(
                ErrorCode.INVALID_PARAMS,
                f"This session has {len(turns)} message(s) of yours; fork before one of 1 to {len(turns)}, or leave "
                "the number out to fork all of it.",
                source=ErrorSource.SESSION,
            )
        return turns[before_message - 1], before_message - 1
    active = {
        op.id for op in source.operations if not OperationStatus(op.status).is_final and op.parent_operation_id is None
    }
    for index, turn in enumerate(turns):
        if turn.operation_id in active:  # a turn under way (or waiting for an answer) is left out
            return turn, index
    return None, len(turns)


def turn_numbers(turns: list[str], operations: list[OperationRow]) -> dict[str, int]:
    """Each operation's turn number (1: the user's first message that started a turn; `turns` are their operation
    ids in order), sub-agents' by their root operation, a retry's ("try harder") by the turn it retried."""
    number = {op_id: index for index, op_id in enumerate(turns, start=1)}
    parent = {op.id: op.parent_operation_id for op in operations}
    retried = {op.id: op.ask_id for op in operations if op.ask_id}  # a retry answers the turn it retried
    out = dict(number)
    for op in operations:
        root, seen = op.id, set()
        while parent.get(root) and root not in seen:
            seen.add(root)
            root = parent[root] or root
        root = root if root in number else retried.get(root) or root
        if root in number:
            out[op.id] = number[root]
    return out


def _without_titles(events: Iterable[EventRow]) -> list[EventRow]:
    """The events with the source's titles taken out of `session_updated` (the fork has its own; a client replaying
    the log applies each); one left with nothing else is dropped."""
    out = []
    for event in events:
        if event.type == "session_updated":
            payload = json.loads(event.payload)
            if "title" in payload:
                del payload["title"]
                if not payload:
                    continue
                event = replace(event, payload=json.dumps(payload, separators=(",", ":")))
        out.append(event)
    return out


def _renumbered(events: list[EventRow]) -> list[EventRow]:
    """Numbered 1, 2, … without gaps (a gap means "dropped, replay it" to a client)."""
    return [replace(event, seq=index) for index, event in enumerate(events, start=1)]


def _plan(source: _Source, before_message: int | None) -> tuple[_Turn | None, int, list[EventRow], list[MessageRow]]:
    """Where the fork is cut, how many of the user's messages it holds, and the events and messages it copies."""
    cut, held = _cut(source, before_message)
    seq_limit = cut.seq if cut is not None else source.events[-1].seq + 1 if source.events else 1
    events = _renumbered(_without_titles(e for e in source.events if e.seq < seq_limit and e.type not in _SPEND_EVENTS))
    position_limit = None
    if cut is not None:
        position_limit = next((m.position for m in source.messages if m.id == cut.message_id), None)
        if position_limit is None:  # its message was never stored (a turn refused at once): keep its turn's out
            position_limit = min(
                (m.position for m in source.messages if m.operation_id == cut.operation_id), default=None
            )
    messages = [m for m in source.messages if position_limit is None or m.position < position_limit]
    return cut, held, events, messages


async def fork_session(ops: Operations, sessions: SessionService, params: SessionForkParams) -> SessionForkResult:
    """Copy the session up to the cut into a new one (one write transaction).

    Raises:
        ProtocolError: `session_not_found`; `invalid_params` (a message number the session does not have).
    """
    db = ops.deps.db
    await ops.deps.journal.flush()  # what the session logged so far is in the store
    source = await db.read(lambda conn: _read(conn, params.session_id))
    if source is None:
        raise session_not_found(params.session_id)
    # (A long session's log takes a while to go through: not on the event loop.)
    cut, held, events, messages = await anyio.to_thread.run_sync(_plan, source, params.before_message)
    now = datetime.now(UTC)
    todos = "[]"
    for event in events:
        if event.type == "todos":
            todos = json.dumps(json.loads(event.payload).get("todos", []))
    title = source.session.title if source.session.title.endswith("(fork)") else f"{source.session.title} (fork)"
    row = replace(
        source.session,
        id=new_id("ses"),
        title=title,
        created_at=now,
        updated_at=now,
        last_seq=events[-1].seq if events else 0,
        todos=todos,
    )
    last_kept = max((m.position for m in messages), default=-1)

    def write(conn: Connection) -> None:
        repos.sessions.insert(conn, row)
        repos.events.insert_many(conn, [replace(e, session_id=row.id) for e in events])
        for message in messages:
            repos.messages.insert(conn, replace(message, id=new_id("msg"), session_id=row.id, thread_id=row.id))
        for summary in repos.summaries.for_thread(conn, source.session.id):
            if summary.up_to_position <= last_kept:
                repos.summaries.insert(conn, replace(summary, id=new_id("sum"), thread_id=row.id))
        # The checkpoints of the turns kept, so /undo and /rewind in the fork reach them too.
        numbers = turn_numbers([t.operation_id for t in _turns(source.events)], source.operations)
        for checkpoint in reversed(repos.checkpoints.for_session(conn, source.session.id)):
            if numbers.get(checkpoint.operation_id, held + 1) <= held:
                repos.checkpoints.insert(conn, replace(checkpoint, session_id=row.id))

    await db.write(write)
    return SessionForkResult(session=sessions.info(row), message=cut.text if cut is not None else None, messages=held)

"""`checkpoint/list`, `session/undo` and `session/rewind`: taking back what a session's tool calls changed.

Both restore from the checkpoints (`cowork.sessions.Checkpoints`) and show first what they would do: without
`apply` nothing is touched and the result is the diff of each file, from what it holds now to what it would hold.
A file changed since Cowork last changed it (by the user, in an editor or another program) is a conflict: restoring
over it needs `force`. Undone checkpoints stay on record (`undone`), so the next `/undo` goes one change further back.

Rewinding the conversation is a fork before that message (`session/fork`): the session being rewound stays as
it is, so the branch left behind is never lost. After files are restored, the session's model is told on its next
turn (a note in its history), so it does not go on from files it remembers differently.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import anyio.to_thread

from cowork.protocol import (
    CheckpointInfo,
    CheckpointListResult,
    ErrorCode,
    ErrorSource,
    LogLine,
    ProtocolError,
    SessionForkParams,
    SessionRestoreResult,
    SessionRewindParams,
    SessionUndoParams,
)
from cowork.sessions import Checkpoints, RestorePlan, SessionService, new_id
from cowork.store import CheckpointRow, Connection, MessageRow, OperationRow, repos

from ._fork import fork_session, turn_numbers
from ._history import dump_message, user_request
from ._operations import Operations
from ._views import busy

__all__ = ["list_checkpoints", "rewind", "undo"]


def _read(conn: Connection, session_id: str) -> tuple[list[CheckpointRow], list[str], list[OperationRow]]:
    """The session's checkpoints (newest first), the operation id of each turn the user started (in order), and its
    operations."""
    rows = repos.checkpoints.for_session(conn, session_id)
    turns = []
    for event in repos.events.of_type(conn, session_id, "user_message"):
        payload = json.loads(event.payload)
        if not payload.get("steer"):
            turns.append(payload["operationId"])
    operations = repos.operations.for_session(conn, session_id)
    known = {op.id for op in operations}
    for op_id in {row.operation_id for row in rows}:  # a fork's checkpoints name the source's operations
        while op_id and op_id not in known:
            found = repos.operations.get(conn, op_id)
            if found is None:
                break
            operations.append(found)
            known.add(found.id)
            op_id = found.parent_operation_id or ""
    return rows, turns, operations


def _info(row: CheckpointRow, numbers: dict[str, int]) -> CheckpointInfo:
    return CheckpointInfo(
        id=row.id,
        operation_id=row.operation_id,
        tool_call_id=row.tool_call_id,
        tool=row.tool,
        message=numbers.get(row.operation_id),
        files=[f.path for f in row.files],
        created_at=row.created_at,
        undone=row.undone_at is not None,
    )


async def list_checkpoints(ops: Operations, sessions: SessionService, session_id: str) -> CheckpointListResult:
    """Raises: ProtocolError `session_not_found`."""
    await sessions.get_row(session_id)
    rows, turns, operations = await ops.deps.db.read(lambda conn: _read(conn, session_id))
    numbers = turn_numbers(turns, operations)
    return CheckpointListResult(checkpoints=[_info(row, numbers) for row in rows])


def _checkpoints(ops: Operations) -> Checkpoints:
    checkpoints = ops.deps.checkpoints
    if checkpoints is None:
        raise ProtocolError(ErrorCode.NOT_SUPPORTED, "Checkpoints are not kept by this server.")
    return checkpoints


async def undo(ops: Operations, sessions: SessionService, params: SessionUndoParams) -> SessionRestoreResult:
    """Take back the session's last change not taken back yet (a preview unless `apply`).

    Raises:
        ProtocolError: `session_not_found`; `nothing_to_undo`; `busy` (applying while a turn is under way);
            `files_changed` (applying over files changed outside Cowork that `overwrite` does not name, without
            `force`).
    """
    session = await sessions.get_row(params.session_id)
    rows, turns, operations = await ops.deps.db.read(lambda conn: _read(conn, params.session_id))
    left = [r for r in rows if r.undone_at is None and r.workspace == session.workspace]
    if not left:
        raise ProtocolError(
            ErrorCode.NOTHING_TO_UNDO,
            "Nothing to undo: this session has no change to its folder's files left to take back.",
            source=ErrorSource.SESSION,
        )
    numbers = turn_numbers(turns, operations)
    return await _restore(ops, params, session.workspace, left[:1], numbers)


async def rewind(ops: Operations, sessions: SessionService, params: SessionRewindParams) -> SessionRestoreResult:
    """Go back to before one of the user's messages: files, conversation or both (a preview unless `apply`).

    Raises:
        ProtocolError: `session_not_found`; `invalid_params` (no such message); `busy`; `files_changed`.
    """
    session = await sessions.get_row(params.session_id)
    rows, turns, operations = await ops.deps.db.read(lambda conn: _read(conn, params.session_id))
    if params.before_message > len(turns):
        raise ProtocolError(
            ErrorCode.INVALID_PARAMS,
            f"This session has {len(turns)} message(s) of yours; rewind to before one of 1 to {len(turns)}."
            if turns
            else "This session has no message of yours yet: there is nothing to rewind.",
            source=ErrorSource.SESSION,
        )
    numbers = turn_numbers(turns, operations)
    chosen = []
    if params.restore in ("files", "both"):
        chosen = [
            r
            for r in rows
            if r.undone_at is None
            and r.workspace == session.workspace
            and numbers.get(r.operation_id, 0) >= params.before_message
        ]
    return await _restore(ops, params, session.workspace, chosen, numbers, sessions=sessions)


async def _restore(
    ops: Operations,
    params: SessionUndoParams,
    workspace: str,
    rows: list[CheckpointRow],
    numbers: dict[str, int],
    *,
    sessions: SessionService | None = None,
) -> SessionRestoreResult:
    checkpoints = _checkpoints(ops)
    plan = await checkpoints.plan(Path(workspace), rows)
    infos = [_info(row, numbers) for row in rows]
    if not params.apply:
        changes = await anyio.to_thread.run_sync(plan.changes)
        return SessionRestoreResult(
            applied=False, files=changes, conflicts=plan.conflicts, skipped=plan.skipped, checkpoints=infos
        )
    session_id = params.session_id
    async with ops.session_lock(session_id):
        active = ops.active_operation(session_id)
        if active is not None:
            raise busy("A turn is under way in this session (running or waiting for an answer); end it first.", active)
        plan = await checkpoints.plan(Path(workspace), rows)  # again: the files may have changed since the preview
        conflicts = plan.conflicts
        accepted = set(params.overwrite)
        unseen = [] if params.force else [path for path in conflicts if path not in accepted]
        if unseen:
            shown = ", ".join(unseen[:5]) + (f" and {len(unseen) - 5} more" if len(unseen) > 5 else "")
            raise ProtocolError(
                ErrorCode.FILES_CHANGED,
                f"{len(unseen)} file(s) changed since Cowork last changed them ({shown}): restoring would overwrite "
                "that. Look at the preview again, then confirm overwriting them.",
                source=ErrorSource.SESSION,
                details={"conflicts": conflicts},
            )
        fork = None
        if isinstance(params, SessionRewindParams) and params.restore in ("conversation", "both"):
            # First: a fork that fails leaves the files as they are.
            assert sessions is not None
            fork = await fork_session(
                ops, sessions, SessionForkParams(session_id=session_id, before_message=params.before_message)
            )
        changes = await anyio.to_thread.run_sync(plan.changes)
        restored = await anyio.to_thread.run_sync(plan.apply)
        if rows:
            await _record(ops, session_id, plan, restored)
    return SessionRestoreResult(
        applied=True,
        files=changes,
        conflicts=conflicts,
        skipped=plan.skipped,
        checkpoints=[info.model_copy(update={"undone": True}) for info in infos],
        fork=fork,
    )


async def _record(ops: Operations, session_id: str, plan: RestorePlan, restored: list[str]) -> None:
    """Mark the checkpoints undone, tell the session's model on its next turn, and log it for every client."""
    now = datetime.now(UTC)
    ids = [row.id for row in plan.checkpoints]
    calls = len(plan.checkpoints)
    files = ", ".join(restored[:10]) + (f" and {len(restored) - 10} more" if len(restored) > 10 else "")
    what = f"{calls} change(s)" if calls != 1 else f"the last change ({plan.checkpoints[0].tool})"
    verb = "is" if len(restored) == 1 else "are"
    text = f"Took back {what}: " + (f"{files} {verb} as before." if restored else "the files were already as before.")
    note = (
        f"[Cowork: the user took back {what} made in this conversation to the folder's files"
        + (f"; restored: {files}" if restored else "")
        + ". Those files now hold what they held before; read them again before relying on what you remember.]"
    )
    operation_id = plan.checkpoints[0].operation_id

    def mutate(conn: Connection) -> None:
        repos.checkpoints.mark_undone(conn, ids, now=now)
        if not restored:
            return
        position = repos.messages.next_position(conn, session_id)
        message = user_request(note, now)
        repos.messages.insert(
            conn,
            MessageRow(
                id=new_id("msg"),
                session_id=session_id,
                operation_id=operation_id,
                position=position,
                kind="request",
                text="",
                model_message=dump_message(message),
                created_at=now,
                thread_id=session_id,
            ),
        )

    await ops.deps.journal.append(session_id, LogLine(text=text), mutate=mutate)
    ops.threads.drop(session_id)

"""An operation's life outside its own loop: resume, cancel, wait, read; recovery at start-up, shutdown at exit."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
from datetime import UTC, datetime
from pathlib import Path

import anyio.to_thread

from cowork.protocol import (
    AskRespondParams,
    ErrorCode,
    ErrorSource,
    OperationInfo,
    OperationStatus,
    OperationStatusChanged,
    PendingRequests,
    ProtocolError,
    SessionDeleteResult,
    ToolCallStatus,
    ToolInterrupted,
)
from cowork.sandbox import EarlierRun, recover_runs, runs_directory
from cowork.sessions import SessionService, session_not_found
from cowork.store import Connection, HumanRequestRow, OperationRow, ToolCallRow, repos

from ._answers import Answers
from ._operations import Operations
from ._state import OperationState
from ._views import busy, operation_info, operation_not_found, pending_requests

__all__ = ["Lifecycle"]

log = logging.getLogger(__name__)

S = OperationStatus
C = ToolCallStatus


class Lifecycle:
    """`operation/resume`, `turn/cancel`, `operation/get`, pending requests; `recover` and `shutdown`."""

    def __init__(self, operations: Operations, answers: Answers, sessions: SessionService) -> None:
        self._ops = operations
        self._answers = answers
        self._sessions = sessions

    async def resume(self, operation_id: str) -> OperationStatus:
        """Continue an interrupted or guardrail-paused operation.

        Raises:
            ProtocolError: `operation_not_found`; `not_resumable` (ended, superseded, or waiting for an approval).
        """
        ops = self._ops
        async with ops.lock(operation_id):
            handle = await ops.load(operation_id)
            state = handle.state
            if handle.running or state.status == S.RUNNING:
                return S.RUNNING
            if state.status.is_final:
                raise ProtocolError(
                    ErrorCode.NOT_RESUMABLE,
                    f"Operation {operation_id} has ended ({state.status}).",
                    source=ErrorSource.RUNTIME,
                )
            if state.status == S.WAITING_FOR_HUMAN:
                pending = await ops.deps.db.read(
                    lambda conn: repos.human_requests.pending(conn, operation_id=operation_id)
                )
                guardrails = [r for r in pending if r.kind == "guardrail"]
                if not guardrails or len(guardrails) != len(pending):
                    raise ProtocolError(
                        ErrorCode.NOT_RESUMABLE,
                        f"Operation {operation_id} is waiting for an answer; respond to its pending requests.",
                        source=ErrorSource.RUNTIME,
                        details={"requestIds": [r.id for r in pending]},
                    )
            else:
                guardrails = []
        for request in guardrails:
            await self._answers.respond_ask(AskRespondParams(request_id=request.id, answer="continue"))
        if guardrails:
            return S.RUNNING
        async with ops.lock(operation_id):
            if state.parent_id is None and not await self._is_latest_turn(state):
                ops.forget(operation_id)
                raise ProtocolError(
                    ErrorCode.NOT_RESUMABLE,
                    f"Operation {operation_id} was superseded by a later turn in its session.",
                    source=ErrorSource.RUNTIME,
                )
            for entry in state.calls.values():
                if entry.status == C.INTERRUPTED:
                    ops.deps.journal.emit(
                        state.session_id,
                        ToolInterrupted(
                            operation_id=state.id,
                            step=entry.step,
                            tool_call_id=entry.tool_call_id,
                            name=entry.name,
                            side_effects=entry.side_effects,
                            action="ask" if entry.side_effects else "rerun",
                        ),
                    )
            ops.launch(handle)
        return S.RUNNING

    async def _is_latest_turn(self, state: OperationState) -> bool:
        latest = await self._ops.deps.db.read(
            lambda conn: repos.operations.latest_active(
                conn, state.session_id, [S.RUNNING, S.WAITING_FOR_HUMAN, S.INTERRUPTED, S.DONE, S.ERROR, S.CANCELLED]
            )
        )
        return latest is None or latest.id == state.id

    async def cancel(self, session_id: str, operation_id: str | None = None) -> bool:
        """Cancel the session's active turn (or the given operation of it); False when nothing was active.

        Raises:
            ProtocolError: `session_not_found`; `operation_not_found` for an operation not in this session.
        """
        await self._sessions.get_row(session_id)
        db = self._ops.deps.db
        if operation_id is None:
            active = await db.read(
                lambda conn: repos.operations.latest_active(
                    conn, session_id, [S.RUNNING, S.WAITING_FOR_HUMAN, S.INTERRUPTED]
                )
            )
            if active is None:
                return False
            operation_id = active.id
        op = await db.read(lambda conn: repos.operations.get(conn, operation_id))
        if op is None or op.session_id != session_id:
            raise ProtocolError(
                ErrorCode.OPERATION_NOT_FOUND,
                f"No operation {operation_id!r} in this session.",
                source=ErrorSource.RUNTIME,
            )
        return await self._ops.cancel(operation_id)

    async def delete_session(self, session_id: str) -> SessionDeleteResult:
        """Delete a session and all that hangs off it; what waits or was interrupted in it is cancelled first.

        Raises:
            ProtocolError: `session_not_found`; `busy` while a turn runs (cancel it first).
        """
        ops = self._ops
        deps = ops.deps
        async with ops.session_lock(session_id):
            session, open_ops = await deps.db.read(
                lambda conn: (
                    repos.sessions.get(conn, session_id),
                    repos.operations.for_session(conn, session_id),
                )
            )
            if session is None:
                raise session_not_found(session_id)
            running = ops.running_turn(session_id)
            if running is not None:
                raise busy(
                    "A turn is running in this session; cancel it before deleting the session.", running.state.id
                )
            for op in open_ops:
                if op.parent_operation_id is None and not OperationStatus(op.status).is_final:
                    await ops.cancel(op.id, reason="The session was deleted.")  # its sub-agents with it
            await deps.journal.flush()
            deleted: list[bool] = []
            await deps.journal.write(session_id, lambda conn: deleted.append(repos.sessions.delete(conn, session_id)))
            ops.threads.drop(session_id)
        outputs = deps.home / "tool-output"
        await anyio.to_thread.run_sync(_remove_outputs, outputs, outputs / session_id)
        log.info("deleted session %s", session_id)
        return SessionDeleteResult(session_id=session_id, deleted=bool(deleted and deleted[0]))

    async def recover(self) -> int:
        """At start-up: operations that were running when the process died become `interrupted`, with an event;
        their started tool calls become `interrupted` too. So does one left waiting for a human with nothing left
        to answer (the process died between taking the answer and going on), which `operation/resume` then runs.
        Replicas on PostgreSQL leave alone what another live replica holds (its lease has not expired).

        First, before anything can be offered for a re-run, the commands the dead process left running are stopped;
        how each ended is kept in its call's `meta` (`earlierRun`) for the re-run prompt (`rerun_reason`).
        """
        deps = self._ops.deps
        earlier = await asyncio.to_thread(recover_runs, runs_directory(deps.home))
        stale = await deps.db.read(_stale_operations)
        elsewhere = await self._ops.leases.held_elsewhere([op.id for op in stale])
        stale = [op for op in stale if op.id not in elsewhere]
        recovered = 0
        for op in stale:
            if not await self._ops.leases.take(op.id):
                continue  # another replica's sweep took it over a moment ago
            await self._interrupt(op, earlier, "The server stopped.")
            await self._ops.leases.drop(op.id)
            recovered += 1
        waiting = await deps.db.read(lambda conn: repos.operations.with_status(conn, [S.WAITING_FOR_HUMAN]))
        for op in waiting:
            if op.parent_operation_id is None:
                self._ops.note_waiting(op.session_id, op.id)
        if recovered:
            log.info("marked %d interrupted operation(s)", recovered)
        return recovered

    async def _interrupt(
        self,
        op: OperationRow,
        earlier: dict[tuple[str, str], EarlierRun],
        why: str,
        *,
        announce: OperationStatusChanged | None = None,
    ) -> None:
        """Record the operation and its started calls as interrupted, announced as `interrupted` (or as `announce`:
        a take-over that resumes at once tells clients the turn goes on, not that it ended)."""
        now = datetime.now(UTC)

        def mutate(conn: Connection) -> None:
            repos.operations.set_status(
                conn, op.id, S.INTERRUPTED, now=now, error_code=ErrorCode.INTERRUPTED, error_message=why
            )
            repos.tool_calls.interrupt_started(conn, [op.id], now=now)
            _note_earlier_runs(conn, op.id, earlier, now)

        await self._ops.deps.journal.append(op.session_id, announce or _interrupted(op), mutate=mutate)

    async def orphans(self) -> list[str]:
        """Operations in play that no live replica holds (replicas on PostgreSQL): their replica died."""
        stale = await self._ops.deps.db.read(_stale_operations)
        if not stale:
            return []
        elsewhere = await self._ops.leases.held_elsewhere([op.id for op in stale])
        return [op.id for op in stale if op.id not in elsewhere and self._ops.get(op.id) is None]

    async def take_over(self, operation_id: str) -> None:
        """Recover an operation a dead replica left, by the crash-recovery rules, and resume it here if it is a turn.

        Its started calls become interrupted; resuming asks before a call with side effects runs again.
        """
        ops = self._ops
        if not await ops.leases.take(operation_id):
            return  # another replica was quicker
        op: OperationRow | None = None
        try:
            op = await ops.deps.db.read(lambda conn: repos.operations.get(conn, operation_id))
            stale = await ops.deps.db.read(_stale_operations)
            if op is None or op.id not in {row.id for row in stale}:
                await ops.leases.drop(operation_id)
                return
            log.warning("taking over operation %s from a replica that stopped", operation_id)
            ops.forget_session(op.session_id)
            if op.parent_operation_id is not None:
                await self._interrupt(op, {}, "The replica running it stopped.")
                await ops.leases.drop(operation_id)
                return
            going_on = OperationStatusChanged(
                operation_id=op.id,
                status=S.RUNNING,
                reason="The replica running this turn stopped; another replica took it over and goes on with it.",
            )
            await self._interrupt(op, {}, "The replica running it stopped.", announce=going_on)
            await self.resume(operation_id)
        except ProtocolError as exc:
            log.info("operation %s was taken over but not resumed: %s", operation_id, exc)
            if op is not None:
                await self._ops.deps.journal.append(op.session_id, _interrupted(op))
            await ops.leases.drop(operation_id)

    async def pending(self, session_id: str) -> PendingRequests:
        """The session's approvals and questions still waiting for an answer."""
        rows = await self._ops.deps.db.read(lambda conn: repos.human_requests.pending(conn, session_id=session_id))
        return pending_requests(rows)

    async def operation_info(self, operation_id: str, *, with_calls: bool = True) -> OperationInfo:
        """Raises: ProtocolError `operation_not_found`."""

        def read(conn: Connection) -> tuple[OperationRow | None, list[ToolCallRow], list[HumanRequestRow]]:
            op = repos.operations.get(conn, operation_id)
            calls = repos.tool_calls.for_operation(conn, operation_id) if with_calls and op else []
            requests = repos.human_requests.pending(conn, operation_id=operation_id) if op else []
            return op, calls, requests

        op, calls, requests = await self._ops.deps.db.read(read)
        if op is None:
            raise operation_not_found(operation_id)
        return operation_info(op, calls, requests)


def _interrupted(op: OperationRow) -> OperationStatusChanged:
    return OperationStatusChanged(
        operation_id=op.id,
        status=S.INTERRUPTED,
        code=ErrorCode.INTERRUPTED,
        reason="The server stopped during this turn. Resume it (operation/resume) or send a new message.",
        parent_operation_id=op.parent_operation_id,
    )


def _remove_outputs(parent: Path, folder: Path) -> None:
    """The tool outputs kept for a deleted session (only ever a folder directly under `parent`)."""
    if folder.parent == parent and folder.is_dir() and not folder.is_symlink():
        shutil.rmtree(folder, ignore_errors=True)


def _stale_operations(conn: Connection) -> list[OperationRow]:
    """Operations a dead process left in play: running ones, and waiting ones no pending request of theirs keeps
    waiting (an answer was committed but the operation had not set off again)."""
    waiting = repos.operations.with_status(conn, [S.WAITING_FOR_HUMAN])
    asked = {row.operation_id for row in repos.human_requests.pending(conn)} if waiting else set()
    stranded = [op for op in waiting if op.id not in asked]
    return sorted(repos.operations.with_status(conn, [S.RUNNING]) + stranded, key=lambda op: op.created_at)


def _note_earlier_runs(
    conn: Connection, operation_id: str, earlier: dict[tuple[str, str], EarlierRun], now: datetime
) -> None:
    """Keep how each interrupted call's command ended in the call's `meta`, where the re-run prompt finds it."""
    for row in repos.tool_calls.for_operation(conn, operation_id):
        run = earlier.get((operation_id, row.tool_call_id))
        if run is None or row.status != C.INTERRUPTED:
            continue
        meta = (json.loads(row.meta) if row.meta else {}) | {"earlierRun": run.to_meta()}
        repos.tool_calls.update(conn, operation_id, row.tool_call_id, status=row.status, now=now, meta=json.dumps(meta))

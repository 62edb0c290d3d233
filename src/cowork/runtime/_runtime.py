"""The runtime: the public face of operations (start, steer, answer, resume, cancel, wait, read, recover).

Each concern lives in its own module and this only wires them: `_operations` creates operations and keeps the ones
in play, `_turns` and `_retry` start chat turns, `_answers` takes a person's answers, `_lifecycle` resumes,
cancels, recovers and reads them, `_subagents` runs child operations.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path

import anyio.to_thread

from cowork.models import ModelSelector
from cowork.policy import ToolOverride
from cowork.protocol import (
    ApprovalRespondParams,
    AskRespondParams,
    CheckpointListResult,
    FileChange,
    OperationInfo,
    OperationStatus,
    PendingRequests,
    RespondResult,
    SessionCompactParams,
    SessionDeleteResult,
    SessionDiffResult,
    SessionForkParams,
    SessionForkResult,
    SessionImportParams,
    SessionImportResult,
    SessionRestoreResult,
    SessionRewindParams,
    SessionUndoParams,
    TurnRetryParams,
    TurnRetryResult,
    TurnStartParams,
    TurnStartResult,
    TurnSteerParams,
    TurnSteerResult,
)
from cowork.sessions import SessionService, SessionSettings, TodoList
from cowork.store import repos
from cowork.tools import ToolRegistry

from ._answers import Answers
from ._deps import RunnerDeps, RunnerHooks
from ._fork import fork_session
from ._import import import_session
from ._leases import Leases
from ._lifecycle import Lifecycle
from ._operations import Operations
from ._retry import Retries
from ._rewind import list_checkpoints, rewind, undo
from ._routing import TurnRouter
from ._state import LedgerEntry, OperationState, Steer
from ._subagents import SubAgents
from ._tasks import AgentTasks
from ._turns import Turns

__all__ = ["Runtime"]


class Runtime:
    """The operations side of the core."""

    def __init__(
        self,
        deps: RunnerDeps,
        sessions: SessionService,
        settings: SessionSettings,
        selector: ModelSelector,
        tools: ToolRegistry,
        router: TurnRouter,
        *,
        todos: TodoList,
        overrides: Callable[[], Mapping[str, ToolOverride]],
        leases: Leases | None = None,
    ) -> None:
        """Args:
        deps: what every operation's runner shares.
        sessions: the session store.
        settings: the sessions' switches, read by runners at every decision.
        selector: resolves provider and model names.
        tools: every tool.
        router: the complexity router, for sessions whose model it picks.
        todos: where the `todoWrite` tool writes.
        overrides: the user's per-tool policy overrides, read at every approval decision.
        leases: which replica runs what (replicas on PostgreSQL; default: one process, no leases).
        """
        self.leases = leases or Leases(deps.db, replica="local", ttl=15, enabled=False)
        self.router = router
        self._sessions = sessions

        async def set_todos(state: OperationState, items: list[dict[str, str]]) -> None:
            await todos.set(state.session_id, state.id, items)

        async def spawn_agent(
            parent: OperationState, entry: LedgerEntry, agent_type: str, task: str, model: str | None
        ) -> str:
            return await self.agents.spawn(parent, entry, agent_type, task, model)

        self.operations = Operations(
            deps,
            sessions,
            settings,
            selector,
            tools,
            RunnerHooks(
                spawn_agent=spawn_agent,
                set_todos=set_todos,
                session_flags=settings.flags,
                overrides=overrides,
            ),
            self.leases,
        )
        self.turns = Turns(self.operations, settings, selector, router)
        self.retries = Retries(self.operations, settings, selector, router)
        self.answers = Answers(self.operations)
        self.lifecycle = Lifecycle(self.operations, self.answers, sessions)
        self._sessions = sessions
        self.agents = SubAgents(self.operations, self.lifecycle, selector)
        self.tasks = AgentTasks(self.operations, self.lifecycle, selector)
        """Agent tasks other parts of the core start (an automation's agent step)."""
        sessions.set_active_operation_lookup(self.operations.active_operation)

    # -- start, steer, retry ----------------------------------------------------------------------------------

    async def start_turn(self, params: TurnStartParams) -> TurnStartResult:
        """`turn/start` (see `Turns.start`)."""
        return await self.turns.start(params)

    async def compact(self, params: SessionCompactParams) -> TurnStartResult:
        """`session/compact` (see `Turns.compact`)."""
        return await self.turns.compact(params)

    async def observe(self, session_id: str) -> TurnStartResult:
        """Note observations of the session's unobserved turns (observational memory), in an operation."""
        return await self.turns.observe(session_id)

    async def steer(self, params: TurnSteerParams) -> TurnSteerResult:
        """`turn/steer` (see `Turns.steer`)."""
        return await self.turns.steer(params)

    async def retry(self, params: TurnRetryParams) -> TurnRetryResult:
        """`turn/retry` (see `Retries.retry`)."""
        return await self.retries.retry(params)

    # -- answer, resume, cancel, wait -------------------------------------------------------------------------

    async def respond_approval(self, params: ApprovalRespondParams) -> RespondResult:
        """`approval/respond` (see `Answers.respond_approval`)."""
        return await self.answers.respond_approval(params)

    async def respond_ask(self, params: AskRespondParams) -> RespondResult:
        """`ask/respond` (see `Answers.respond_ask`)."""
        return await self.answers.respond_ask(params)

    async def resume(self, operation_id: str) -> OperationStatus:
        """`operation/resume` (see `Lifecycle.resume`)."""
        return await self.lifecycle.resume(operation_id)

    async def cancel(self, session_id: str, operation_id: str | None = None) -> bool:
        """`turn/cancel` (see `Lifecycle.cancel`)."""
        return await self.lifecycle.cancel(session_id, operation_id)

    async def wait(self, session_id: str) -> None:
        """Wait until no operation of the session is running (tests and benchmarks)."""
        await self.operations.wait_idle(session_id)

    # -- read -------------------------------------------------------------------------------------------------

    def active_operation(self, session_id: str) -> str | None:
        """The session's top-level operation that is running or waiting for a person."""
        return self.operations.active_operation(session_id)

    def running_count(self) -> int:
        return self.operations.running_count()

    async def pending(self, session_id: str) -> PendingRequests:
        return await self.lifecycle.pending(session_id)

    async def fork_session(self, params: SessionForkParams) -> SessionForkResult:
        """`session/fork` (see `cowork.runtime._fork`)."""
        return await fork_session(self.operations, self._sessions, params)

    async def list_checkpoints(self, session_id: str) -> CheckpointListResult:
        """`checkpoint/list` (see `cowork.runtime._rewind`)."""
        return await list_checkpoints(self.operations, self._sessions, session_id)

    async def undo(self, params: SessionUndoParams) -> SessionRestoreResult:
        """`session/undo` (see `cowork.runtime._rewind`)."""
        return await undo(self.operations, self._sessions, params)

    async def rewind(self, params: SessionRewindParams) -> SessionRestoreResult:
        """`session/rewind` (see `cowork.runtime._rewind`)."""
        return await rewind(self.operations, self._sessions, params)

    async def import_session(self, params: SessionImportParams) -> SessionImportResult:
        """`session/import` (see `cowork.runtime._import`)."""
        return await import_session(self.operations, self._sessions, params)

    async def delete_session(self, session_id: str) -> SessionDeleteResult:
        """`session/delete` (see `Lifecycle.delete_session`)."""
        return await self.lifecycle.delete_session(session_id)

    async def session_diff(self, session_id: str) -> SessionDiffResult:
        """`session/diff`: what the session changed in its folder, each file against what it held before the
        session's first change to it. From the checkpoints (edits, writes and shell commands, text or not); files
        changed before checkpoints were kept, or with them off, from the text `edit` and `write` noted.

        Raises:
            ProtocolError: `session_not_found`.
        """
        from cowork.tools._diffs import changes_since

        session = await self._sessions.get_row(session_id)
        workspace = Path(session.workspace)
        db = self.operations.deps.db
        baselines = await db.read(lambda conn: repos.session_files.baselines(conn, session_id))
        tracked: list[FileChange] = []
        cut = False
        checkpoints = self.operations.deps.checkpoints
        if checkpoints is not None:
            rows = await db.read(lambda conn: repos.checkpoints.for_session(conn, session_id))
            rows = [row for row in rows if row.workspace == session.workspace]
            if rows:
                plan = await checkpoints.plan(workspace, rows)
                tracked = await anyio.to_thread.run_sync(functools.partial(plan.changes, forward=True))
                for reason in plan.skipped:
                    path, _, why = reason.partition(": ")
                    tracked.append(FileChange(path=path, status="modified", diff=f"(not shown: {why})\n"))
                    cut = True
                covered = {file.path for row in rows for file in row.files}
                baselines = await anyio.to_thread.run_sync(_not_covered, baselines, workspace, covered)
        changes, cut_text = await anyio.to_thread.run_sync(changes_since, baselines, workspace)
        cut = cut or cut_text or any(change.diff.endswith("KB)\n") for change in tracked)
        return SessionDiffResult(files=[*tracked, *changes], truncated=cut)

    async def operation_info(self, operation_id: str, *, with_calls: bool = True) -> OperationInfo:
        """Raises: ProtocolError `operation_not_found`."""
        return await self.lifecycle.operation_info(operation_id, with_calls=with_calls)

    # -- process ----------------------------------------------------------------------------------------------

    async def recover(self) -> int:
        """At start-up, mark operations a previous process left running as interrupted (see `Lifecycle.recover`)."""
        recovered = await self.lifecycle.recover()
        self.leases.handle("cancel", self._forwarded_cancel)
        self.leases.handle("approval", self._forwarded_approval)
        self.leases.handle("ask", self._forwarded_ask)
        self.leases.handle("steer", self._forwarded_steer)
        await self.leases.lead()
        self.leases.start(self.operations.running_ids, self.lifecycle.orphans, self.lifecycle.take_over)
        return recovered

    async def _forwarded_cancel(self, params: dict[str, object]) -> None:
        await self.operations.cancel(str(params["operationId"]), reason=str(params.get("reason") or "Cancelled."))

    async def _forwarded_approval(self, params: dict[str, object]) -> None:
        await self.answers.respond_approval(ApprovalRespondParams.model_validate(params))

    async def _forwarded_steer(self, params: dict[str, object]) -> None:
        handle = self.operations.get(str(params["operationId"]))
        if handle is not None:
            handle.state.steering.append(Steer(str(params["id"]), str(params["text"]), str(params["clientMessageId"])))

    async def _forwarded_ask(self, params: dict[str, object]) -> None:
        await self.answers.respond_ask(AskRespondParams.model_validate(params))

    async def shutdown(self) -> None:
        """Stop every running operation; each is recorded as `interrupted`."""
        await self.leases.stop()
        await self.operations.stop_all()


def _not_covered(
    baselines: list[tuple[str, str | None]], workspace: Path, covered: set[str]
) -> list[tuple[str, str | None]]:
    """The noted baselines of files the checkpoints do not cover (`covered`: paths relative to the folder)."""
    root = workspace.resolve()
    return [
        (raw, text)
        for raw, text in baselines
        if not (Path(raw).is_relative_to(root) and Path(raw).relative_to(root).as_posix() in covered)
    ]

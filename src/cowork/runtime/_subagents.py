"""Sub-agents: child operations with their own thread and tools, run for a parent's `spawnAgent` call."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pydantic_ai.messages import ModelRequest, UserPromptPart

from cowork.protocol import AgentListParams, AgentSpawned, OperationInfo, OperationStatus, ProtocolError
from cowork.sessions import new_id
from cowork.store import Connection, MessageRow, OperationRow, repos
from cowork.tools import ToolError

from ._history import dump_message
from ._state import LedgerEntry, OperationState
from ._views import operation_info, operation_not_found

if TYPE_CHECKING:
    from ._runtime import Runtime, _Handle

__all__ = ["SubAgents"]

S = OperationStatus
_TERMINAL = frozenset({S.DONE, S.ERROR, S.CANCELLED})


class SubAgents:
    """Starts, re-attaches, awaits, lists and cancels sub-agents on behalf of the runtime."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime

    async def spawn(
        self, parent: OperationState, entry: LedgerEntry, agent_type: str, task: str, model: str | None
    ) -> str:
        agent = self._rt._deps.config.agent
        if parent.depth + 1 > agent.max_agent_depth:
            raise ToolError(f"Sub-agents may nest {agent.max_agent_depth} level(s) deep; this one cannot spawn more.")
        parent_handle = self._rt._handles[parent.id]
        if parent_handle.spawning >= agent.max_concurrent_agents:
            raise ToolError(
                f"{agent.max_concurrent_agents} sub-agents are already running for this task; wait for one to finish."
            )
        # Counted before the first await, so calls in the same step cannot all slip under the limit.
        parent_handle.spawning += 1
        try:
            return await self._start_child(parent, parent_handle, entry, agent_type, task, model)
        finally:
            parent_handle.spawning -= 1

    async def _start_child(
        self,
        parent: OperationState,
        parent_handle: _Handle,
        entry: LedgerEntry,
        agent_type: str,
        task: str,
        model: str | None,
    ) -> str:
        child_id = entry.meta.get("childOperationId")
        if isinstance(child_id, str):
            reattached = await self._reattach(child_id)
            if reattached is not None:
                return await self._await_child(parent_handle, reattached)
        parent_op = await self._rt._deps.db.read(lambda conn: repos.operations.get(conn, parent.id))
        assert parent_op is not None
        provider, model_id = self._rt._selector.split(model, None) if model else (None, None)
        try:
            target = self._rt._selector.resolve(
                provider or parent_op.provider, model_id or (None if provider else parent_op.model)
            )
        except ProtocolError as exc:
            raise ToolError(f"Cannot start the sub-agent: {exc.message}") from None
        child_id = new_id("op")
        now = datetime.now(UTC)
        request = ModelRequest(parts=[UserPromptPart(task, timestamp=now)])
        entry.meta["childOperationId"] = child_id
        ledger = parent_handle.runner.ledger_update(entry, meta=entry.meta)

        def record(conn: Connection) -> None:
            repos.operations.insert(
                conn,
                OperationRow(
                    id=child_id,
                    session_id=parent.session_id,
                    client_message_id=None,
                    origin="sub_agent",
                    status=S.IDLE,
                    provider=target.provider,
                    model=target.model,
                    created_at=now,
                    updated_at=now,
                    thread_id=child_id,
                    parent_operation_id=parent.id,
                    agent_type=agent_type,
                ),
            )
            repos.messages.insert(
                conn,
                MessageRow(
                    id=new_id("msg"),
                    session_id=parent.session_id,
                    operation_id=child_id,
                    position=0,
                    kind="request",
                    text=task,
                    model_message=dump_message(request),
                    created_at=now,
                    thread_id=child_id,
                ),
            )
            ledger(conn)

        await self._rt._deps.journal.append(
            parent.session_id,
            AgentSpawned(
                operation_id=parent.id,
                child_operation_id=child_id,
                agent_type=agent_type,
                task=task,
                model=f"{target.provider}:{target.model}",
            ),
            mutate=record,
        )
        limits = self._rt._limits(target)
        state = OperationState(
            id=child_id,
            session_id=parent.session_id,
            thread_id=child_id,
            origin="sub_agent",
            status=S.IDLE,
            step=0,
            step_limit=limits.max_steps,
            messages=[request],
            positions=[0],
            next_position=1,
            checkin_at=time.monotonic() + limits.checkin_seconds,
            parent_id=parent.id,
            root_id=parent.root,
            agent_type=agent_type,
            depth=parent.depth + 1,
            # The same set, not a copy: "continue once" past a budget covers the whole request, sub-agents included.
            budget_allowed=parent.budget_allowed,
        )
        child = self._rt._make_handle(state, target, await self._rt._workspace(parent.session_id))
        self._rt._launch(child)
        return await self._await_child(parent_handle, child)

    async def _reattach(self, child_id: str) -> _Handle | str | None:
        """A parent re-running spawnAgent after a crash: the child's report if it finished, else the child."""
        op = await self._rt._deps.db.read(lambda conn: repos.operations.get(conn, child_id))
        if op is None:
            return None
        if op.status == S.DONE:
            return op.summary or "(The sub-agent finished without a report.)"
        if OperationStatus(op.status) in _TERMINAL:
            return None
        handle = await self._rt._handle_for(child_id)
        if handle.state.status == S.INTERRUPTED:
            await self._rt.resume(child_id)
        return handle

    async def _await_child(self, parent: _Handle, child: _Handle | str) -> str:
        if isinstance(child, str):
            return child
        parent.children.add(child.state.id)
        try:
            await asyncio.shield(child.done)
        except asyncio.CancelledError:
            await self._rt._cancel_operation(child.state.id, reason="Its parent was cancelled.")
            raise
        finally:
            parent.children.discard(child.state.id)
        state = child.state
        if state.status == S.DONE:
            return state.summary or "(The sub-agent finished without a report.)"
        if state.status == S.CANCELLED:
            raise ToolError("The sub-agent was cancelled before it finished.")
        if state.status == S.INTERRUPTED:
            raise ToolError("The sub-agent was interrupted (the server stopped).")
        op = await self._rt._deps.db.read(lambda conn: repos.operations.get(conn, state.id))
        reason = op.error_message if op and op.error_message else "unknown error"
        raise ToolError(f"The sub-agent failed: {reason}")

    async def list(self, params: AgentListParams) -> list[OperationInfo]:
        def read(conn: Connection) -> list[OperationRow]:
            if params.operation_id is not None:
                return repos.operations.children(conn, params.operation_id)
            if params.session_id is not None:
                return repos.operations.for_session(conn, params.session_id, sub_agents_only=True)
            return []

        return [operation_info(op, [], []) for op in await self._rt._deps.db.read(read)]

    async def wait(self, operation_id: str, within: float) -> OperationInfo:
        handle = self._rt._handles.get(operation_id)
        if handle is not None:
            try:
                await asyncio.wait_for(asyncio.shield(handle.done), within)
            except TimeoutError:
                pass
        return await self._rt.operation_info(operation_id)

    async def cancel(self, operation_id: str) -> bool:
        op = await self._rt._deps.db.read(lambda conn: repos.operations.get(conn, operation_id))
        if op is None or op.parent_operation_id is None:
            raise operation_not_found(operation_id)
        return await self._rt._cancel_operation(operation_id)

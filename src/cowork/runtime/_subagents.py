"""Sub-agents: child operations with their own thread and tools, run for a parent's `spawnAgent` call."""

from __future__ import annotations

import asyncio

from cowork.models import ModelSelector
from cowork.protocol import AgentListParams, AgentSpawned, OperationInfo, OperationStatus, ProtocolError
from cowork.sessions import new_id
from cowork.store import Connection, OperationRow, repos
from cowork.tools import ToolError

from ._handles import CachedThread, Handle
from ._lifecycle import Lifecycle
from ._operations import NewOperation, Operations
from ._state import LedgerEntry, OperationState
from ._views import operation_info, operation_not_found

__all__ = ["SubAgents"]

S = OperationStatus


class SubAgents:
    """Starts, re-attaches, awaits, lists and cancels sub-agents, through the operations' public API."""

    def __init__(self, operations: Operations, lifecycle: Lifecycle, selector: ModelSelector) -> None:
        self._ops = operations
        self._lifecycle = lifecycle
        self._selector = selector

    async def spawn(
        self, parent: OperationState, entry: LedgerEntry, agent_type: str, task: str, model: str | None
    ) -> str:
        """Run a sub-agent for the parent's `spawnAgent` call and return its report.

        Raises:
            ToolError: too deep, too many at once, an unknown model, or the sub-agent did not finish.
        """
        agent = self._ops.deps.config.agent
        if parent.depth + 1 > agent.max_agent_depth:
            raise ToolError(f"Sub-agents may nest {agent.max_agent_depth} level(s) deep; this one cannot spawn more.")
        parent_handle = self._ops.get(parent.id)
        assert parent_handle is not None, "a spawning operation is in play"
        if parent_handle.spawning >= agent.max_concurrent_agents:
            raise ToolError(
                f"{agent.max_concurrent_agents} sub-agents are already running for this task; wait for one to finish."
            )
        # Counted before the first await, so calls in the same step cannot all slip under the limit.
        parent_handle.spawning += 1
        try:
            return await self._start_child(parent_handle, entry, agent_type, task, model)
        finally:
            parent_handle.spawning -= 1

    async def _start_child(
        self, parent_handle: Handle, entry: LedgerEntry, agent_type: str, task: str, model: str | None
    ) -> str:
        parent = parent_handle.state
        child_id = entry.meta.get("childOperationId")
        if isinstance(child_id, str):
            reattached = await self._reattach(child_id)
            if reattached is not None:
                return await self._await_child(parent_handle, reattached)
        db = self._ops.deps.db
        parent_op = await db.read(lambda conn: repos.operations.get(conn, parent.id))
        assert parent_op is not None
        provider, model_id = self._selector.split(model, None) if model else (None, None)
        try:
            target = self._selector.resolve(
                provider or parent_op.provider, model_id or (None if provider else parent_op.model)
            )
        except ProtocolError as exc:
            raise ToolError(f"Cannot start the sub-agent: {exc.message}") from None
        child_id = new_id("op")
        entry.meta["childOperationId"] = child_id
        ledger = parent_handle.runner.ledger_update(entry, meta=entry.meta)
        child = await self._ops.new_operation(
            NewOperation(
                session_id=parent.session_id,
                thread_id=child_id,
                origin="sub_agent",
                target=target,
                workspace=await self._ops.workspace(parent.session_id),
                operation_id=child_id,
                request=task,
                history=CachedThread([], [], 0),
                parent=parent,
                agent_type=agent_type,
                running=False,
                events=[
                    AgentSpawned(
                        operation_id=parent.id,
                        child_operation_id=child_id,
                        agent_type=agent_type,
                        task=task,
                        model=f"{target.provider}:{target.model}",
                    )
                ],
                mutate=ledger,
            )
        )
        return await self._await_child(parent_handle, child)

    async def _reattach(self, child_id: str) -> Handle | str | None:
        """A parent re-running spawnAgent after a crash: the child's report if it finished, else the child."""
        op = await self._ops.deps.db.read(lambda conn: repos.operations.get(conn, child_id))
        if op is None:
            return None
        if op.status == S.DONE:
            return op.summary or "(The sub-agent finished without a report.)"
        if OperationStatus(op.status).is_final:
            return None
        handle = await self._ops.load(child_id)
        if handle.state.status == S.INTERRUPTED:
            await self._lifecycle.resume(child_id)
        return handle

    async def _await_child(self, parent: Handle, child: Handle | str) -> str:
        if isinstance(child, str):
            return child
        parent.children.add(child.state.id)
        try:
            await asyncio.shield(child.done)
        except asyncio.CancelledError:
            await self._ops.cancel(child.state.id, reason="Its parent was cancelled.")
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
        op = await self._ops.deps.db.read(lambda conn: repos.operations.get(conn, state.id))
        reason = op.error_message if op and op.error_message else "unknown error"
        raise ToolError(f"The sub-agent failed: {reason}")

    async def list(self, params: AgentListParams) -> list[OperationInfo]:
        """`agent/list`: a parent's children, or every sub-agent of a session."""

        def read(conn: Connection) -> list[OperationRow]:
            if params.operation_id is not None:
                return repos.operations.children(conn, params.operation_id)
            if params.session_id is not None:
                return repos.operations.for_session(conn, params.session_id, sub_agents_only=True)
            return []

        return [operation_info(op, [], []) for op in await self._ops.deps.db.read(read)]

    async def wait(self, operation_id: str, within: float) -> OperationInfo:
        """`agent/wait`: the sub-agent once it ends, or as it is after `within` seconds."""
        await self._ops.wait(operation_id, within)
        return await self._lifecycle.operation_info(operation_id)

    async def cancel(self, operation_id: str) -> bool:
        """`agent/cancel`.

        Raises:
            ProtocolError: `operation_not_found` (also for a top-level operation).
        """
        op = await self._ops.deps.db.read(lambda conn: repos.operations.get(conn, operation_id))
        if op is None or op.parent_operation_id is None:
            raise operation_not_found(operation_id)
        return await self._ops.cancel(operation_id)

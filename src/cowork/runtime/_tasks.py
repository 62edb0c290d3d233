"""Agent tasks: an operation started by something other than a person typing, on a prompt of its own.

An automation's `agentStep` is one: a top-level operation (origin `automation`) in the automation's session, on a
thread of its own (no earlier history), announced as a user message so it reads like any turn there. Its approvals,
guardrails, budgets, cancellation and crash recovery are every operation's (see operations.md).
"""

from __future__ import annotations

from collections.abc import Collection

from cowork.models import ModelSelector
from cowork.protocol import OperationStatus
from cowork.sessions import new_id, session_not_found
from cowork.store import repos

from ._handles import CachedThread
from ._lifecycle import Lifecycle
from ._operations import NewOperation, Operations

__all__ = ["AgentTasks"]


class AgentTasks:
    """Starts agent tasks through `Operations.new_operation` and reports how they ended."""

    def __init__(self, operations: Operations, lifecycle: Lifecycle, selector: ModelSelector) -> None:
        self._ops = operations
        self._lifecycle = lifecycle
        self._selector = selector

    async def start(
        self, session_id: str, prompt: str, *, model: str | None = None, tools: Collection[str] | None = None
    ) -> str:
        """Start an operation on `prompt` in the session; returns its id at once.

        Args:
            model: `provider:model` or a model of the session's provider; None: the session's model.
            tools: the only tools it may use (None: every tool a turn has).

        Raises:
            ProtocolError: `session_not_found`, `no_provider`, `unknown_provider`; then nothing was recorded.
        """
        ops = self._ops
        session = await ops.deps.db.read(lambda conn: repos.sessions.get(conn, session_id))
        if session is None:
            raise session_not_found(session_id)
        if model:
            provider, model_id = self._selector.split(model, None)
            target = self._selector.resolve(provider or session.provider, model_id)
        else:
            target = self._selector.resolve(session.provider, session.model)
        op_id = new_id("op")
        await ops.new_operation(
            NewOperation(
                session_id=session_id,
                thread_id=op_id,
                origin="automation",
                target=target,
                workspace=await ops.workspace(session_id),
                operation_id=op_id,
                request=prompt,
                history=CachedThread([], [], 0),
                announce_request=True,
                client_message_id=op_id,
                tool_names=frozenset(tools) if tools is not None else None,
            )
        )
        return op_id

    async def status(self, operation_id: str) -> tuple[OperationStatus, str | None, str | None]:
        """The operation's status, final text (when done) and error message (when it failed), from the store or
        from memory while it is in play."""
        handle = self._ops.get(operation_id)
        if handle is not None:
            state = handle.state
            if not state.status.is_final:
                return state.status, None, None
        op = await self._ops.deps.db.read(lambda conn: repos.operations.get(conn, operation_id))
        if op is None:
            return OperationStatus.ERROR, None, "The operation no longer exists."
        return OperationStatus(op.status), op.summary, op.error_message

    async def wait(self, operation_id: str, within: float) -> None:
        """Wait until the operation leaves play, or `within` seconds."""
        await self._ops.wait(operation_id, within)

    async def cancel(self, operation_id: str) -> bool:
        return await self._ops.cancel(operation_id, reason="Its automation run was cancelled.")

    async def resume(self, operation_id: str) -> OperationStatus:
        """Go on with an interrupted operation (its interrupted side-effecting calls ask again).

        Raises:
            ProtocolError: `operation_not_found`, `not_resumable`.
        """
        return await self._lifecycle.resume(operation_id)

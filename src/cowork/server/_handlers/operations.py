"""Operations and sub-agents: `operation/*`, `agent/*`."""

from __future__ import annotations

from cowork.core import Core
from cowork.protocol import (
    AgentCancelResult,
    AgentListParams,
    AgentListResult,
    AgentWaitParams,
    OperationInfo,
    OperationRef,
    OperationResumeResult,
)

from .._peer import Peer

__all__ = ["agent_cancel", "agent_list", "agent_wait", "operation_get", "operation_resume"]


async def operation_get(core: Core, peer: Peer | None, params: OperationRef) -> OperationInfo:
    return await core.runtime.operation_info(params.operation_id)


async def operation_resume(core: Core, peer: Peer | None, params: OperationRef) -> OperationResumeResult:
    info = await core.runtime.operation_info(params.operation_id, with_calls=False)
    if peer is not None:
        # Subscribe before resuming, so the resumed operation's first events reach the connection that resumed it.
        await peer.subscribe(info.session_id, None)
    status = await core.runtime.resume(params.operation_id)
    return OperationResumeResult(operation_id=params.operation_id, status=status)


async def agent_list(core: Core, peer: Peer | None, params: AgentListParams) -> AgentListResult:
    return AgentListResult(agents=await core.runtime.agents.list(params))


async def agent_wait(core: Core, peer: Peer | None, params: AgentWaitParams) -> OperationInfo:
    return await core.runtime.agents.wait(params.operation_id, params.timeout_seconds)


async def agent_cancel(core: Core, peer: Peer | None, params: OperationRef) -> AgentCancelResult:
    return AgentCancelResult(cancelled=await core.runtime.agents.cancel(params.operation_id))

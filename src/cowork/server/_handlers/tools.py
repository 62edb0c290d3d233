"""Tools and their approval overrides: `tool/list`, `tool/setPolicy`."""

from __future__ import annotations

from cowork.core import Core
from cowork.protocol import EmptyParams, ToolInfo, ToolListResult, ToolSetPolicyParams

from .._peer import Peer

__all__ = ["tool_list", "tool_set_policy"]


async def tool_list(core: Core, peer: Peer | None, params: EmptyParams) -> ToolListResult:
    return ToolListResult(tools=core.tool_policies.infos())


async def tool_set_policy(core: Core, peer: Peer | None, params: ToolSetPolicyParams) -> ToolInfo:
    return await core.tool_policies.set(params)

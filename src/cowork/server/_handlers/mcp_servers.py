"""MCP servers: `mcp/*` → the core's MCP hypervisor."""

from __future__ import annotations

from cowork.core import Core
from cowork.protocol import (
    EmptyParams,
    McpAddParams,
    McpListResult,
    McpNameParams,
    McpRemoveResult,
    McpServerInfo,
    McpTrustParams,
    McpTrustResult,
    McpUpdateParams,
    McpValidateParams,
    McpValidateResult,
)

from .._peer import Peer

__all__ = [
    "mcp_add",
    "mcp_disable",
    "mcp_enable",
    "mcp_list",
    "mcp_remove",
    "mcp_restart",
    "mcp_trust",
    "mcp_update",
    "mcp_validate",
]


async def mcp_list(core: Core, peer: Peer | None, params: EmptyParams) -> McpListResult:
    return McpListResult(servers=core.mcp.list())


async def mcp_add(core: Core, peer: Peer | None, params: McpAddParams) -> McpServerInfo:
    return await core.mcp.add(params)


async def mcp_update(core: Core, peer: Peer | None, params: McpUpdateParams) -> McpServerInfo:
    return await core.mcp.update(params)


async def mcp_remove(core: Core, peer: Peer | None, params: McpNameParams) -> McpRemoveResult:
    await core.mcp.remove(params.name)
    return McpRemoveResult(name=params.name, removed=True)


async def mcp_enable(core: Core, peer: Peer | None, params: McpNameParams) -> McpServerInfo:
    return await core.mcp.set_enabled(params.name, True)


async def mcp_disable(core: Core, peer: Peer | None, params: McpNameParams) -> McpServerInfo:
    return await core.mcp.set_enabled(params.name, False)


async def mcp_restart(core: Core, peer: Peer | None, params: McpNameParams) -> McpServerInfo:
    return await core.mcp.restart(params.name)


async def mcp_validate(core: Core, peer: Peer | None, params: McpValidateParams) -> McpValidateResult:
    return await core.mcp.validate(params)


async def mcp_trust(core: Core, peer: Peer | None, params: McpTrustParams) -> McpTrustResult:
    return await core.mcp.trust(params.workspace)

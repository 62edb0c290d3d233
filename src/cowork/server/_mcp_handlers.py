"""`mcp/*` JSON-RPC methods → the core's MCP hypervisor."""

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

from ._handlers import Peer, handles

__all__: list[str] = []


@handles("mcp/list")
async def mcp_list(core: Core, peer: Peer | None, params: EmptyParams) -> McpListResult:
    return McpListResult(servers=core.mcp.list())


@handles("mcp/add")
async def mcp_add(core: Core, peer: Peer | None, params: McpAddParams) -> McpServerInfo:
    return await core.mcp.add(params)


@handles("mcp/update")
async def mcp_update(core: Core, peer: Peer | None, params: McpUpdateParams) -> McpServerInfo:
    return await core.mcp.update(params)


@handles("mcp/remove")
async def mcp_remove(core: Core, peer: Peer | None, params: McpNameParams) -> McpRemoveResult:
    await core.mcp.remove(params.name)
    return McpRemoveResult(name=params.name, removed=True)


@handles("mcp/enable")
async def mcp_enable(core: Core, peer: Peer | None, params: McpNameParams) -> McpServerInfo:
    return await core.mcp.set_enabled(params.name, True)


@handles("mcp/disable")
async def mcp_disable(core: Core, peer: Peer | None, params: McpNameParams) -> McpServerInfo:
    return await core.mcp.set_enabled(params.name, False)


@handles("mcp/restart")
async def mcp_restart(core: Core, peer: Peer | None, params: McpNameParams) -> McpServerInfo:
    return await core.mcp.restart(params.name)


@handles("mcp/validate")
async def mcp_validate(core: Core, peer: Peer | None, params: McpValidateParams) -> McpValidateResult:
    return await core.mcp.validate(params)


@handles("mcp/trust")
async def mcp_trust(core: Core, peer: Peer | None, params: McpTrustParams) -> McpTrustResult:
    return await core.mcp.trust(params.workspace)

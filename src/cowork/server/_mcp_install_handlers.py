"""JSON-RPC methods of the MCP install flow (`mcp/install/*`) and OAuth sign-in (`mcp/auth/start`)."""

from __future__ import annotations

from cowork.core import Core
from cowork.mcp.install import ProbeFailed
from cowork.protocol import (
    ErrorCode,
    ErrorSource,
    McpAuthStartParams,
    McpAuthStartResult,
    McpInstallContinueParams,
    McpInstallListParams,
    McpInstallListResult,
    McpInstallRef,
    McpInstallStartParams,
    ProtocolError,
    WireModel,
)

from ._handlers import Peer, handles

__all__: list[str] = []


@handles("mcp/install/start")
async def install_start(core: Core, peer: Peer | None, params: McpInstallStartParams) -> WireModel:
    return await core.mcp_installs.start(params.manifest, params.manifest_path, wait=params.wait)


@handles("mcp/install/continue")
async def install_continue(core: Core, peer: Peer | None, params: McpInstallContinueParams) -> WireModel:
    return await core.mcp_installs.continue_(params.install_id, params.values, wait=params.wait)


@handles("mcp/install/cancel")
async def install_cancel(core: Core, peer: Peer | None, params: McpInstallRef) -> WireModel:
    return await core.mcp_installs.cancel(params.install_id)


@handles("mcp/install/get")
async def install_get(core: Core, peer: Peer | None, params: McpInstallRef) -> WireModel:
    return await core.mcp_installs.get(params.install_id)


@handles("mcp/install/list")
async def install_list(core: Core, peer: Peer | None, params: McpInstallListParams) -> WireModel:
    return McpInstallListResult(installs=await core.mcp_installs.list())


@handles("mcp/auth/start")
async def auth_start(core: Core, peer: Peer | None, params: McpAuthStartParams) -> WireModel:
    config = core.mcp.server(params.name).config
    if config.transport == "stdio" or not config.url:
        raise ProtocolError(
            ErrorCode.INVALID_PARAMS,
            f"{params.name} is a stdio server; OAuth sign-in is for HTTP and SSE servers.",
            source=ErrorSource.SERVER,
        )
    try:
        url = await core.mcp_oauth.start(params.name, config.url, transport=config.transport)
    except ProbeFailed as exc:
        raise ProtocolError(ErrorCode.INVALID_PARAMS, exc.reason, source=ErrorSource.SERVER) from None
    return McpAuthStartResult(name=params.name, authorization_url=url)

"""The MCP install flow (`mcp/install/*`) and OAuth sign-in (`mcp/auth/start`)."""

from __future__ import annotations

from cowork.core import Core
from cowork.mcp import start_sign_in
from cowork.protocol import (
    InstallInfo,
    McpAuthStartParams,
    McpAuthStartResult,
    McpInstallContinueParams,
    McpInstallListParams,
    McpInstallListResult,
    McpInstallRef,
    McpInstallStartParams,
)

from .._peer import Peer

__all__ = ["auth_start", "install_cancel", "install_continue", "install_get", "install_list", "install_start"]


async def install_start(core: Core, peer: Peer | None, params: McpInstallStartParams) -> InstallInfo:
    return await core.mcp_installs.start(params.manifest, params.manifest_path, wait=params.wait)


async def install_continue(core: Core, peer: Peer | None, params: McpInstallContinueParams) -> InstallInfo:
    return await core.mcp_installs.continue_(params.install_id, params.values, wait=params.wait)


async def install_cancel(core: Core, peer: Peer | None, params: McpInstallRef) -> InstallInfo:
    return await core.mcp_installs.cancel(params.install_id)


async def install_get(core: Core, peer: Peer | None, params: McpInstallRef) -> InstallInfo:
    return await core.mcp_installs.get(params.install_id)


async def install_list(core: Core, peer: Peer | None, params: McpInstallListParams) -> McpInstallListResult:
    return McpInstallListResult(installs=await core.mcp_installs.list())


async def auth_start(core: Core, peer: Peer | None, params: McpAuthStartParams) -> McpAuthStartResult:
    url = await start_sign_in(core.mcp, core.mcp_oauth, params.name)
    return McpAuthStartResult(name=params.name, authorization_url=url)

"""JSON-RPC methods of the MCP install flow (`mcp/install/*`) and OAuth sign-in (`mcp/auth/start`)."""

from __future__ import annotations

import weakref
from typing import Any

from cowork.core import Core
from cowork.mcp._oauth import OAuthManager
from cowork.mcp.install import InstallService, ProbeFailed
from cowork.protocol import (
    ErrorCode,
    ErrorSource,
    McpAddParams,
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

__all__ = ["install_service", "oauth_manager"]

_SERVICES: weakref.WeakKeyDictionary[Core, InstallService] = weakref.WeakKeyDictionary()
_OAUTH: weakref.WeakKeyDictionary[Core, OAuthManager] = weakref.WeakKeyDictionary()


def install_service(core: Core) -> InstallService:
    """The core's install service: `core.mcp_installs` when the composition root built one, else one made here on
    first use, saving through the hypervisor and announcing changes as `mcp/install` to every connection."""
    wired = getattr(core, "mcp_installs", None)
    if isinstance(wired, InstallService):
        return wired
    service = _SERVICES.get(core)
    if service is None:
        hypervisor = core.mcp

        async def save(config: dict[str, Any]) -> None:
            await hypervisor.add(McpAddParams.model_validate(config))

        async def exists(name: str) -> bool:
            return any(info.name == name for info in hypervisor.list())

        service = InstallService(
            core.db,
            core.credentials,
            save=save,
            remove=hypervisor.remove,
            exists=exists,
            auth=oauth_manager(core).auth_provider,
        )
        service.subscribe(lambda info: core.notices.publish("mcp/install", info))
        _SERVICES[core] = service
    return service


def oauth_manager(core: Core) -> OAuthManager:
    """The core's OAuth manager: `core.mcp_oauth` when the composition root built one, else one made here on first
    use (it then also becomes the hypervisor's auth provider, when it has none)."""
    wired = getattr(core, "mcp_oauth", None)
    if isinstance(wired, OAuthManager):
        return wired
    manager = _OAUTH.get(core)
    if manager is None:
        hypervisor = core.mcp

        async def reconnect(name: str) -> None:
            await hypervisor.restart(name)

        manager = OAuthManager(core.credentials, on_authorized=reconnect)
        if hypervisor.auth_provider is None:
            hypervisor.auth_provider = manager.auth_provider
        _OAUTH[core] = manager
    return manager


@handles("mcp/install/start")
async def install_start(core: Core, peer: Peer | None, params: McpInstallStartParams) -> WireModel:
    return await install_service(core).start(params.manifest, params.manifest_path, wait=params.wait)


@handles("mcp/install/continue")
async def install_continue(core: Core, peer: Peer | None, params: McpInstallContinueParams) -> WireModel:
    return await install_service(core).continue_(params.install_id, params.values, wait=params.wait)


@handles("mcp/install/cancel")
async def install_cancel(core: Core, peer: Peer | None, params: McpInstallRef) -> WireModel:
    return await install_service(core).cancel(params.install_id)


@handles("mcp/install/get")
async def install_get(core: Core, peer: Peer | None, params: McpInstallRef) -> WireModel:
    return await install_service(core).get(params.install_id)


@handles("mcp/install/list")
async def install_list(core: Core, peer: Peer | None, params: McpInstallListParams) -> WireModel:
    return McpInstallListResult(installs=await install_service(core).list())


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
        url = await oauth_manager(core).start(params.name, config.url, transport=config.transport)
    except ProbeFailed as exc:
        raise ProtocolError(ErrorCode.INVALID_PARAMS, exc.reason, source=ErrorSource.SERVER) from None
    return McpAuthStartResult(name=params.name, authorization_url=url)

"""Starting an OAuth sign-in for a configured MCP server: only HTTP and SSE servers can sign in."""

from __future__ import annotations

from cowork.protocol import ErrorCode, ErrorSource, ProtocolError

from ._hypervisor import McpHypervisor
from ._oauth import OAuthManager
from .install import ProbeFailed

__all__ = ["start_sign_in"]


async def start_sign_in(hypervisor: McpHypervisor, oauth: OAuthManager, name: str) -> str:
    """Begin signing in to the configured server `name`; returns the authorization URL to open in a browser.

    Raises:
        ProtocolError: `mcp_server_not_found`; `invalid_params` for a stdio server, or when the server or its
            authorization server fails before giving a URL.
    """
    config = hypervisor.server(name).config
    if config.transport == "stdio" or not config.url:
        raise ProtocolError(
            ErrorCode.INVALID_PARAMS,
            f"{name} is a stdio server; OAuth sign-in is for HTTP and SSE servers.",
            source=ErrorSource.SERVER,
        )
    try:
        return await oauth.start(name, config.url, transport=config.transport)
    except ProbeFailed as exc:
        raise ProtocolError(ErrorCode.INVALID_PARAMS, exc.reason, source=ErrorSource.SERVER) from None

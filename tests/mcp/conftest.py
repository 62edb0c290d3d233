"""Shared helpers for the MCP tests: the test server's command line and waiting for a status."""

from __future__ import annotations

import asyncio
import sys

from cowork.core import Core
from cowork.protocol import McpAddParams, McpServerInfo

MCP_ENV = {
    "COWORK_MCP__CONNECT_TIMEOUT_SECONDS": "15",
    "COWORK_MCP__BACKOFF_BASE_SECONDS": "0.2",
    "COWORK_MCP__STOP_GRACE_SECONDS": "1",
}


def stdio_server(name: str, kind: str = "normal", **fields: object) -> McpAddParams:
    return McpAddParams.model_validate(
        {
            "name": name,
            "transport": "stdio",
            "command": sys.executable,
            "args": ["-m", "cowork.testing.mcp_servers", kind],
            "policy": "auto-run",
            **fields,
        }
    )


async def wait_status(core: Core, name: str, *statuses: str, within: float = 30) -> McpServerInfo:
    async def poll() -> McpServerInfo:
        while True:
            info = core.mcp.info(name)
            if info.status in statuses:
                return info
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(poll(), within)

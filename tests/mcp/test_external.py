"""Servers Cowork did not write, and the network transports: mcp-server-time (PyPI, stdio), the reference
`@modelcontextprotocol/server-everything` (npm, through npx), and MCPServer over streamable HTTP and SSE."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from cowork.protocol import McpAddParams
from cowork.testing.core import CoreHarness
from cowork.tools import ToolContext

from .conftest import MCP_ENV, wait_status

pytestmark = pytest.mark.anyio


async def test_mcp_server_time_over_stdio(harness: CoreHarness) -> None:
    core = await harness.core(env=MCP_ENV)
    params = {"name": "time", "transport": "stdio", "command": sys.executable, "args": ["-m", "mcp_server_time"]}
    await core.mcp.add(McpAddParams.model_validate(params))
    info = await wait_status(core, "time", "running")
    assert "get_current_time" in {t.name for t in info.tools}
    result = await core.mcp.call_tool("time", "get_current_time", {"timezone": "UTC"})
    assert "UTC" in result.content[0].text  # type: ignore[union-attr]


@contextmanager
def served(kind: str) -> Iterator[int]:
    """The test server of `kind` (`http`, `sse`) listening on a free local port, stopped at the end."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "cowork.testing.mcp_servers", kind, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


async def test_streamable_http_server(harness: CoreHarness) -> None:
    with served("http") as port:
        core = await harness.core(env=MCP_ENV)
        url = f"http://127.0.0.1:{port}/mcp"
        await core.mcp.add(McpAddParams(name="web", transport="http", url=url, policy="auto-run"))
        await wait_status(core, "web", "running")
        result = await core.mcp.call_tool("web", "echo", {"text": "over http"})
        assert result.content[0].text == "echo: over http"  # type: ignore[union-attr]


async def test_sse_server(harness: CoreHarness) -> None:
    with served("sse") as port:
        core = await harness.core(env=MCP_ENV)
        url = f"http://127.0.0.1:{port}/sse"
        await core.mcp.add(McpAddParams(name="events", transport="sse", url=url, policy="auto-run"))
        info = await wait_status(core, "events", "running", "error")
        assert info.status == "running", info.reason
        assert {"echo", "add"} <= {t.name for t in info.tools}
        result = await core.mcp.call_tool("events", "echo", {"text": "over sse"})
        assert result.content[0].text == "echo: over sse"  # type: ignore[union-attr]
        # A call through the registry, as a turn makes it.
        tool = core.tools.get("mcp__events__add")
        assert tool is not None
        text = await tool.run(tool.parse({"a": 2, "b": 3}), ToolContext(workspace=harness.workspace))
        assert "5" in text and 'source="mcp:events/add"' in text


NPX = shutil.which("npx")


@pytest.mark.timeout(300)
@pytest.mark.skipif(NPX is None or shutil.which("node") is None, reason="node and npx are not installed")
async def test_server_everything_from_npm(harness: CoreHarness) -> None:
    assert NPX is not None
    # The first run downloads the package from npm, so the connect gets far more than the usual time.
    core = await harness.core(env=MCP_ENV | {"COWORK_MCP__CONNECT_TIMEOUT_SECONDS": "240"})
    params = McpAddParams(
        name="everything",
        transport="stdio",
        command=NPX,
        args=["-y", "@modelcontextprotocol/server-everything"],
        policy="auto-run",
    )
    await core.mcp.add(params)
    info = await wait_status(core, "everything", "running", "error", within=270)
    assert info.status == "running", info.reason
    assert "echo" in {t.name for t in info.tools}
    result = await core.mcp.call_tool("everything", "echo", {"message": "hello from cowork"})
    assert not result.is_error
    assert "hello from cowork" in result.content[0].text  # type: ignore[union-attr]

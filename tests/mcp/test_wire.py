"""The `mcp/*` methods over a real server process: every method, bad input, `mcp/status`, the orphan sweep."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from cowork.clients.connection import RpcError
from cowork.testing.client import EventClient
from cowork.testing.server import ServerProcess

from .conftest import MCP_ENV

pytestmark = pytest.mark.anyio

STDIO = {"transport": "stdio", "command": sys.executable, "args": ["-m", "cowork.testing.mcp_servers"]}


async def test_every_mcp_method_and_bad_input(tmp_path: Path, workspace: Path) -> None:
    with ServerProcess(tmp_path / "home", workspace, env=MCP_ENV) as server:
        client = await EventClient.connect(server.address)
        try:
            assert (await client.call("mcp/list")) == {"servers": []}
            added = await client.call("mcp/add", {"name": "t", **STDIO, "policy": "allow-list"})
            assert added["name"] == "t" and added["source"] == "database" and added["policy"] == "allow-list"
            running = await client.wait_mcp_server("t", "running")
            assert running["pid"] and {"echo", "add"} <= {t["name"] for t in running["tools"]}
            assert any(
                m == "mcp/status" and p["name"] == "t" and p["status"] == "running" for m, p in client.notifications
            )
            # Bad input changes nothing.
            refused: list[tuple[str, dict[str, Any], str]] = [
                ("mcp/add", {"name": "t", **STDIO}, "mcp_server_exists"),
                ("mcp/add", {"name": "Bad Name", **STDIO}, "invalid_params"),
                ("mcp/add", {"name": "x", "transport": "stdio"}, "invalid_params"),
                ("mcp/add", {"name": "x", "transport": "http", "url": "ftp://nope"}, "invalid_params"),
                ("mcp/update", {"name": "nope", "enabled": False}, "mcp_server_not_found"),
                ("mcp/remove", {"name": "nope"}, "mcp_server_not_found"),
                ("mcp/enable", {"name": "nope"}, "mcp_server_not_found"),
                ("mcp/disable", {"name": "nope"}, "mcp_server_not_found"),
                ("mcp/restart", {"name": "nope"}, "mcp_server_not_found"),
                ("mcp/validate", {"name": "nope"}, "mcp_server_not_found"),
                ("mcp/trust", {"workspace": str(tmp_path / "missing")}, "workspace_not_found"),
                ("mcp/add", {"name": "y", **STDIO, "policy": "sometimes"}, "invalid_params"),
            ]
            for method, params, code in refused:
                with pytest.raises(RpcError) as info:
                    await client.call(method, params)
                assert info.value.code == code, (method, params)
            listed = await client.call("mcp/list")
            assert isinstance(listed, dict) and [s["name"] for s in listed["servers"]] == ["t"]

            updated = await client.call("mcp/update", {"name": "t", "allowedTools": ["echo"], "policy": "auto-run"})
            assert updated["allowedTools"] == ["echo"] and updated["policy"] == "auto-run"
            assert (await client.call("mcp/disable", {"name": "t"}))["status"] == "disabled"
            await client.call("mcp/enable", {"name": "t"})
            first = await client.wait_mcp_server("t", "running")
            await client.call("mcp/restart", {"name": "t"})
            await asyncio.sleep(0.2)
            second = await client.wait_mcp_server("t", "running")
            assert second["pid"] != first["pid"]

            ok = await client.call("mcp/validate", {"name": "probe", **STDIO})
            assert ok["ok"] and "echo" in {t["name"] for t in ok["tools"]} and ok["latencyMs"] > 0
            bad = await client.call("mcp/validate", {"name": "probe", "transport": "stdio", "command": "no-such-cmd-x"})
            assert not bad["ok"] and "not found" in bad["error"]
            assert (await client.call("mcp/validate", {"name": "t"}))["ok"]
            assert [s["name"] for s in (await client.call("mcp/list"))["servers"]] == ["t"]

            assert (await client.call("mcp/trust", {}))["trusted"] is True
            assert await client.call("mcp/remove", {"name": "t"}) == {"name": "t", "removed": True}
            assert (await client.call("mcp/list")) == {"servers": []}
        finally:
            await client.close()


async def test_orphans_of_a_killed_cowork_are_swept_at_start(tmp_path: Path, workspace: Path) -> None:
    server = ServerProcess(tmp_path / "home", workspace, env=MCP_ENV).start()
    try:
        client = await EventClient.connect(server.address)
        try:
            await client.call("mcp/add", {"name": "linger", **STDIO, "args": [*STDIO["args"], "linger"]})
            info = await client.wait_mcp_server("linger", "running")
        finally:
            await client.close()
        pid = info["pid"]
        created = psutil.Process(pid).create_time()
        server.kill()
        await asyncio.sleep(0.5)
        assert psutil.pid_exists(pid) and psutil.Process(pid).create_time() == created  # orphaned, still alive
        server.start()
        client = await EventClient.connect(server.address)
        try:
            again = await client.wait_mcp_server("linger", "running")
        finally:
            await client.close()
        assert again["pid"] != pid
        gone = not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
        assert gone
    finally:
        server.stop()

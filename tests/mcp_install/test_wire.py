"""The install flow over the wire: a real server process, restarted mid-install, and `mcp/install` notifications."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from cowork.clients.connection import RpcError
from cowork.testing.client import EventClient
from cowork.testing.postgres import store_text
from cowork.testing.server import ServerProcess

from .test_service import CONFIG_FORM, SERVER_ARGS, fake_program

pytestmark = pytest.mark.anyio


async def wait_state(client: EventClient, install_id: str, state: str, within: float = 30) -> None:
    def seen() -> bool:
        return any(
            m == "mcp/install" and p["installId"] == install_id and p["state"] == state for m, p in client.notifications
        )

    async def wait() -> None:
        while True:
            if seen():
                return
            await asyncio.sleep(0.02)

    await asyncio.wait_for(wait(), within)


async def test_install_across_a_restart(tmp_path: Path, workspace: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    manifest: dict[str, Any] = {
        "name": "wired",
        "command": sys.executable,
        "args": SERVER_ARGS,
        "env": {"WIRED_KEY": "${config.apiKey}"},
        "dependencies": [{"name": "cowork-fake-node", "version": ">=18"}],
        "config": CONFIG_FORM,
    }
    server = ServerProcess(tmp_path / "home", workspace, env=env)
    with server:
        client = await EventClient.connect(server.address)
        try:
            info = await client.call("mcp/install/start", {"manifest": manifest})
            assert info["state"] == "DEPENDENCIES_REQUIRED"
            assert info["dependencies"][0]["name"] == "cowork-fake-node"
            assert info["dependencies"][0]["installHint"]
            await wait_state(client, info["installId"], "DEPENDENCIES_REQUIRED")
            states = [p["state"] for m, p in client.notifications if m == "mcp/install"]
            assert states == ["FETCHING_MANIFEST", "CHECKING_DEPENDENCIES", "DEPENDENCIES_REQUIRED"]
            with pytest.raises(RpcError) as bad:
                await client.call("mcp/install/start", {"manifest": {"name": "x"}, "manifestPath": "/nope"})
            assert bad.value.code == "invalid_params"
        finally:
            await client.close()

    server.start()
    try:
        client = await EventClient.connect(server.address)
        try:
            listed = await client.call("mcp/install/list")
            assert [(i["installId"], i["state"]) for i in listed["installs"]] == [
                (info["installId"], "DEPENDENCIES_REQUIRED")
            ]
            fake_program(bin_dir, "cowork-fake-node", "22.0.0")
            form = await client.call("mcp/install/continue", {"installId": info["installId"]})
            assert form["state"] == "CONFIGURATION_REQUIRED"
            assert form["form"]["properties"]["apiKey"]["x-secret"] is True
            with pytest.raises(RpcError) as invalid:
                await client.call("mcp/install/continue", {"installId": info["installId"], "values": {"region": "eu"}})
            assert invalid.value.code == "invalid_params" and "apiKey" in invalid.value.message
            done = await client.call(
                "mcp/install/continue",
                {"installId": info["installId"], "values": {"apiKey": "sk-0123456789", "region": "us"}},
            )
            assert done["state"] == "COMPLETED", done
            assert done["tools"]
            servers = await client.call("mcp/list")
            assert "wired" in [s["name"] for s in servers["servers"]]
            with pytest.raises(RpcError) as unknown:
                await client.call("mcp/install/get", {"installId": "inst_missing"})
            assert unknown.value.code == "mcp_install_not_found"
        finally:
            await client.close()
    finally:
        server.stop()
    database = tmp_path / "home" / "cowork.db"
    assert not database.exists() or b"sk-0123456789" not in database.read_bytes()  # free pages included
    assert "sk-0123456789" not in store_text(tmp_path / "home")

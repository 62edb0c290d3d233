"""`health` over the wire (reasons included) and `/healthz` (statuses only: it answers without a token)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cowork.testing.client import EventClient
from cowork.testing.server import ServerProcess

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

FAILING_MCP = {
    "mcpServers": {
        "broken": {"command": sys.executable, "args": ["-c", "import sys; sys.exit('no database at /srv/db')"]}
    }
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("health")
    (root / "ws").mkdir()
    (root / "home").mkdir()
    (root / "home" / "mcp-servers.json").write_text(json.dumps(FAILING_MCP), encoding="utf-8")
    env = {
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": "http://127.0.0.1:9",
        "COWORK_TOOLS__SANDBOX__BWRAP_PATH": str(root / "no-such-bwrap"),
    }
    with ServerProcess(root / "home", root / "ws", env=env) as proc:
        yield proc


async def degraded_health(client: EventClient) -> dict[str, object]:
    """`health` once the failing MCP server has failed (it starts in the background)."""
    for _ in range(200):
        result: dict[str, object] = await client.call("health")
        if "no database" in json.dumps(result):
            return result
        await asyncio.sleep(0.05)
    raise AssertionError(f"the MCP server never failed: {result}")


async def test_health_names_each_degraded_subsystem_and_why(server: ServerProcess) -> None:
    client = await EventClient.connect(server.address)
    try:
        result = await degraded_health(client)
    finally:
        await client.close()
    assert result["status"] == "degraded"
    subsystems = {s["name"]: s for s in result["subsystems"]}  # type: ignore[attr-defined]
    assert list(subsystems) == [
        "store",
        "providers",
        "mcp",
        "sandbox",
        "checkpoints",
        "tracing",
        "toolbox",
        "embedder",
        "capture",
        "scheduler",
    ]
    assert subsystems["store"] == {"name": "store", "status": "ready"}  # (no reason when ready)
    assert subsystems["providers"] == {"name": "providers", "status": "ready"}  # (no reason when ready)
    mcp = subsystems["mcp"]
    assert mcp["status"] == "degraded" and mcp["reason"].startswith("broken (error): ")
    assert "no database at /srv/db" in mcp["reason"]
    sandbox = subsystems["sandbox"]
    assert sandbox["status"] == "degraded" and "bubblewrap (bwrap) was not found" in sandbox["reason"]
    assert subsystems["embedder"] == {
        "name": "embedder",
        "status": "ready",
        "reason": "all-MiniLM-L6-v2 on this machine (loads with the first search or indexing job).",
    }


async def test_healthz_has_the_statuses_without_the_reasons(server: ServerProcess, tmp_path: Path) -> None:
    client = await EventClient.connect(server.address)
    try:
        await degraded_health(client)
    finally:
        await client.close()
    async with httpx.AsyncClient(base_url=server.address.url) as http:  # no token: anyone on the machine
        body = (await http.get("/healthz")).json()
    assert body["status"] == "ok" and body["pid"] == server.pid and isinstance(body["idle"], bool)
    assert body["subsystems"] == {
        "store": "ready",
        "providers": "ready",
        "mcp": "degraded",
        "sandbox": "degraded",
        "checkpoints": body["subsystems"]["checkpoints"],  # git on this machine or not
        "tracing": "ready",
        "toolbox": body["subsystems"]["toolbox"],  # not installed, or being installed in the background
        "embedder": "ready",
        "capture": "disabled",  # no display in the tests' environment
        "scheduler": "ready",
    }
    text = json.dumps(body)
    assert "no database" not in text and "broken" not in text and "bwrap" not in text

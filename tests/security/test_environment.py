"""A real server full of secrets: neither a shell command nor a stdio MCP server the model drives ever sees them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from cowork.protocol import ToolResult
from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall
from cowork.testing.server import ServerProcess, provider_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SECRETS = {
    "OPENAI_API_KEY": "sk-proj-cowork-test-openai-secret",
    "AWS_ACCESS_KEY_ID": "AKIACOWORKTESTSECRET",
    "AWS_SECRET_ACCESS_KEY": "cowork-test-aws-secret-access-key",
    "DATABASE_URL": "postgres://u:cowork-test-db-secret@h/db",
    "GITHUB_TOKEN": "ghp_coworktestgithubsecret",
    "SERVICE_PASSWORD": "cowork-test-service-password",
    "STRIPE_SK": "sk_live_cowork_test_stripe",
}
"""Variables a user could have exported when starting Cowork: some with secret-looking names, some not."""

ALLOWED = {"COWORK_TEST_VISIBLE": "visible-value"}


def server_for(tmp_path: Path, workspace: Path, mock: MockLLMServer) -> ServerProcess:
    env = (
        provider_env("openai", mock.openai_base_url)
        | SECRETS
        | ALLOWED
        | {
            "COWORK_TOOLS__ENVIRONMENT__ALLOW": json.dumps(["COWORK_TEST_VIS*"]),
            "COWORK_TOOLS__ENVIRONMENT__SET": json.dumps({"COWORK_TEST_SET": "set-value"}),
            "COWORK_MCP__CONNECT_TIMEOUT_SECONDS": "15",
        }
    )
    return ServerProcess(tmp_path / "home", workspace, env=env)


async def all_events(client: EventClient, session_id: str) -> list[dict[str, Any]]:
    page = await client.call("events/replay", {"sessionId": session_id, "afterSeq": 0, "limit": 10_000})
    assert not page["hasMore"]
    events: list[dict[str, Any]] = page["events"]
    return events


async def run_turn(client: EventClient, session_id: str, text: str) -> str:
    """Run one turn (no tool here asks for approval) and return the content of its one tool result."""
    client.events.clear()
    started = await client.call("turn/start", {"sessionId": session_id, "text": text, "clientMessageId": text})
    assert await client.wait_turn_end(started["operationId"], within=60) == "done"
    (result,) = [e.payload for e in client.events if isinstance(e.payload, ToolResult)]
    assert not result.is_error, result.content
    return result.content


def variables(content: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in content.splitlines() if "=" in line)


async def test_commands_and_mcp_servers_never_see_the_servers_secrets(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="bash", arguments={"command": "env"})]),
            MockResponse(text="listed"),
            MockResponse(tool_calls=[MockToolCall(name="mcp__probe__environ", arguments={})]),
            MockResponse(text="listed again"),
        ]
    )
    with server_for(tmp_path, workspace, mock_llm) as server:
        client = await EventClient.connect(server.address)
        try:
            await client.call(
                "mcp/add",
                {
                    "name": "probe",
                    "transport": "stdio",
                    "command": sys.executable,
                    "args": ["-m", "cowork.testing.mcp_servers", "normal"],
                    "env": {"PROBE_OWN": "own-value"},
                    "policy": "auto-run",
                },
            )
            await client.wait_mcp_server("probe")  # its tools exist only once it runs
            sid = (await client.call("session/create", {}))["id"]
            await client.call("session/subscribe", {"sessionId": sid})

            shell = variables(await run_turn(client, sid, "list the environment"))
            assert shell["COWORK_TEST_VISIBLE"] == "visible-value" and shell["COWORK_TEST_SET"] == "set-value"
            assert "PATH" in shell and "HOME" in shell
            assert not set(SECRETS) & set(shell)

            mcp = variables(await run_turn(client, sid, "list the MCP server's environment"))
            assert mcp["PROBE_OWN"] == "own-value"  # its own configured env still reaches it
            assert mcp["COWORK_TEST_VISIBLE"] == "visible-value" and mcp["COWORK_TEST_SET"] == "set-value"
            assert not set(SECRETS) & set(mcp)
            assert "COWORK_HOME" not in mcp and "COWORK_TOOLS__ENVIRONMENT__ALLOW" not in mcp

            # Nowhere in the session's log, nor in anything the model was sent.
            log = json.dumps(await all_events(client, sid))
            sent = json.dumps([request.messages for request in mock_llm.requests])
            for value in SECRETS.values():
                assert value not in log and value not in sent
            assert "visible-value" in log
        finally:
            await client.close()

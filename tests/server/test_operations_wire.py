"""The operations methods over a real WebSocket: ask/respond, turn/steer, agent/list|wait|cancel, operation/get."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cowork.clients.connection import RpcError
from cowork.testing.client import EventClient
from cowork.testing.core import TEST_TOOLS_PLUGIN
from cowork.testing.mockllm import MockLLMServer, MockRequest, MockResponse, MockToolCall
from cowork.testing.server import ServerProcess, provider_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def of_type(client: EventClient, kind: str) -> list[object]:
    return [e.payload for e in client.events if e.type == kind]


async def test_question_steer_and_sub_agents_over_the_wire(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    def script(request: MockRequest) -> MockResponse:
        if "working for another agent" in (request.system or ""):
            return MockResponse(tool_calls=[MockToolCall(name="child_sleep", arguments={"seconds": 30})])
        tools_done = [m for m in request.messages if m["role"] == "tool"]
        if not tools_done:
            return MockResponse(
                tool_calls=[MockToolCall(name="ask", arguments={"question": "Go deep?", "options": ["yes", "no"]})]
            )
        if len(tools_done) == 1:
            return MockResponse(
                tool_calls=[MockToolCall(name="spawnAgent", arguments={"agentType": "explore", "task": "dig"})]
            )
        users = [m["content"] for m in request.messages if m["role"] == "user"]
        return MockResponse(
            text=f"answer={tools_done[0]['content']} agent={tools_done[1]['content'][:40]} last={users[-1]}"
        )

    mock_llm.set_script(script)
    env = provider_env("openai", mock_llm.openai_base_url) | {"COWORK_TOOLS__PLUGINS": json.dumps([TEST_TOOLS_PLUGIN])}
    with ServerProcess(tmp_path / "home", workspace, env=env) as server:
        client = await EventClient.connect(server.address)
        sid = (await client.call("session/create", {}))["id"]
        op = (await client.call("turn/start", {"sessionId": sid, "text": "start", "clientMessageId": "1"}))[
            "operationId"
        ]
        await client.wait_for(lambda evs: any(e.type == "ask" for e in evs))
        (ask,) = of_type(client, "ask")
        answered = await client.call("ask/respond", {"requestId": ask.request_id, "answer": "yes"})  # type: ignore[attr-defined]
        assert answered == {"requestId": ask.request_id, "duplicate": False}  # type: ignore[attr-defined]
        await client.wait_for(lambda evs: any(e.type == "agent_spawned" for e in evs))
        (spawned,) = of_type(client, "agent_spawned")
        child = spawned.child_operation_id  # type: ignore[attr-defined]
        steered = await client.call("turn/steer", {"sessionId": sid, "text": "and be quick", "clientMessageId": "s"})
        assert steered == {"operationId": op, "duplicate": False}

        listed = await client.call("agent/list", {"sessionId": sid})
        assert [a["id"] for a in listed["agents"]] == [child] and listed["agents"][0]["parentOperationId"] == op
        waited = await client.call("agent/wait", {"operationId": child, "timeoutSeconds": 0.2})
        assert waited["status"] == "running"
        assert await client.call("agent/cancel", {"operationId": child}) == {"cancelled": True}
        assert await client.wait_turn_end(op) == "done"
        final = await client.call("operation/get", {"operationId": op})
        assert final["summary"].startswith("answer=yes agent=Error: The sub-agent was cancelled")
        assert final["summary"].endswith("last=and be quick")
        assert [c["name"] for c in final["toolCalls"]] == ["ask", "spawnAgent"]
        assert (await client.call("agent/wait", {"operationId": child}))["status"] == "cancelled"
        with pytest.raises(RpcError) as info:
            await client.call("agent/cancel", {"operationId": op})  # not a sub-agent
        assert info.value.code == "operation_not_found"
        with pytest.raises(RpcError) as info:
            await client.call("operation/resume", {"operationId": op})
        assert info.value.code == "not_resumable"
        with pytest.raises(RpcError) as info:
            await client.call("ask/respond", {"requestId": ask.request_id, "answer": "no"})  # type: ignore[attr-defined]
        assert info.value.code == "already_resolved"
        await client.close()

"""Approvals end to end over the WebSocket with the real bash tool, policy settings and session switches."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import pytest

from cowork.clients.connection import RpcError
from cowork.protocol import ApprovalRequested, EventPayload, ToolCall, ToolResult
from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall
from cowork.testing.server import ServerProcess, provider_env
from cowork.testing.transcripts import payloads as of_kind

P = TypeVar("P", bound=EventPayload)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def batch(*commands: str) -> MockResponse:
    return MockResponse(tool_calls=[MockToolCall(name="bash", arguments={"command": c}) for c in commands])


def payloads(client: EventClient, kind: type[P]) -> list[P]:
    return of_kind(client.events, kind)


@pytest.mark.parametrize("approve", [True, False])
async def test_safe_runs_at_once_risky_waits(
    approve: bool, tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([batch("ls docs", "touch created.txt && echo made"), MockResponse(text="done")])
    with ServerProcess(tmp_path / "home", workspace, env=provider_env("openai", mock_llm.openai_base_url)) as server:
        client = await EventClient.connect(server.address)
        sid = (await client.call("session/create", {}))["id"]
        op = (await client.call("turn/start", {"sessionId": sid, "text": "go", "clientMessageId": "1"}))["operationId"]
        await client.wait_for(lambda evs: any(e.type == "approval_requested" for e in evs))
        await client.wait_for(lambda evs: any(e.type == "tool_result" for e in evs))
        (result,) = payloads(client, ToolResult)
        assert result.content == "notes.md" and not (workspace / "created.txt").exists()
        (request,) = payloads(client, ApprovalRequested)
        assert request.name == "bash" and request.arguments == {"command": "touch created.txt && echo made"}
        assert request.dangerous is False  # an ordinary write: asked, not flagged
        calls = {p.name + str(p.arguments): p for p in payloads(client, ToolCall)}
        assert [c.needs_approval for c in calls.values()] == [False, True]
        await client.call(
            "approval/respond", {"requestId": request.request_id, "approved": approve, "message": "not now"}
        )
        assert await client.wait_turn_end(op) == "done"
        results = {r["tool_call_id"]: r["content"] for r in mock_llm.requests[1].last_tool_results}
        if approve:
            assert (workspace / "created.txt").exists() and "made" in results.values()
        else:
            assert not (workspace / "created.txt").exists()
            assert any("rejected" in v and "not now" in v for v in results.values())
        await client.close()


async def test_dangerous_commands_ask_even_when_always_allowed(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([batch("rm -rf docs"), MockResponse(text="ok")])
    env = provider_env("openai", mock_llm.openai_base_url) | {"COWORK_TOOLS__APPROVAL_MODE": "auto-run"}
    with ServerProcess(tmp_path / "home", workspace, env=env) as server:
        client = await EventClient.connect(server.address)
        tools = await client.call("tool/list", {})
        assert len(tools["tools"]) == 19
        assert await client.call("tool/setPolicy", {"name": "bash", "policy": "never"}) == {
            "name": "bash",
            "summary": "Run a shell command (bash) in the workspace and return its output.",
            "sideEffects": True,
            "policy": "never",
        }
        with pytest.raises(RpcError) as info:
            await client.call("tool/setPolicy", {"name": "nope", "policy": "never"})
        assert info.value.code == "tool_not_found"
        sid = (await client.call("session/create", {}))["id"]
        op = (await client.call("turn/start", {"sessionId": sid, "text": "clean", "clientMessageId": "1"}))[
            "operationId"
        ]
        await client.wait_for(lambda evs: any(e.type == "approval_requested" for e in evs))
        (request,) = payloads(client, ApprovalRequested)
        assert request.reason.startswith("Dangerous command")
        assert request.dangerous is True
        pending = (await client.call("session/subscribe", {"sessionId": sid}))["pending"]["approvals"]
        assert [a["dangerous"] for a in pending] == [True]  # and it stays flagged for clients that join later
        assert (workspace / "docs").exists()
        await client.call("turn/cancel", {"sessionId": sid})
        assert await client.wait_turn_end(op) == "cancelled"
        await client.close()
    # The override survives a restart.
    with ServerProcess(tmp_path / "home", workspace, env=env) as server:
        client = await EventClient.connect(server.address)
        assert {t["name"]: t["policy"] for t in (await client.call("tool/list", {}))["tools"]}["bash"] == "never"
        await client.close()


async def test_session_switches(tmp_path: Path, workspace: Path, mock_llm: MockLLMServer) -> None:
    with ServerProcess(tmp_path / "home", workspace, env=provider_env("openai", mock_llm.openai_base_url)) as server:
        client = await EventClient.connect(server.address)
        init = await client.call("initialize", {})
        assert init["capabilities"]["sandbox"] is True and "sandboxNote" not in init["capabilities"]
        session = await client.call("session/create", {})
        assert (session["network"], session["yolo"]) == (False, False)
        updated = await client.call("session/update", {"sessionId": session["id"], "network": True, "title": "net"})
        assert (updated["network"], updated["title"]) == (True, "net")
        yolo = await client.call("session/update", {"sessionId": session["id"], "yolo": True})
        assert yolo["yolo"] and yolo["network"]
        replay = await client.call("events/replay", {"sessionId": session["id"]})
        assert [e["payload"] for e in replay["events"]] == [{"title": "net", "network": True}, {"yolo": True}]
        with pytest.raises(RpcError) as info:
            await client.call("session/update", {"sessionId": session["id"], "network": "maybe"})
        assert info.value.code == "invalid_params"
        await client.close()


async def test_plan_mode_refuses_changes_until_the_plan_is_approved(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    write = MockToolCall(name="write", arguments={"filePath": "plan.md", "content": "step 1\n"})
    mock_llm.set_script(
        [
            MockResponse(
                tool_calls=[
                    write,
                    MockToolCall(name="bash", arguments={"command": "ls", "description": "look"}),
                    MockToolCall(name="bash", arguments={"command": "touch made.txt", "description": "make"}),
                ]
            ),
            MockResponse(text="Here is the plan: write plan.md. Approve?"),
            MockResponse(tool_calls=[write]),
            MockResponse(text="Done."),
        ]
    )
    with ServerProcess(tmp_path / "home", workspace, env=provider_env("openai", mock_llm.openai_base_url)) as server:
        client = await EventClient.connect(server.address)
        sid = (await client.call("session/create", {}))["id"]
        on = await client.call("session/update", {"sessionId": sid, "planMode": True})
        assert on["planMode"] is True
        op = await client.call("turn/start", {"sessionId": sid, "text": "plan it", "clientMessageId": "1"})
        assert await client.wait_turn_end(op["operationId"]) == "done"
        assert not [e for e in client.events if e.type == "approval_requested"]  # refused, never asked
        results = {r["tool_call_id"]: r for r in mock_llm.requests[1].last_tool_results}
        contents = [r["content"] for r in results.values()]
        assert sum("Plan mode is on" in c for c in contents) == 2  # the write and the touch
        assert not (workspace / "plan.md").exists() and not (workspace / "made.txt").exists()
        assert "# Plan mode" in (mock_llm.requests[0].system or "")

        off = await client.call("session/update", {"sessionId": sid, "planMode": False})
        assert off["planMode"] is False
        log = await client.call("events/replay", {"sessionId": sid, "afterSeq": 0, "limit": 1000})
        switched = [e["payload"]["planMode"] for e in log["events"] if "planMode" in e["payload"]]
        assert switched == [True, False]  # announced to every client watching
        op = await client.call("turn/start", {"sessionId": sid, "text": "approved, go", "clientMessageId": "2"})
        await client.wait_for(lambda evs: any(e.type == "approval_requested" for e in evs))  # asks as usual again
        (request,) = of_kind(client.events, ApprovalRequested)
        await client.call("approval/respond", {"requestId": request.request_id, "approved": True})
        assert await client.wait_turn_end(op["operationId"]) == "done"
        assert (workspace / "plan.md").read_text(encoding="utf-8") == "step 1\n"
        assert "# Plan mode" not in (mock_llm.requests[-1].system or "")
        await client.close()

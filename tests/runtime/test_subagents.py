"""Sub-agents: their own history and narrower tools, the parent gets only the report, limits, and control."""

from __future__ import annotations

import pytest

from cowork.protocol import (
    AgentListParams,
    AgentSpawned,
    ApprovalRespondParams,
    OperationStatus,
    OperationStatusChanged,
    ToolCall,
)
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockRequest, MockResponse, MockToolCall
from cowork.testing.transcripts import payloads

pytestmark = pytest.mark.anyio
S = OperationStatus


def spawn(agent_type: str, task: str, **extra: object) -> MockToolCall:
    return MockToolCall(name="spawnAgent", arguments={"agentType": agent_type, "task": task, **extra})


def is_child(request: MockRequest) -> bool:
    return "working for another agent" in (request.system or "") or "sub-agent handling one task" in (
        request.system or ""
    )


async def test_explore_agent_reports_back_without_its_context(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    def script(request: MockRequest) -> MockResponse:
        if is_child(request):
            if not request.last_tool_results:
                return MockResponse(tool_calls=[MockToolCall(name="peek", arguments={"label": "SECRET-INTERMEDIATE"})])
            return MockResponse(text="REPORT: main is in src/app.py")
        if not request.last_tool_results:
            return MockResponse(tool_calls=[spawn("explore", "Find where main is defined.")])
        return MockResponse(text="It is in src/app.py.")

    mock_llm.set_script(script)
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "where is main?")
    await harness.status(sid, op, S.DONE)

    children = [r for r in mock_llm.requests if is_child(r)]
    assert children[0].messages[0]["content"] == "Find where main is defined."
    assert "codebase explorer" in (children[0].system or "")
    assert set(children[0].tools) == {
        "glob",
        "grep",
        "read",
        "searchDocuments",
        "recall",
        "peek",
        "fail",
        "child_sleep",
    }  # read-only
    parent_final = mock_llm.requests[-1]
    assert parent_final.last_tool_results[0]["content"] == "REPORT: main is in src/app.py"
    assert "SECRET-INTERMEDIATE" not in str(parent_final.body)  # the child's raw context never enters the parent

    (spawned,) = harness.payloads(sid, AgentSpawned)
    assert spawned.operation_id == op and spawned.agent_type == "explore"
    child_id = spawned.child_operation_id
    child_statuses = [p for p in harness.payloads(sid, OperationStatusChanged) if p.operation_id == child_id]
    assert [s.status for s in child_statuses] == [S.RUNNING, S.DONE]
    assert all(s.parent_operation_id == op for s in child_statuses)
    (listed,) = await core.runtime.agents.list(AgentListParams(operation_id=op))
    assert (
        listed.id == child_id and listed.summary == "REPORT: main is in src/app.py" and listed.agent_type == "explore"
    )
    assert [a.id for a in await core.runtime.agents.list(AgentListParams(session_id=sid))] == [child_id]


async def test_general_and_research_tool_sets_and_another_model(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    def script(request: MockRequest) -> MockResponse:
        if is_child(request):
            return MockResponse(text=f"done with {request.messages[0]['content']}")
        if not request.last_tool_results:
            return MockResponse(
                tool_calls=[
                    spawn("general", "task G"),
                    spawn("research", "task R", model="anthropic:claude-research"),
                ]
            )
        return MockResponse(text="all done")

    mock_llm.set_script(script)
    core = await harness.core(env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": harness.anthropic_base_url})
    sid = await harness.session(core)
    op = await harness.start(core, sid, "split it")
    await harness.status(sid, op, S.DONE)
    by_task = {r.messages[0]["content"]: r for r in mock_llm.requests if is_child(r)}
    general, research = by_task["task G"], by_task["task R"]
    assert "spawnAgent" not in general.tools and "ask" not in general.tools and "todoWrite" not in general.tools
    assert {"mark", "sleep", "glob"} <= set(general.tools)
    assert research.tools == ["read", "webSearch", "webFetch"]
    assert research.format == "anthropic" and research.model == "claude-research"
    assert sorted(r["content"] for r in mock_llm.requests[-1].last_tool_results) == [
        "done with task G",
        "done with task R",
    ]


async def test_limits_on_depth_and_concurrency(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script(lambda r: MockResponse(text="no tools"))
    core = await harness.core(env={"COWORK_AGENT__MAX_AGENT_DEPTH": "0"})
    sid = await harness.session(core)
    op = await harness.start(core, sid, "hi")
    await harness.status(sid, op, S.DONE)
    assert "spawnAgent" not in mock_llm.requests[0].tools

    def script(request: MockRequest) -> MockResponse:
        if is_child(request):
            return (
                MockResponse(tool_calls=[MockToolCall(name="child_sleep", arguments={"seconds": 0.5})])
                if not request.last_tool_results
                else MockResponse(text="child done")
            )
        if not request.last_tool_results:
            return MockResponse(tool_calls=[spawn("explore", "one"), spawn("explore", "two")])
        return MockResponse(text="parent done")

    mock_llm.reset()
    mock_llm.set_script(script)
    core = await harness.core(env={"COWORK_AGENT__MAX_CONCURRENT_AGENTS": "1"})
    sid = await harness.session(core)
    op = await harness.start(core, sid, "two at once")
    await harness.status(sid, op, S.DONE)
    results = [r["content"] for r in mock_llm.requests[-1].last_tool_results]
    assert "child done" in results
    assert any("1 sub-agents are already running" in r for r in results)


async def test_wait_cancel_and_a_child_needing_approval(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    def script(request: MockRequest) -> MockResponse:
        if is_child(request):
            if not request.last_tool_results:
                return MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": "child"})])
            return MockResponse(text="child finished after approval")
        if not request.last_tool_results:
            return MockResponse(tool_calls=[spawn("general", "needs approval")])
        return MockResponse(text=f"parent got: {request.last_tool_results[0]['content']}")

    mock_llm.set_script(script)
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "delegate")
    await harness.until(sid, lambda events: any(e.type == "approval_requested" for e in events))
    (spawned,) = harness.payloads(sid, AgentSpawned)
    child = spawned.child_operation_id
    (approval,) = (await core.runtime.pending(sid)).approvals
    assert approval.operation_id == child
    waiting = await core.runtime.agents.wait(child, 0.1)
    assert waiting.status == S.WAITING_FOR_HUMAN and waiting.pending.approvals[0].request_id == approval.request_id
    await core.runtime.respond_approval(ApprovalRespondParams(request_id=approval.request_id, approved=True))
    finished = await core.runtime.agents.wait(child, 10)
    assert finished.status == S.DONE and finished.summary == "child finished after approval"
    await harness.status(sid, op, S.DONE)
    assert mock_llm.requests[-1].last_tool_results[0]["content"] == "child finished after approval"

    # Cancelling a running child: the parent goes on, told that the sub-agent was cancelled.
    mock_llm.reset()

    def slow(request: MockRequest) -> MockResponse:
        if is_child(request):
            return MockResponse(tool_calls=[MockToolCall(name="child_sleep", arguments={"seconds": 30})])
        if not request.last_tool_results:
            return MockResponse(tool_calls=[spawn("explore", "slow")])
        return MockResponse(text=f"parent got: {request.last_tool_results[0]['content']}")

    mock_llm.set_script(slow)
    op2 = await harness.start(core, sid, "again")
    await harness.until(sid, lambda events: len([e for e in events if e.type == "agent_spawned"]) == 2)
    child2 = harness.payloads(sid, AgentSpawned)[-1].child_operation_id
    # Cancel once the child is at work (its tool call is on record), not before it started.
    await harness.until(
        sid, lambda events: any(c.operation_id == child2 for c in payloads(events, ToolCall) if c.name == "child_sleep")
    )
    assert await core.runtime.agents.cancel(child2)
    await harness.status(sid, op2, S.DONE)
    assert "cancelled" in mock_llm.requests[-1].last_tool_results[0]["content"]
    assert (await core.runtime.operation_info(child2)).status == S.CANCELLED

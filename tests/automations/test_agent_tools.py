"""The agent and automations: a flow called as a tool in a turn, and an automation the agent proposes, created only
once the user approves it (even with approvals off)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowork.automations import parse_definition
from cowork.core import Core
from cowork.protocol import ApprovalRequested, ApprovalRespondParams, OperationStatus, SessionUpdateParams
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio

HELLO = """
name: hello
description: Write a greeting into hello.txt.
inputs:
  who: {type: string, description: Whom to greet}
steps:
  - id: greet
    type: toolCall
    tool: write
    arguments: {filePath: hello.txt, content: "hello ${input.who}"}
  - id: look
    type: toolCall
    tool: read
    arguments: {filePath: hello.txt}
    directOutput: true
"""

PROPOSED = {
    "name": "monday-report",
    "description": "Summarise the folder every Monday",
    "trigger": {"type": "cron", "expression": "0 9 * * 1", "timezone": "Europe/Paris"},
    "steps": [{"id": "sum", "type": "agentStep", "prompt": "Summarise what changed this week."}],
}


async def approval(harness: CoreHarness, session: str, operation: str) -> ApprovalRequested:
    await harness.status(session, operation, OperationStatus.WAITING_FOR_HUMAN)
    [request] = [e.payload for e in harness.events[session] if isinstance(e.payload, ApprovalRequested)][-1:]
    return request


async def answer(core: Core, request: ApprovalRequested, approved: bool) -> None:
    await core.runtime.respond_approval(ApprovalRespondParams(request_id=request.request_id, approved=approved))


async def test_the_agent_calls_a_flow_as_a_tool(harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path) -> None:
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="flow_hello", arguments={"who": "Bob"})]),
            MockResponse(text="Done: greeted Bob."),
        ]
    )
    core = await harness.core()
    await core.automations.create(parse_definition(None, HELLO))
    session = await harness.session(core)
    operation = await harness.start(core, session, "Greet Bob with the hello automation.")
    request = await approval(harness, session, operation)
    assert request.name == "flow_hello" and request.arguments == {"who": "Bob"}
    await answer(core, request, True)
    await harness.status(session, operation, OperationStatus.DONE)
    assert (workspace / "hello.txt").read_text() == "hello Bob"
    first, second = mock_llm.requests
    assert "flow_hello" in first.tools
    [spec] = [t["function"] for t in first.body["tools"] if t["function"]["name"] == "flow_hello"]
    assert spec["parameters"]["required"] == ["who"] and "Write a greeting" in spec["description"]
    result = second.last_tool_results[0]["content"]
    assert "Automation hello finished" in result and "<untrusted_content" in result and "hello Bob" in result
    [run] = await core.automations.runs("hello")
    assert run.trigger == {"type": "tool", "sessionId": session} and run.status == "done"


async def test_a_disabled_flow_is_not_a_tool_and_bad_arguments_fail_without_asking(harness: CoreHarness) -> None:
    core = await harness.core()
    await core.automations.create(parse_definition(None, HELLO))
    tool = core.tools.get("flow_hello")
    assert tool is not None
    with pytest.raises(Exception, match="input 'who' is required"):
        tool.parse({})
    await core.automations.set_enabled("hello", False)
    assert core.tools.get("flow_hello") is None
    await core.automations.set_enabled("hello", True)
    assert core.tools.get("flow_hello") is not None
    await core.automations.delete("hello")
    assert core.tools.get("flow_hello") is None


@pytest.mark.parametrize("approved", [True, False])
async def test_an_automation_the_agent_proposes_is_created_only_after_approval(
    harness: CoreHarness, mock_llm: MockLLMServer, approved: bool
) -> None:
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="proposeAutomation", arguments={"flow": PROPOSED})]),
            MockResponse(text="ok"),
        ]
    )
    core = await harness.core()
    session = await harness.session(core)
    # Approvals off for the session: creating an automation still asks.
    await core.settings.update(SessionUpdateParams(session_id=session, yolo=True))  # --yolo
    operation = await harness.start(core, session, "Summarise the folder every Monday morning.")
    request = await approval(harness, session, operation)
    assert request.name == "proposeAutomation" and request.arguments["flow"]["name"] == "monday-report"
    # The approval shows the whole flow, as the file it would be.
    assert request.preview is not None and "+++ automation monday-report (enabled)" in request.preview
    assert "+  prompt: Summarise what changed this week." in request.preview
    assert await core.automations.list_all() == []
    await answer(core, request, approved)
    await harness.status(session, operation, OperationStatus.DONE)
    listed = await core.automations.list_all()
    if approved:
        [info] = listed
        assert info.name == "monday-report" and info.enabled and info.next_run_at is not None
        assert "Created automation monday-report" in mock_llm.requests[1].last_tool_results[0]["content"]
    else:
        assert listed == []


async def test_an_invalid_proposal_fails_without_asking(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    bad = {**PROPOSED, "steps": [{"id": "sum", "type": "agentStep"}]}
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="proposeAutomation", arguments={"flow": bad})]),
            MockResponse(text="ok"),
        ]
    )
    core = await harness.core()
    session = await harness.session(core)
    operation = await harness.start(core, session, "Every Monday please.")
    try:
        await harness.status(session, operation, OperationStatus.DONE, within=5)
    except TimeoutError:
        print([(e.type, e.payload) for e in harness.events[session]])
        raise
    assert not [e for e in harness.events[session] if isinstance(e.payload, ApprovalRequested)]
    assert "not valid" in mock_llm.requests[1].last_tool_results[0]["content"]
    assert await core.automations.list_all() == []


async def test_a_plugin_tool_with_a_flows_name_stays_and_the_flow_is_no_tool(harness: CoreHarness) -> None:
    from cowork.automations import FlowTool
    from cowork.tools import builtin_tools

    registry = builtin_tools()
    core = await harness.core(tools=registry)
    plugin = registry.get("read")
    assert plugin is not None
    registry.register(type("Impostor", (type(plugin),), {"name": "flow_hello"})())
    info = await core.automations.create(parse_definition(None, HELLO))  # no crash: a warning, and no flow tool
    assert info.name == "hello"
    tool = core.tools.get("flow_hello")
    assert tool is not None and not isinstance(tool, FlowTool)

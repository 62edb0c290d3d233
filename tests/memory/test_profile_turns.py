"""Working memory in real turns (mock LLM): the profile is in every main agent's prompt; the agent's `profile` call
asks first (it outlives the session), and once approved the next turn's prompt has the change; a rejected call
changes nothing; `memory.working = false` leaves the profile out."""

from __future__ import annotations

import pytest

from cowork.protocol import ApprovalRequested, ApprovalRespondParams, OperationStatus, ToolResult
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockResponse, tool_step

pytestmark = pytest.mark.anyio


async def test_the_agent_keeps_the_profile_and_every_prompt_has_it(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    core = await harness.core()
    await core.working_memory.change({"name": "Ada"}, source="user")
    mock_llm.set_script(
        [
            tool_step("profile", set={"communication_style": "short answers"}, remove=["name"]),
            MockResponse(text="Noted."),
            tool_step("profile", set={"role": "spy"}),
            MockResponse(text="Not noted."),
            MockResponse(text="Hi."),
        ]
    )
    sid = await harness.session(core)
    op = await harness.start(core, sid, "I prefer short answers. And call me nothing.")
    await harness.status(sid, op, OperationStatus.WAITING_FOR_HUMAN)
    assert "- name: Ada" in (mock_llm.requests[0].system or "")
    (asked,) = harness.payloads(sid, ApprovalRequested)
    assert asked.name == "profile"
    await core.runtime.respond_approval(ApprovalRespondParams(request_id=asked.request_id, approved=True))
    await harness.status(sid, op, OperationStatus.DONE)
    result = harness.payloads(sid, ToolResult)[-1]
    assert not result.is_error and "- communication_style: short answers" in result.content

    op = await harness.start(core, sid, "now a second turn")
    await harness.status(sid, op, OperationStatus.WAITING_FOR_HUMAN)
    system = mock_llm.requests[2].system or ""
    assert "- communication_style: short answers" in system and "- name: Ada" not in system
    rejected = harness.payloads(sid, ApprovalRequested)[-1]
    await core.runtime.respond_approval(ApprovalRespondParams(request_id=rejected.request_id, approved=False))
    await harness.status(sid, op, OperationStatus.DONE)
    entries = await core.working_memory.entries()
    assert [(e.key, e.source) for e in entries] == [("communication_style", "agent")]  # the rejected call: nothing


async def test_working_memory_off_leaves_the_profile_out(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    core = await harness.core(env={"COWORK_MEMORY__WORKING": "false"})
    await core.working_memory.change({"name": "Ada"}, source="user")
    mock_llm.set_script([MockResponse(text="Hi.")])
    sid = await harness.session(core)
    op = await harness.start(core, sid, "hello")
    await harness.status(sid, op, OperationStatus.DONE)
    assert "Ada" not in (mock_llm.requests[0].system or "")

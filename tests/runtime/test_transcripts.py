"""Whole transcripts of the main runtime scenarios: every event of the session, in order, with its key fields.

Each test asserts the entire `(type, key fields)` sequence (see `cowork.testing.transcripts`), so an event added,
dropped or reordered by a change to the runtime fails here, not just the fragment a narrower test looks at.
"""

from __future__ import annotations

import pytest

from cowork.protocol import (
    ApprovalRequested,
    ApprovalRespondParams,
    Ask,
    AskRespondParams,
    OperationStatus,
    TurnSteerParams,
)
from cowork.testing.core import CoreHarness
from cowork.testing.gates import Gate
from cowork.testing.mockllm import MockLLMServer, MockRequest, MockResponse, MockToolCall
from cowork.testing.transcripts import Entry

pytestmark = pytest.mark.anyio
S = OperationStatus
SKIP = ("usage",)
"""Costs and token counts are the usage tests' business; here they would only add noise."""


def call(name: str, **arguments: object) -> MockResponse:
    return MockResponse(tool_calls=[MockToolCall(name=name, arguments=arguments, id=f"call_{name}")])


async def test_a_plain_answer(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([MockResponse(text="Hello there.")])
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "hi")
    await harness.status(sid, op, S.DONE)
    assert harness.transcript(sid, skip=SKIP) == PLAIN


async def test_a_tool_call_that_runs(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([call("peek", label="a"), MockResponse(text="Peeked.")])
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "look")
    await harness.status(sid, op, S.DONE)
    assert harness.transcript(sid, skip=SKIP) == TOOL_RUNS


@pytest.mark.parametrize("approved", [True, False], ids=["approved", "rejected"])
async def test_a_tool_call_that_needs_approval(harness: CoreHarness, mock_llm: MockLLMServer, approved: bool) -> None:
    mock_llm.set_script([call("mark", label="a"), MockResponse(text="Over.")])
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "mark it")
    await harness.status(sid, op, S.WAITING_FOR_HUMAN)
    (request,) = harness.payloads(sid, ApprovalRequested)
    message = None if approved else "not now"
    await core.runtime.respond_approval(
        ApprovalRespondParams(request_id=request.request_id, approved=approved, message=message)
    )
    await harness.status(sid, op, S.DONE)
    assert harness.transcript(sid, skip=SKIP) == (APPROVED if approved else REJECTED)


async def test_cancel_while_the_model_answers(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    gate = Gate()

    async def script(request: MockRequest) -> MockResponse:
        await gate.cross()
        return MockResponse(text="too late")

    mock_llm.set_script(script)
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "think hard")
    await gate.reached()
    assert await core.runtime.cancel(sid, op)
    gate.open()
    await harness.status(sid, op, S.CANCELLED)
    await core.journal.flush()
    assert harness.transcript(sid, skip=SKIP) == CANCELLED


async def test_steering_joins_at_the_next_step(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    gate = Gate()

    async def script(request: MockRequest) -> MockResponse:
        if len(mock_llm.requests) == 1:
            await gate.cross()
            return call("peek", label="a")
        return MockResponse(text=f"Also: {request.last_user_text}")

    mock_llm.set_script(script)
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "work")
    await gate.reached()
    await core.runtime.steer(TurnSteerParams(session_id=sid, text="and the docs", client_message_id="s1"))
    gate.open()
    await harness.status(sid, op, S.DONE)
    assert harness.transcript(sid, skip=SKIP) == STEERED


async def test_a_sub_agent(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    def script(request: MockRequest) -> MockResponse:
        if "sub-agent" in (request.system or "") or "working for another agent" in (request.system or ""):
            return MockResponse(text="REPORT: found it")
        if not request.last_tool_results:
            return call("spawnAgent", agentType="explore", task="Find it.")
        return MockResponse(text="Done.")

    mock_llm.set_script(script)
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "find it")
    await harness.status(sid, op, S.DONE)
    assert harness.transcript(sid, skip=SKIP) == SUB_AGENT


async def test_a_guardrail_pause_then_stop(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script(lambda request: call("peek", label=str(len(mock_llm.requests))))
    core = await harness.core(env={"COWORK_AGENT__MAX_STEPS": "1"})
    sid = await harness.session(core)
    op = await harness.start(core, sid, "loop")
    await harness.status(sid, op, S.WAITING_FOR_HUMAN)
    (question,) = harness.payloads(sid, Ask)
    await core.runtime.respond_ask(AskRespondParams(request_id=question.request_id, answer="stop"))
    await harness.status(sid, op, S.CANCELLED)
    assert harness.transcript(sid, skip=SKIP) == GUARDRAIL


PLAIN: list[Entry] = [
    ("user_message", {"operation_id": "op1", "text": "hi"}),
    ("session_updated", {"title": "hi"}),
    ("operation_status", {"operation_id": "op1", "status": "running"}),
    ("model_stream_chunk", {"operation_id": "op1", "step": 1, "text": "Hello there."}),
    ("assistant_message", {"operation_id": "op1", "step": 1, "text": "Hello there."}),
    ("operation_status", {"operation_id": "op1", "status": "done"}),
]

TOOL_RUNS: list[Entry] = [
    ("user_message", {"operation_id": "op1", "text": "look"}),
    ("session_updated", {"title": "look"}),
    ("operation_status", {"operation_id": "op1", "status": "running"}),
    ("tool_call", {"arguments": {"label": "a"}, "name": "peek", "operation_id": "op1", "step": 1}),
    ("tool_result", {"content": "peeked a", "is_error": False, "name": "peek", "operation_id": "op1", "step": 1}),
    ("model_stream_chunk", {"operation_id": "op1", "step": 2, "text": "Peeked."}),
    ("assistant_message", {"operation_id": "op1", "step": 2, "text": "Peeked."}),
    ("operation_status", {"operation_id": "op1", "status": "done"}),
]

APPROVED: list[Entry] = [
    ("user_message", {"operation_id": "op1", "text": "mark it"}),
    ("session_updated", {"title": "mark it"}),
    ("operation_status", {"operation_id": "op1", "status": "running"}),
    (
        "tool_call",
        {
            "arguments": {"label": "a"},
            "name": "mark",
            "needs_approval": True,
            "operation_id": "op1",
            "side_effects": True,
            "step": 1,
        },
    ),
    ("approval_requested", {"arguments": {"label": "a"}, "name": "mark", "operation_id": "op1", "request_id": "req1"}),
    ("operation_status", {"operation_id": "op1", "status": "waiting_for_human"}),
    ("approval_resolved", {"approved": True, "operation_id": "op1", "request_id": "req1"}),
    ("operation_status", {"operation_id": "op1", "status": "running"}),
    ("tool_result", {"content": "marked a", "is_error": False, "name": "mark", "operation_id": "op1", "step": 1}),
    ("model_stream_chunk", {"operation_id": "op1", "step": 2, "text": "Over."}),
    ("assistant_message", {"operation_id": "op1", "step": 2, "text": "Over."}),
    ("operation_status", {"operation_id": "op1", "status": "done"}),
]

REJECTED: list[Entry] = [
    ("user_message", {"operation_id": "op1", "text": "mark it"}),
    ("session_updated", {"title": "mark it"}),
    ("operation_status", {"operation_id": "op1", "status": "running"}),
    (
        "tool_call",
        {
            "arguments": {"label": "a"},
            "name": "mark",
            "needs_approval": True,
            "operation_id": "op1",
            "side_effects": True,
            "step": 1,
        },
    ),
    ("approval_requested", {"arguments": {"label": "a"}, "name": "mark", "operation_id": "op1", "request_id": "req1"}),
    ("operation_status", {"operation_id": "op1", "status": "waiting_for_human"}),
    ("approval_resolved", {"approved": False, "message": "not now", "operation_id": "op1", "request_id": "req1"}),
    (
        "tool_result",
        {
            "content": "Rejected by the user: not now",
            "is_error": True,
            "name": "mark",
            "operation_id": "op1",
            "step": 1,
        },
    ),
    ("operation_status", {"operation_id": "op1", "status": "running"}),
    ("model_stream_chunk", {"operation_id": "op1", "step": 2, "text": "Over."}),
    ("assistant_message", {"operation_id": "op1", "step": 2, "text": "Over."}),
    ("operation_status", {"operation_id": "op1", "status": "done"}),
]

CANCELLED: list[Entry] = [
    ("user_message", {"operation_id": "op1", "text": "think hard"}),
    ("session_updated", {"title": "think hard"}),
    ("operation_status", {"operation_id": "op1", "status": "running"}),
    ("operation_status", {"code": "cancelled", "operation_id": "op1", "status": "cancelled"}),
]

STEERED: list[Entry] = [
    ("user_message", {"operation_id": "op1", "text": "work"}),
    ("session_updated", {"title": "work"}),
    ("operation_status", {"operation_id": "op1", "status": "running"}),
    ("user_message", {"operation_id": "op1", "steer": True, "text": "and the docs"}),
    ("tool_call", {"arguments": {"label": "a"}, "name": "peek", "operation_id": "op1", "step": 1}),
    ("tool_result", {"content": "peeked a", "is_error": False, "name": "peek", "operation_id": "op1", "step": 1}),
    ("model_stream_chunk", {"operation_id": "op1", "step": 2, "text": "Also: and the docs"}),
    ("assistant_message", {"operation_id": "op1", "step": 2, "text": "Also: and the docs"}),
    ("operation_status", {"operation_id": "op1", "status": "done"}),
]

SUB_AGENT: list[Entry] = [
    ("user_message", {"operation_id": "op1", "text": "find it"}),
    ("session_updated", {"title": "find it"}),
    ("operation_status", {"operation_id": "op1", "status": "running"}),
    (
        "tool_call",
        {
            "arguments": {"agentType": "explore", "task": "Find it."},
            "name": "spawnAgent",
            "operation_id": "op1",
            "step": 1,
        },
    ),
    (
        "agent_spawned",
        {"agent_type": "explore", "child_operation_id": "op2", "operation_id": "op1", "task": "Find it."},
    ),
    ("operation_status", {"operation_id": "op2", "parent_operation_id": "op1", "status": "running"}),
    ("model_stream_chunk", {"operation_id": "op2", "step": 1, "text": "REPORT: found it"}),
    ("assistant_message", {"operation_id": "op2", "step": 1, "text": "REPORT: found it"}),
    ("operation_status", {"operation_id": "op2", "parent_operation_id": "op1", "status": "done"}),
    (
        "tool_result",
        {"content": "REPORT: found it", "is_error": False, "name": "spawnAgent", "operation_id": "op1", "step": 1},
    ),
    ("model_stream_chunk", {"operation_id": "op1", "step": 2, "text": "Done."}),
    ("assistant_message", {"operation_id": "op1", "step": 2, "text": "Done."}),
    ("operation_status", {"operation_id": "op1", "status": "done"}),
]

GUARDRAIL: list[Entry] = [
    ("user_message", {"operation_id": "op1", "text": "loop"}),
    ("session_updated", {"title": "loop"}),
    ("operation_status", {"operation_id": "op1", "status": "running"}),
    ("tool_call", {"arguments": {"label": "1"}, "name": "peek", "operation_id": "op1", "step": 1}),
    ("tool_result", {"content": "peeked 1", "is_error": False, "name": "peek", "operation_id": "op1", "step": 1}),
    ("guardrail", {"code": "max_steps", "operation_id": "op1", "request_id": "req1"}),
    (
        "ask",
        {
            "kind": "guardrail",
            "operation_id": "op1",
            "options": ["continue", "stop"],
            "question": "I have taken 1 steps on this without finishing. Keep going?",
            "request_id": "req1",
        },
    ),
    ("operation_status", {"code": "max_steps", "operation_id": "op1", "status": "waiting_for_human"}),
    ("ask_resolved", {"answer": "stop", "operation_id": "op1", "request_id": "req1"}),
    ("operation_status", {"code": "cancelled", "operation_id": "op1", "status": "cancelled"}),
]

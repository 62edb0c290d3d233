"""One test per guardrail: each is a status change plus an event with a reason code, never a silent stop."""

from __future__ import annotations

import itertools

import pytest

from cowork.protocol import (
    AskRespondParams,
    ErrorCode,
    Guardrail,
    GuardrailCode,
    OperationStatus,
    ProtocolError,
    ToolResult,
    Usage,
)
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall, MockUsage, tool_step

pytestmark = pytest.mark.anyio
S = OperationStatus


async def guardrail_of(harness: CoreHarness, sid: str, op: str, status: OperationStatus) -> tuple[object, object]:
    changed = await harness.status(sid, op, status)
    (event,) = harness.payloads(sid, Guardrail)
    return changed, event


async def test_max_steps_pauses_and_continue_allows_more(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    counter = itertools.count()
    mock_llm.set_script(
        lambda r: (
            tool_step("peek", label=str(next(counter))) if len(mock_llm.requests) <= 5 else MockResponse(text="done")
        )
    )
    core = await harness.core(env={"COWORK_AGENT__MAX_STEPS": "3"})
    sid = await harness.session(core)
    op = await harness.start(core, sid, "loop")
    changed, event = await guardrail_of(harness, sid, op, S.WAITING_FOR_HUMAN)
    assert changed.code == ErrorCode.MAX_STEPS and event.code == GuardrailCode.MAX_STEPS  # type: ignore[attr-defined]
    assert "3 steps" in event.message and len(mock_llm.requests) == 3  # type: ignore[attr-defined]
    (question,) = (await core.runtime.pending(sid)).questions
    assert question.kind == "guardrail" and question.options == ["continue", "stop"]
    with pytest.raises(ProtocolError) as info:
        await core.runtime.respond_ask(AskRespondParams(request_id=question.request_id, answer="maybe"))
    assert info.value.code == ErrorCode.INVALID_PARAMS
    assert await core.runtime.resume(op) == S.RUNNING  # resume answers the guardrail with "continue"
    await harness.status(sid, op, S.DONE)
    assert len(mock_llm.requests) == 6  # five peeks (a pause after three), then the answer


async def test_stuck_pauses_before_the_third_identical_call(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script(lambda r: tool_step("peek", label="same"))
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "spin")
    changed, event = await guardrail_of(harness, sid, op, S.WAITING_FOR_HUMAN)
    assert changed.code == ErrorCode.STUCK and "peek" in event.message  # type: ignore[attr-defined]
    assert len(harness.payloads(sid, ToolResult)) == 2
    (question,) = (await core.runtime.pending(sid)).questions
    await core.runtime.respond_ask(AskRespondParams(request_id=question.request_id, answer="stop"))
    final = await harness.status(sid, op, S.CANCELLED)
    assert "guardrail" in (final.reason or "")


async def test_cost_cap_is_a_hard_pause(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    counter = itertools.count()
    usage = MockUsage(input_tokens=200_000, output_tokens=10_000)  # $0.60 + $0.15 at the prices below
    mock_llm.set_script(
        lambda r: MockResponse(
            tool_calls=[MockToolCall(name="peek", arguments={"label": str(next(counter))})], usage=usage
        )
    )
    env = {
        "COWORK_AGENT__COST_CAP_USD": "1.0",
        "COWORK_PRICES": '{"openai:mock-model": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}}',
        # The budgets (per request $0.50 by default) would refuse first; this is about the runaway guardrail.
        "COWORK_BUDGETS__PER_INTERACTION_USD": "1000",
    }
    core = await harness.core(env=env)
    sid = await harness.session(core)
    op = await harness.start(core, sid, "spend")
    changed, event = await guardrail_of(harness, sid, op, S.WAITING_FOR_HUMAN)
    assert changed.code == ErrorCode.COST_CAP and "$1.50" in event.message  # type: ignore[attr-defined]
    assert len(mock_llm.requests) == 2
    costs = [u.cost_usd for u in harness.payloads(sid, Usage)]
    assert costs == [pytest.approx(0.75), pytest.approx(0.75)]
    info = await core.runtime.operation_info(op)
    assert info.cost_usd == pytest.approx(1.5) and info.usage.input_tokens == 400_000


async def test_checkin_asks_after_the_wall_time(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    counter = itertools.count()
    mock_llm.set_script(
        lambda r: MockResponse(
            tool_calls=[MockToolCall(name="sleep", arguments={"seconds": 0.3, "label": str(next(counter))})]
        )
    )
    core = await harness.core(env={"COWORK_AGENT__CHECKIN_SECONDS": "0.5", "COWORK_TOOLS__AUTO_APPROVE": '["sleep"]'})
    sid = await harness.session(core)
    op = await harness.start(core, sid, "keep at it")
    changed, event = await guardrail_of(harness, sid, op, S.WAITING_FOR_HUMAN)
    assert changed.code == ErrorCode.CHECKIN and "Still want me to keep going" in event.message  # type: ignore[attr-defined]


async def test_error_rate_stops_with_a_summary(harness: CoreHarness, mock_llm: MockLLMServer) -> None:
    counter = itertools.count()
    mock_llm.set_script(lambda r: tool_step("fail", message=f"broken {next(counter)}"))
    core = await harness.core()
    sid = await harness.session(core)
    op = await harness.start(core, sid, "try")
    changed, event = await guardrail_of(harness, sid, op, S.ERROR)
    assert changed.code == ErrorCode.ERROR_RATE  # type: ignore[attr-defined]
    assert "4 of the last 4 tool calls failed" in event.message  # type: ignore[attr-defined]
    assert (await core.runtime.pending(sid)).questions == []  # a stop, not a pause

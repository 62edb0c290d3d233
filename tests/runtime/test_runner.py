"""The runner is pure: these drive it with states and check the instructions it returns."""

from __future__ import annotations

from dataclasses import replace

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart

from cowork.policy import PolicyDecision
from cowork.protocol import GuardrailCode, OperationStatus, ToolCallStatus
from cowork.runtime import LedgerEntry, Limits, OperationState, decide
from cowork.runtime._runner import (
    ApplySteering,
    AskHuman,
    CallLLM,
    CallTool,
    CallToolsBatch,
    CompressContext,
    Finish,
    Pause,
    RecordToolResults,
    RequestHumanApprove,
    Stop,
    Wait,
)
from cowork.runtime._state import InvalidTransition, Steer, transition, transition_call

LIMITS = Limits(
    max_steps=10,
    stuck_repeats=3,
    cost_cap_usd=1.0,
    cost_window_seconds=600,
    checkin_seconds=300,
    error_rate_threshold=0.5,
    error_rate_window=10,
    error_rate_min_calls=4,
    context_window=100_000,
    compress_at=0.8,
    keep_recent=0.3,
)
NOW = 1000.0


def state(*messages: object, **overrides: object) -> OperationState:
    base = OperationState(
        id="op",
        session_id="s",
        thread_id="s",
        origin="chat",
        status=OperationStatus.RUNNING,
        step=0,
        step_limit=LIMITS.max_steps,
        messages=list(messages) or [ModelRequest(parts=[UserPromptPart("hi")])],  # type: ignore[arg-type]
        positions=[0] * max(1, len(messages)),
        next_position=len(messages),
        checkin_at=NOW + 300,
    )
    return replace(base, **overrides)  # type: ignore[arg-type]


def entry(
    call_id: str,
    name: str = "glob",
    *,
    status: ToolCallStatus = ToolCallStatus.REQUESTED,
    side_effects: bool = False,
    **args: object,
) -> LedgerEntry:
    return LedgerEntry(
        tool_call_id=call_id, step=1, name=name, arguments=dict(args), side_effects=side_effects, status=status
    )


def response_with(*entries: LedgerEntry) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(e.name, e.arguments, e.tool_call_id) for e in entries])


def policy(e: LedgerEntry) -> PolicyDecision:
    if e.name == "ask":
        return PolicyDecision("question")
    if e.name == "rm":
        return PolicyDecision("ask", "Dangerous command", "security")
    return PolicyDecision("ask", "side effects", "manual") if e.side_effects else PolicyDecision("run", "read-only")


def run(s: OperationState, now: float = NOW) -> list[object]:
    return list(decide(s, LIMITS, policy, now=now))


def test_new_turn_calls_the_model() -> None:
    assert run(state()) == [CallLLM()]


def test_final_answer_finishes() -> None:
    s = state(ModelRequest(parts=[UserPromptPart("hi")]), ModelResponse(parts=[TextPart("hello")]))
    assert run(s) == [Finish()]


def test_not_running_waits() -> None:
    assert run(state(status=OperationStatus.WAITING_FOR_HUMAN)) == [Wait()]


def test_one_read_only_call_runs() -> None:
    call = entry("a")
    s = state(ModelRequest(parts=[UserPromptPart("hi")]), response_with(call), calls={"a": call})
    assert run(s) == [CallTool("a")]


def test_mixed_batch_runs_the_safe_calls_and_asks_for_the_others() -> None:
    safe, other_safe, risky = entry("a"), entry("b", "grep"), entry("c", "mark", side_effects=True)
    calls = {c.tool_call_id: c for c in (safe, other_safe, risky)}
    s = state(ModelRequest(parts=[UserPromptPart("hi")]), response_with(safe, other_safe, risky), calls=calls)
    assert run(s) == [RequestHumanApprove(("c",), ("side effects",), (False,), (None,)), CallToolsBatch(("a", "b"))]


def test_a_call_the_security_phase_asks_about_is_marked_dangerous() -> None:
    ordinary, destructive = entry("c", "mark", side_effects=True), entry("d", "rm", side_effects=True)
    calls = {"c": ordinary, "d": destructive}
    s = state(ModelRequest(parts=[UserPromptPart("hi")]), response_with(ordinary, destructive), calls=calls)
    assert run(s) == [
        RequestHumanApprove(("c", "d"), ("side effects", "Dangerous command"), (False, True), (None, None))
    ]


def test_the_ask_tool_becomes_a_question() -> None:
    question = entry("q", "ask", question="Which one?")
    s = state(ModelRequest(parts=[UserPromptPart("hi")]), response_with(question), calls={"q": question})
    assert run(s) == [AskHuman("q")]


def test_waits_while_only_approvals_are_open() -> None:
    risky = entry("c", "mark", status=ToolCallStatus.AWAITING_APPROVAL, side_effects=True)
    s = state(ModelRequest(parts=[UserPromptPart("hi")]), response_with(risky), calls={"c": risky})
    assert run(s) == [Wait()]


def test_approved_call_runs_and_rejected_counts_as_resolved() -> None:
    approved = entry("c", "mark", status=ToolCallStatus.APPROVED, side_effects=True)
    rejected = entry("d", "mark", status=ToolCallStatus.REJECTED, side_effects=True)
    s = state(response_with(approved, rejected), calls={"c": approved, "d": rejected})
    assert run(s) == [CallTool("c")]
    approved.status = ToolCallStatus.FINISHED
    assert run(s) == [RecordToolResults()]


def test_interrupted_calls_rerun_only_when_read_only() -> None:
    read = entry("a", status=ToolCallStatus.INTERRUPTED)
    write = entry("b", "mark", status=ToolCallStatus.INTERRUPTED, side_effects=True)
    done = entry("c", "mark", status=ToolCallStatus.FINISHED, side_effects=True)
    s = state(response_with(read, write, done), calls={"a": read, "b": write, "c": done})
    instructions = run(s)
    assert instructions[1] == CallTool("a")
    assert isinstance(instructions[0], RequestHumanApprove) and instructions[0].tool_call_ids == ("b",)
    assert "running when Cowork stopped" in instructions[0].reasons[0]


def test_steering_applies_at_the_next_boundary() -> None:
    steer = [Steer("i1", "also check tests", "c1")]
    after_results = state(ModelRequest(parts=[UserPromptPart("hi")]), steering=steer)
    assert run(after_results) == [ApplySteering()]
    after_answer = state(
        ModelRequest(parts=[UserPromptPart("hi")]), ModelResponse(parts=[TextPart("done")]), steering=steer
    )
    assert run(after_answer) == [ApplySteering()]  # not Finish: the user said more
    call = entry("a")
    mid_tools = state(response_with(call), calls={"a": call}, steering=steer)
    assert run(mid_tools) == [CallTool("a")]  # tools first; steering waits for the boundary


@pytest.mark.parametrize(
    ("overrides", "code"),
    [
        ({"step": 10}, GuardrailCode.MAX_STEPS),
        ({"spend": __import__("collections").deque([(NOW - 10, 0.7), (NOW - 5, 0.4)])}, GuardrailCode.COST_CAP),
        ({"checkin_at": NOW - 1}, GuardrailCode.CHECKIN),
    ],
)
def test_pausing_guardrails(overrides: dict[str, object], code: GuardrailCode) -> None:
    (instruction,) = run(state(**overrides))
    assert isinstance(instruction, Pause) and instruction.code == code


def test_old_spend_outside_the_window_does_not_count() -> None:
    from collections import deque

    assert run(state(spend=deque([(NOW - 3600, 5.0), (NOW - 5, 0.4)]))) == [CallLLM()]


def test_error_rate_stops_with_a_summary() -> None:
    from collections import deque

    (instruction,) = run(state(outcomes=deque([True, True, True, False])))
    assert isinstance(instruction, Stop) and instruction.code == GuardrailCode.ERROR_RATE
    assert "3 of the last 4 tool calls failed" in instruction.message
    assert run(state(outcomes=deque([True, True, False, False]))) == [CallLLM()]  # half is not over half
    assert run(state(outcomes=deque([True, True, True]))) == [CallLLM()]  # too few calls to judge


def test_the_same_call_a_third_time_pauses_as_stuck() -> None:
    call = entry("a", pattern="*.py")
    s = state(response_with(call), calls={"a": call}, signatures=[call.signature, call.signature])
    (instruction,) = run(s)
    assert isinstance(instruction, Pause) and instruction.code == GuardrailCode.STUCK
    different = entry("b", pattern="*.md")
    s = state(response_with(different), calls={"b": different}, signatures=[call.signature, call.signature])
    assert run(s) == [CallTool("b")]


def test_compresses_when_the_history_nears_the_window() -> None:
    big = state(last_input_tokens=90_000)
    assert run(big) == [CompressContext()]
    failed = state(last_input_tokens=90_000, compress_failed_at_step=0)
    assert run(failed) == [CallLLM()]  # no retry in the same step when nothing could be compressed


def test_state_machines_refuse_illegal_transitions() -> None:
    s = state(status=OperationStatus.DONE)
    with pytest.raises(InvalidTransition):
        transition(s, OperationStatus.RUNNING)
    e = entry("a", status=ToolCallStatus.FINISHED)
    with pytest.raises(InvalidTransition):
        transition_call(e, ToolCallStatus.STARTED)
    e = entry("b", status=ToolCallStatus.STARTED)
    transition_call(e, ToolCallStatus.INTERRUPTED)
    transition_call(e, ToolCallStatus.AWAITING_APPROVAL)
    assert e.status == ToolCallStatus.AWAITING_APPROVAL

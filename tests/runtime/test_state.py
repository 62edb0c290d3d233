"""The operation and tool-call state machines: their tables agree with the protocol enums' facts."""

from __future__ import annotations

import pytest
from pydantic_ai.messages import ModelRequest, UserPromptPart

import cowork.machines
from cowork.protocol import OperationStatus, ToolCallStatus
from cowork.runtime import LedgerEntry, OperationState
from cowork.runtime._state import (
    CALL_TRANSITIONS,
    OPERATION_TRANSITIONS,
    RESOLVED_CALLS,
    InvalidTransition,
    transition,
    transition_call,
)

S = OperationStatus
C = ToolCallStatus


def operation(status: OperationStatus) -> OperationState:
    return OperationState(
        id="op_1",
        session_id="s",
        thread_id="s",
        origin="chat",
        status=status,
        step=0,
        step_limit=10,
        messages=[ModelRequest(parts=[UserPromptPart("hi")])],
        positions=[0],
        next_position=1,
        checkin_at=0.0,
    )


def call(status: ToolCallStatus) -> LedgerEntry:
    return LedgerEntry(tool_call_id="call_1", step=1, name="glob", arguments={}, side_effects=False, status=status)


def test_the_operation_machines_final_states_are_the_enums_final_states() -> None:
    assert OPERATION_TRANSITIONS.final == {s for s in OperationStatus if s.is_final}


def test_the_call_machines_final_states_are_the_resolved_statuses() -> None:
    assert CALL_TRANSITIONS.final == {s for s in ToolCallStatus if s.is_resolved}
    assert RESOLVED_CALLS == CALL_TRANSITIONS.final


def test_the_runtime_raises_the_shared_error() -> None:
    assert InvalidTransition is cowork.machines.InvalidTransition
    with pytest.raises(cowork.machines.InvalidTransition, match="operation op_1: illegal transition done -> running"):
        transition(operation(S.DONE), S.RUNNING)
    with pytest.raises(cowork.machines.InvalidTransition, match="tool call call_1: illegal transition finished"):
        transition_call(call(C.FINISHED), C.STARTED)


def test_only_interrupted_or_waiting_operations_run_again() -> None:
    for status in OperationStatus:
        state = operation(status)
        if status in (S.IDLE, S.INTERRUPTED, S.WAITING_FOR_HUMAN):
            transition(state, S.RUNNING)
            assert state.status is S.RUNNING
        elif status is not S.RUNNING:
            with pytest.raises(InvalidTransition):
                transition(state, S.RUNNING)
            assert state.status is status  # a refused change leaves it as it was


def test_setting_the_current_status_again_changes_nothing() -> None:
    for status in OperationStatus:
        state = operation(status)
        transition(state, status)
        assert state.status is status
    for call_status in ToolCallStatus:
        entry = call(call_status)
        transition_call(entry, call_status)
        assert entry.status is call_status


def test_an_interrupted_call_is_asked_about_again_or_closed() -> None:
    entry = call(C.STARTED)
    transition_call(entry, C.INTERRUPTED)
    transition_call(entry, C.AWAITING_APPROVAL)
    assert entry.status is C.AWAITING_APPROVAL
    assert CALL_TRANSITIONS.transitions[C.INTERRUPTED] == {C.AWAITING_APPROVAL, C.STARTED, C.FINISHED, C.CANCELLED}

"""The shared state-machine helper and the final/stopped facts clients read from the protocol enums."""

from __future__ import annotations

from enum import StrEnum

import pytest

from cowork.machines import InvalidTransition, StateMachine
from cowork.protocol import OperationStatus, ToolCallStatus


class _Light(StrEnum):
    GREEN = "green"
    AMBER = "amber"
    RED = "red"
    OFF = "off"


def _lights() -> StateMachine[_Light]:
    return StateMachine(
        "light",
        _Light,
        {
            _Light.GREEN: {_Light.AMBER, _Light.OFF},
            _Light.AMBER: {_Light.RED, _Light.OFF},
            _Light.RED: {_Light.GREEN, _Light.OFF},
            _Light.OFF: set(),
        },
    )


def test_allowed_transitions_pass_and_others_raise() -> None:
    machine = _lights()
    assert machine.check(_Light.GREEN, _Light.AMBER) is _Light.AMBER
    with pytest.raises(InvalidTransition) as caught:
        machine.check(_Light.GREEN, _Light.RED)
    assert str(caught.value) == "light: illegal transition green -> red"
    assert (caught.value.current, caught.value.target) == (_Light.GREEN, _Light.RED)


def test_the_error_names_the_instance_when_given() -> None:
    with pytest.raises(InvalidTransition, match=r"^light north: illegal transition off -> green$") as caught:
        _lights().check(_Light.OFF, _Light.GREEN, subject="north")
    assert caught.value.subject == "north" and caught.value.machine == "light"


def test_staying_put_is_refused_unless_listed() -> None:
    with pytest.raises(InvalidTransition):
        _lights().check(_Light.AMBER, _Light.AMBER)


def test_final_states_are_those_without_a_way_out() -> None:
    machine = _lights()
    assert machine.final == {_Light.OFF}
    assert machine.is_final(_Light.OFF) and not machine.is_final(_Light.RED)


def test_every_state_must_be_declared() -> None:
    with pytest.raises(ValueError, match="no transitions declared for off"):
        StateMachine("light", _Light, {_Light.GREEN: set(), _Light.AMBER: set(), _Light.RED: set()})


def test_operation_status_facts() -> None:
    final = {s for s in OperationStatus if s.is_final}
    stopped = {s for s in OperationStatus if s.has_stopped}
    assert final == {OperationStatus.DONE, OperationStatus.ERROR, OperationStatus.CANCELLED}
    assert stopped == final | {OperationStatus.INTERRUPTED}


def test_tool_call_status_facts() -> None:
    resolved = {s for s in ToolCallStatus if s.is_resolved}
    assert resolved == {ToolCallStatus.FINISHED, ToolCallStatus.REJECTED, ToolCallStatus.CANCELLED}


def test_automation_runs_end_where_the_protocol_says_they_end() -> None:
    from typing import get_args

    from cowork.automations import RUNS, RunState
    from cowork.protocol import AutomationRunStatus

    assert {state.value for state in RunState} == set(get_args(AutomationRunStatus))
    assert {state.value for state in RUNS.final} == {"done", "failed", "cancelled"}
    assert RUNS.allows(RunState.INTERRUPTED, RunState.WAITING_FOR_HUMAN)  # resume asks before a side effect
    assert not RUNS.allows(RunState.DONE, RunState.RUNNING)

"""The install state machine: its states, the legal transitions, and how far along each state is."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["PAUSED", "PROGRESS", "RUNNING", "TERMINAL", "TRANSITIONS", "IllegalTransition", "State", "check"]


class State(StrEnum):
    FETCHING_MANIFEST = "FETCHING_MANIFEST"
    CHECKING_DEPENDENCIES = "CHECKING_DEPENDENCIES"
    DEPENDENCIES_REQUIRED = "DEPENDENCIES_REQUIRED"
    CONFIGURATION_REQUIRED = "CONFIGURATION_REQUIRED"
    STARTING = "STARTING"
    SAVING = "SAVING"
    COMPLETED = "COMPLETED"
    ERROR = "ERROR"
    CANCELLED = "CANCELLED"


S = State

TRANSITIONS: dict[State, frozenset[State]] = {
    S.FETCHING_MANIFEST: frozenset({S.CHECKING_DEPENDENCIES, S.ERROR, S.CANCELLED}),
    S.CHECKING_DEPENDENCIES: frozenset(
        {S.DEPENDENCIES_REQUIRED, S.CONFIGURATION_REQUIRED, S.STARTING, S.ERROR, S.CANCELLED}
    ),
    S.DEPENDENCIES_REQUIRED: frozenset({S.CHECKING_DEPENDENCIES, S.CANCELLED}),
    S.CONFIGURATION_REQUIRED: frozenset({S.STARTING, S.CANCELLED}),
    S.STARTING: frozenset({S.SAVING, S.ERROR, S.CANCELLED}),
    S.SAVING: frozenset({S.COMPLETED, S.ERROR, S.CANCELLED}),
    # Retry: back to the dependency check, with the configuration already given.
    S.ERROR: frozenset({S.CHECKING_DEPENDENCIES, S.CANCELLED}),
    S.COMPLETED: frozenset(),
    S.CANCELLED: frozenset(),
}

PROGRESS: dict[State, int] = {
    S.FETCHING_MANIFEST: 15,
    S.CHECKING_DEPENDENCIES: 30,
    S.DEPENDENCIES_REQUIRED: 40,
    S.CONFIGURATION_REQUIRED: 50,
    S.STARTING: 70,
    S.SAVING: 90,
    S.COMPLETED: 100,
}
"""Percent done on entering a state; ERROR and CANCELLED keep the figure they were reached at."""

PAUSED = frozenset({S.DEPENDENCIES_REQUIRED, S.CONFIGURATION_REQUIRED})
TERMINAL = frozenset({S.COMPLETED, S.CANCELLED})
RUNNING = frozenset({S.FETCHING_MANIFEST, S.CHECKING_DEPENDENCIES, S.STARTING, S.SAVING})


class IllegalTransition(RuntimeError):
    """A transition the table does not allow: a bug in the caller, never the user's input."""


def check(current: State, target: State) -> None:
    if target not in TRANSITIONS[current]:
        raise IllegalTransition(f"install cannot go from {current} to {target}")

"""One helper for every explicit state machine: an enum, a transition table, an error on anything else.

Operations, tool calls, MCP servers and install flows (and next, ingestion jobs and automation runs) each declare
their table once with `StateMachine`; the enum itself lives in `cowork.protocol` when clients see it, so protocol
and implementation share one enum per machine.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Generic, TypeVar

__all__ = ["InvalidTransition", "StateMachine"]

E = TypeVar("E", bound=Enum)


class InvalidTransition(RuntimeError):
    """A status change the machine's table does not allow: a bug in the caller, never a user error."""

    def __init__(self, machine: str, current: Enum, target: Enum) -> None:
        super().__init__(f"{machine}: illegal transition {current.value} -> {target.value}")
        self.machine = machine
        self.current = current
        self.target = target


class StateMachine(Generic[E]):
    """A named transition table over one enum.

    Every member of the enum must appear as a source (a state with no way out lists nothing); staying in the same
    state is a transition like any other and is refused unless the table lists it.
    """

    def __init__(self, name: str, states: type[E], transitions: Mapping[E, Iterable[E]]) -> None:
        missing = [member for member in states if member not in transitions]
        if missing:
            raise ValueError(f"{name}: no transitions declared for {', '.join(str(m.value) for m in missing)}")
        self.name = name
        self.states = states
        self.transitions: dict[E, frozenset[E]] = {state: frozenset(targets) for state, targets in transitions.items()}
        self.final: frozenset[E] = frozenset(state for state, targets in self.transitions.items() if not targets)
        """States with no way out."""

    def allows(self, current: E, target: E) -> bool:
        return target in self.transitions[current]

    def check(self, current: E, target: E) -> E:
        """Return `target` when the table allows `current -> target`.

        Raises:
            InvalidTransition: the table does not allow it.
        """
        if target not in self.transitions[current]:
            raise InvalidTransition(self.name, current, target)
        return target

    def is_final(self, state: E) -> bool:
        return state in self.final

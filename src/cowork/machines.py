"""One helper for every explicit state machine: an enum, a transition table, an error on anything else.

Operations and tool calls (`cowork.runtime`), MCP servers (`cowork.mcp`) and install flows (`cowork.mcp.install`)
each declare their table once with `StateMachine`. Declaring the next one (ingestion jobs, automation runs):

1. The states are a `StrEnum` whose values are the wire strings. When clients see the status it lives in
   `cowork.protocol`, so protocol and implementation share one enum; facts clients need ("is this over?") are
   properties of that enum (`OperationStatus.is_final`), since clients import only `cowork.protocol`.
2. The table lives next to the code that drives the machine, listing every state (a state with no way out lists
   an empty set) and only the edges that code takes. Staying in the same state is not implied: list it only if
   it is a real transition; a change of detail while the status stays (a new error reason) is an update, which
   the owner handles explicitly.
3. Every status change goes through `machine.check(current, target)`; its `InvalidTransition` is a bug in the
   caller, never a user error. A test pins the table's `final` states to the enum's property.

The store keeps a status as its string value (`str` columns, `status.value` or the `StrEnum` itself, which is a
`str`); reading it back is `Enum(row.status)`, so a new machine needs no store support beyond a string column. Renaming
a value is a wire change and a data migration.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Generic, TypeVar

__all__ = ["InvalidTransition", "StateMachine"]

E = TypeVar("E", bound=Enum)


class InvalidTransition(RuntimeError):
    """A status change the machine's table does not allow: a bug in the caller, never a user error."""

    def __init__(self, machine: str, current: Enum, target: Enum, subject: str | None = None) -> None:
        who = f"{machine} {subject}" if subject else machine
        super().__init__(f"{who}: illegal transition {current.value} -> {target.value}")
        self.machine = machine
        self.subject = subject
        self.current = current
        self.target = target


class StateMachine(Generic[E]):
    """A named transition table over one enum.

    Every member of the enum must appear as a source (a state with no way out lists nothing); staying in the same
    state is a transition like any other and is refused unless the table lists it.
    """

    def __init__(self, name: str, states: type[E], transitions: Mapping[E, Iterable[E]]) -> None:
        """Args:
        name: what the machine is about, for error messages ("operation", "install").
        states: the enum.
        transitions: each state's allowed targets.

        Raises:
            ValueError: a state of the enum has no entry.
        """
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

    def check(self, current: E, target: E, *, subject: str | None = None) -> E:
        """Return `target` when the table allows `current -> target`.

        Args:
            current: the state now.
            target: the state wanted.
            subject: which instance (an id), for the error message.

        Raises:
            InvalidTransition: the table does not allow it.
        """
        if target not in self.transitions[current]:
            raise InvalidTransition(self.name, current, target, subject)
        return target

    def is_final(self, state: E) -> bool:
        return state in self.final

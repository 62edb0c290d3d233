"""Operation state: what the runner decides from, what executors change, what the store keeps.

Two explicit state machines live here (`cowork.machines.StateMachine`): an operation's status and a tool call's
status. Every change goes through `transition` / `transition_call`, which refuse anything the tables do not allow.
"""

from __future__ import annotations

import json
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cowork.config import AgentConfig
from cowork.machines import InvalidTransition, StateMachine
from cowork.protocol import GuardrailCode, OperationStatus, ToolCallStatus

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

__all__ = [
    "CALL_TRANSITIONS",
    "OPERATION_TRANSITIONS",
    "RESOLVED_CALLS",
    "InvalidTransition",
    "LedgerEntry",
    "Limits",
    "OperationState",
    "Steer",
    "guardrail_ack",
    "rejection_text",
    "transition",
    "transition_call",
]

S = OperationStatus
C = ToolCallStatus

OPERATION_TRANSITIONS = StateMachine(
    "operation",
    OperationStatus,
    {
        S.IDLE: {S.RUNNING, S.CANCELLED},
        S.RUNNING: {S.WAITING_FOR_HUMAN, S.DONE, S.ERROR, S.CANCELLED, S.INTERRUPTED},
        S.WAITING_FOR_HUMAN: {S.RUNNING, S.DONE, S.ERROR, S.CANCELLED, S.INTERRUPTED},
        S.INTERRUPTED: {S.RUNNING, S.CANCELLED},
        S.DONE: set(),
        S.ERROR: set(),
        S.CANCELLED: set(),
    },
)

CALL_TRANSITIONS = StateMachine(
    "tool call",
    ToolCallStatus,
    {
        C.REQUESTED: {C.AWAITING_APPROVAL, C.AWAITING_ANSWER, C.STARTED, C.REJECTED, C.CANCELLED},
        C.AWAITING_APPROVAL: {C.APPROVED, C.REJECTED, C.CANCELLED},
        C.AWAITING_ANSWER: {C.FINISHED, C.CANCELLED},
        C.APPROVED: {C.STARTED, C.CANCELLED},
        C.STARTED: {C.FINISHED, C.INTERRUPTED, C.CANCELLED},
        C.INTERRUPTED: {C.AWAITING_APPROVAL, C.STARTED, C.FINISHED, C.CANCELLED},
        C.FINISHED: set(),
        C.REJECTED: set(),
        C.CANCELLED: set(),
    },
)

RESOLVED_CALLS = frozenset(status for status in ToolCallStatus if status.is_resolved)
"""`ToolCallStatus.is_resolved` as a set, kept for the runner and executors that test membership."""


@dataclass(frozen=True)
class Limits:
    """The guardrails' thresholds for one operation."""

    max_steps: int
    stuck_repeats: int
    cost_cap_usd: float
    cost_window_seconds: float
    checkin_seconds: float
    error_rate_threshold: float
    error_rate_window: int
    error_rate_min_calls: int
    context_window: int
    compress_at: float
    keep_recent: float

    @classmethod
    def from_config(cls, agent: AgentConfig, *, context_window: int) -> Limits:
        return cls(
            max_steps=agent.max_steps,
            stuck_repeats=agent.stuck_repeats,
            cost_cap_usd=agent.cost_cap_usd,
            cost_window_seconds=agent.cost_window_seconds,
            checkin_seconds=agent.checkin_seconds,
            error_rate_threshold=agent.error_rate_threshold,
            error_rate_window=agent.error_rate_window,
            error_rate_min_calls=agent.error_rate_min_calls,
            context_window=agent.context_window or context_window,
            compress_at=agent.compress_at,
            keep_recent=agent.keep_recent,
        )


@dataclass
class LedgerEntry:
    """One tool call of the operation's latest model response, and how far it got."""

    tool_call_id: str
    step: int
    name: str
    arguments: dict[str, Any]
    side_effects: bool
    status: ToolCallStatus
    invalid_arguments: str | None = None
    """The raw arguments when they were not a JSON object (the call then fails without running)."""
    result: str | None = None
    is_error: bool | None = None
    request_id: str | None = None
    rerun: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def signature(self) -> str:
        return self.name + json.dumps(self.arguments, sort_keys=True, default=str)


@dataclass(frozen=True)
class Steer:
    id: str
    text: str
    client_message_id: str


@dataclass
class OperationState:
    """Everything the runner needs to decide the next step of one operation."""

    id: str
    session_id: str
    thread_id: str
    origin: str
    status: OperationStatus
    step: int
    step_limit: int
    messages: list[ModelMessage]
    positions: list[int]
    """Store position of each message; -1 for a summary standing in for compressed history."""
    next_position: int
    checkin_at: float
    """Monotonic time after which the operation asks whether to go on."""
    parent_id: str | None = None
    agent_type: str | None = None
    depth: int = 0
    calls: dict[str, LedgerEntry] = field(default_factory=dict)
    steering: list[Steer] = field(default_factory=list)
    spend: deque[tuple[float, float]] = field(default_factory=deque)
    """(monotonic time, USD) of recent model calls, for the cost cap's window."""
    outcomes: deque[bool] = field(default_factory=lambda: deque(maxlen=100))
    """Recent tool calls: True where the call failed."""
    signatures: list[str] = field(default_factory=list)
    """Tool calls run so far in this operation (name + arguments), for stuck detection."""
    last_input_tokens: int = 0
    last_output_tokens: int = 0
    chars_since_usage: int = 0
    compress_failed_at_step: int = -1
    summary: str | None = None
    compact_focus: str | None = None
    """A `compact` operation's instructions (what the summary should keep); kept in memory only."""
    root_id: str | None = None
    """The top-level operation (the user's request) a sub-agent works for; its spend counts there."""
    budget_allowed: set[str] = field(default_factory=set)
    """Budget caps the user said this request may go over ("continue once")."""
    excluded: bool = False
    """Its messages are kept out of the model's context (a grounded refusal): the next turn reads the history back
    from the store instead of taking this one's from memory."""

    @property
    def root(self) -> str:
        return self.root_id or self.id

    def add_message(self, message: ModelMessage, position: int) -> None:
        self.messages.append(message)
        self.positions.append(position)


def transition(state: OperationState, new: OperationStatus) -> None:
    """Move the operation to `new`; setting the status it already has changes nothing and is not a transition.

    Raises:
        InvalidTransition: `OPERATION_TRANSITIONS` does not allow it.
    """
    if new != state.status:
        state.status = OPERATION_TRANSITIONS.check(state.status, new, subject=state.id)


def transition_call(entry: LedgerEntry, new: ToolCallStatus) -> None:
    """Move the tool call to `new`; setting the status it already has changes nothing and is not a transition.

    Raises:
        InvalidTransition: `CALL_TRANSITIONS` does not allow it.
    """
    if new != entry.status:
        entry.status = CALL_TRANSITIONS.check(entry.status, new, subject=entry.tool_call_id)


GUARDRAIL_QUESTIONS: dict[GuardrailCode, str] = {
    GuardrailCode.MAX_STEPS: "I have taken {n} steps on this without finishing. Keep going?",
    GuardrailCode.STUCK: "I seem to be stuck: I called {tool} with the same input {n} times in a row. Keep going?",
    GuardrailCode.COST_CAP: "This task has cost ${usd:.2f} in the last {minutes:.0f} minutes (cap ${cap:.2f}). Keep going?",
    GuardrailCode.CHECKIN: "I have been working on this for {minutes:.0f} minutes. Still want me to keep going?",
    GuardrailCode.BUDGET_EXCEEDED: "{message}",
}


def guardrail_ack(
    state: OperationState, code: GuardrailCode, limits: Limits, details: dict[str, Any] | None = None
) -> None:
    """The user said to go on past a guardrail: reset what tripped it."""
    if code == GuardrailCode.BUDGET_EXCEEDED and details and isinstance(details.get("cap"), str):
        state.budget_allowed.add(details["cap"])
    elif code == GuardrailCode.MAX_STEPS:
        state.step_limit = state.step + limits.max_steps
    elif code == GuardrailCode.STUCK:
        state.signatures.clear()
    elif code == GuardrailCode.COST_CAP:
        state.spend.clear()
    elif code == GuardrailCode.CHECKIN:
        state.checkin_at = time.monotonic() + limits.checkin_seconds


def rejection_text(message: str | None) -> str:
    """The tool result the model reads for a call the user rejected."""
    note = f" Their note: {message}" if message else ""
    return f"The user rejected this tool call, so it did not run.{note} Do not retry it as is; choose another way."

"""What the TUI remembers about the session it shows: plain data, no widgets, no I/O.

Everything here is rebuilt from the server's event log (replay) and `session/subscribe`'s `pending`; the server owns
the truth, this is only the client's reading of it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from cowork.protocol import (
    ApprovalRequested,
    ApprovalResolved,
    Ask,
    AskResolved,
    OperationStatus,
    OperationStatusChanged,
    PendingApproval,
    PendingQuestion,
    PendingRequests,
    SessionEvent,
    Todo,
    Todos,
    Usage,
)

__all__ = ["TERMINAL", "SessionState", "UsageTotals", "result_size", "summarize_arguments"]

TERMINAL = frozenset(
    {OperationStatus.DONE, OperationStatus.ERROR, OperationStatus.CANCELLED, OperationStatus.INTERRUPTED}
)


def summarize_arguments(arguments: dict[str, Any], width: int = 70) -> str:
    parts = []
    for key, value in arguments.items():
        shown = value if isinstance(value, str) else json.dumps(value)
        parts.append(f"{key}={shown}")
    text = ", ".join(parts).replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def result_size(content: str) -> str:
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    return f"{lines} line{'s' if lines != 1 else ''}, {len(content):,} chars"


@dataclass
class UsageTotals:
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cost_known: bool = True
    day_cost_usd: float | None = None

    def add(self, usage: Usage) -> None:
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cost_usd += usage.cost_usd
        self.cost_known = self.cost_known and usage.cost_known
        if usage.day_cost_usd is not None:
            self.day_cost_usd = usage.day_cost_usd


@dataclass
class SessionState:
    """The shown session: the last event seen, todos, usage and what it waits on a person for."""

    session_id: str | None = None
    last_seq: int = 0
    """The newest event applied; a reconnect subscribes with `afterSeq` = this and misses nothing."""
    boundary: int | None = None
    """`lastSeq` of the current subscription: events up to it are history, later ones are live. None while
    subscribing (pending requests then come from the subscribe result, not from replayed events)."""
    todos: list[Todo] = field(default_factory=list)
    usage: UsageTotals = field(default_factory=UsageTotals)
    approvals: dict[str, PendingApproval] = field(default_factory=dict)
    questions: dict[str, PendingQuestion] = field(default_factory=dict)
    running: str | None = None
    """The top-level operation running now, if any."""

    def is_new(self, event: SessionEvent) -> bool:
        return event.session_id == self.session_id and event.seq > self.last_seq

    def apply(self, event: SessionEvent) -> None:
        """Record an event (call only when `is_new`)."""
        self.last_seq = event.seq
        payload = event.payload
        if isinstance(payload, Todos):
            self.todos = list(payload.todos)
        elif isinstance(payload, Usage):
            self.usage.add(payload)
        elif isinstance(payload, OperationStatusChanged) and payload.parent_operation_id is None:
            if payload.status in TERMINAL:
                if self.running == payload.operation_id:
                    self.running = None
            else:
                self.running = payload.operation_id
        if self.boundary is None or event.seq <= self.boundary:
            return  # history: what is still pending comes from the subscribe result
        if isinstance(payload, ApprovalRequested):
            self.approvals[payload.request_id] = PendingApproval(
                request_id=payload.request_id,
                session_id=event.session_id,
                operation_id=payload.operation_id,
                tool_call_id=payload.tool_call_id,
                name=payload.name,
                arguments=payload.arguments,
                reason=payload.reason,
                rerun=payload.rerun,
                created_at=event.ts,
            )
        elif isinstance(payload, Ask):
            self.questions[payload.request_id] = PendingQuestion(
                request_id=payload.request_id,
                session_id=event.session_id,
                operation_id=payload.operation_id,
                question=payload.question,
                options=list(payload.options),
                kind=payload.kind,
                created_at=event.ts,
            )
        elif isinstance(payload, ApprovalResolved):
            self.approvals.pop(payload.request_id, None)
        elif isinstance(payload, AskResolved):
            self.questions.pop(payload.request_id, None)

    def subscribed(self, last_seq: int, pending: PendingRequests) -> None:
        """The subscription is live: everything up to `last_seq` was replayed; `pending` is what waits now."""
        self.boundary = last_seq
        self.approvals = {a.request_id: a for a in pending.approvals}
        self.questions = {q.request_id: q for q in pending.questions}

    def next_request(self) -> PendingApproval | PendingQuestion | None:
        """The oldest request waiting for an answer."""
        waiting: list[PendingApproval | PendingQuestion] = [*self.approvals.values(), *self.questions.values()]
        return min(waiting, key=lambda r: r.created_at) if waiting else None

    def resolve(self, request_id: str) -> None:
        self.approvals.pop(request_id, None)
        self.questions.pop(request_id, None)

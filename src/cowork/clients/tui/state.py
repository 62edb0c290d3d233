"""What the TUI remembers about the session it shows: plain data, no widgets, no I/O.

Everything here is rebuilt from the server's event log (replay) and `session/subscribe`'s `pending`; the server owns
the truth, this is only the client's reading of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import assert_never

from cowork.clients import format as fmt
from cowork.protocol import (
    AgentSpawned,
    ApprovalRequested,
    ApprovalResolved,
    Ask,
    AskResolved,
    AssistantMessage,
    BudgetWarning,
    Citations,
    ContextCompressed,
    ErrorEvent,
    Guardrail,
    LogLine,
    ModelRetry,
    ModelStreamChunk,
    OperationStatusChanged,
    PendingApproval,
    PendingQuestion,
    PendingRequests,
    Reasoning,
    ReceivedEvent,
    Route,
    SessionEvent,
    SessionUpdated,
    Todo,
    Todos,
    ToolCall,
    ToolInterrupted,
    ToolResult,
    UnknownPayload,
    Usage,
    UserMessage,
)

__all__ = ["SessionState", "UsageTotals"]


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
    messages: list[str] = field(default_factory=list)
    """The user's messages that started a turn (`cowork.clients.format.turn_messages`): `/rewind N`'s numbers."""

    def is_new(self, event: ReceivedEvent) -> bool:
        return event.session_id == self.session_id and event.seq > self.last_seq

    def apply(self, event: ReceivedEvent) -> None:
        """Record an event (call only when `is_new`)."""
        self.last_seq = event.seq
        # Up to the subscription's boundary events are history: what still waits comes from the subscribe result.
        live = self.boundary is not None and event.seq > self.boundary
        payload = event.payload
        match payload:
            case Todos():
                self.todos = list(payload.todos)
            case Usage():
                self.usage.add(payload)
            case OperationStatusChanged():
                if payload.parent_operation_id is None:
                    if not payload.status.has_stopped:
                        self.running = payload.operation_id
                    elif self.running == payload.operation_id:
                        self.running = None
            case ApprovalRequested():
                if live:
                    assert isinstance(event, SessionEvent)  # a payload this client could read came in a SessionEvent
                    self.approvals[payload.request_id] = PendingApproval(
                        request_id=payload.request_id,
                        session_id=event.session_id,
                        operation_id=payload.operation_id,
                        tool_call_id=payload.tool_call_id,
                        name=payload.name,
                        arguments=payload.arguments,
                        reason=payload.reason,
                        rerun=payload.rerun,
                        dangerous=payload.dangerous,
                        preview=payload.preview,
                        session_allow=payload.session_allow,
                        created_at=event.ts,
                    )
            case Ask():
                if live:
                    assert isinstance(event, SessionEvent)
                    self.questions[payload.request_id] = PendingQuestion(
                        request_id=payload.request_id,
                        session_id=event.session_id,
                        operation_id=payload.operation_id,
                        question=payload.question,
                        options=list(payload.options),
                        kind=payload.kind,
                        created_at=event.ts,
                    )
            case ApprovalResolved() | AskResolved():
                if live:
                    self.resolve(payload.request_id)
            case UserMessage():
                self.messages += fmt.turn_messages([payload])
            case (
                ModelStreamChunk()
                | Reasoning()
                | AssistantMessage()
                | ToolCall()
                | ToolResult()
                | LogLine()
                | ErrorEvent()
                | SessionUpdated()
                | ToolInterrupted()
                | ContextCompressed()
                | Guardrail()
                | AgentSpawned()
                | Route()
                | ModelRetry()
                | BudgetWarning()
                | Citations()
                | UnknownPayload()
            ):
                pass  # the transcript's business, not the session state's
            case _:
                assert_never(payload)

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

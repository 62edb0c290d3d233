"""Values shared by methods and events: todos, pending human requests, operations and their tool calls."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from ._base import WireModel

__all__ = [
    "AgentType",
    "GuardrailCode",
    "OperationInfo",
    "OperationStatus",
    "PendingApproval",
    "PendingQuestion",
    "PendingRequests",
    "Todo",
    "TokenUsage",
    "ToolCallInfo",
    "ToolCallStatus",
]


class OperationStatus(StrEnum):
    """Where an operation (one agent execution: a user turn, a sub-agent) stands."""

    IDLE = "idle"
    RUNNING = "running"
    WAITING_FOR_HUMAN = "waiting_for_human"
    INTERRUPTED = "interrupted"
    DONE = "done"
    ERROR = "error"
    CANCELLED = "cancelled"

    @property
    def is_final(self) -> bool:
        """Ended for good (done, error, cancelled): nothing can resume it."""
        return self in (OperationStatus.DONE, OperationStatus.ERROR, OperationStatus.CANCELLED)

    @property
    def has_stopped(self) -> bool:
        """Not running now and not waiting for a person: final, or interrupted (which `operation/resume` continues)."""
        return self.is_final or self is OperationStatus.INTERRUPTED


class ToolCallStatus(StrEnum):
    """A tool call's place in the ledger."""

    REQUESTED = "requested"
    """The model asked for it; the policy has not decided yet."""
    AWAITING_APPROVAL = "awaiting_approval"
    AWAITING_ANSWER = "awaiting_answer"
    APPROVED = "approved"
    REJECTED = "rejected"
    STARTED = "started"
    FINISHED = "finished"
    INTERRUPTED = "interrupted"
    """Started, then the server stopped before it finished: never re-run without asking if it has side effects."""
    CANCELLED = "cancelled"

    @property
    def is_resolved(self) -> bool:
        """The call has its result (finished, rejected, cancelled): the model can be told."""
        return self in (ToolCallStatus.FINISHED, ToolCallStatus.REJECTED, ToolCallStatus.CANCELLED)


class GuardrailCode(StrEnum):
    MAX_STEPS = "max_steps"
    STUCK = "stuck"
    COST_CAP = "cost_cap"
    CHECKIN = "checkin"
    ERROR_RATE = "error_rate"
    BUDGET_EXCEEDED = "budget_exceeded"


AgentType = Literal["explore", "research", "general"]


class Todo(WireModel):
    """One item of the agent's progress list."""

    content: str = Field(min_length=1, max_length=2000, description="What to do, in the imperative.")
    status: Literal["pending", "in_progress", "completed"]
    active_form: str = Field(
        default="", max_length=2000, description="The same in the present continuous, shown while in progress."
    )


class PendingApproval(WireModel):
    """A tool call waiting for the user's yes or no."""

    request_id: str
    session_id: str
    operation_id: str
    tool_call_id: str
    name: str
    arguments: dict[str, Any]
    reason: str = ""
    rerun: bool = Field(default=False, description="The call was interrupted once; approving runs it again.")
    dangerous: bool = Field(default=False, description="The security check flagged it.")
    preview: str | None = Field(default=None, description="For `edit` and `write`: the unified diff it would make.")
    session_allow: str | None = Field(
        default=None, description="What allowing for the session would cover, in words; null when not offered."
    )
    created_at: datetime


class PendingQuestion(WireModel):
    """A question the agent asked the user (the `ask` tool), or a guardrail asking whether to go on."""

    request_id: str
    session_id: str
    operation_id: str
    question: str
    options: list[str] = Field(default_factory=list)
    kind: Literal["question", "guardrail"] = "question"
    created_at: datetime


class PendingRequests(WireModel):
    """Everything a session is waiting on a person for."""

    approvals: list[PendingApproval] = Field(default_factory=list)
    questions: list[PendingQuestion] = Field(default_factory=list)


class TokenUsage(WireModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0


class ToolCallInfo(WireModel):
    """An entry of an operation's tool-call ledger."""

    tool_call_id: str
    step: int
    name: str
    arguments: dict[str, Any]
    status: ToolCallStatus
    side_effects: bool = False
    is_error: bool | None = None
    result: str | None = Field(default=None, description="What the model was given back, once finished.")


class OperationInfo(WireModel):
    """An operation: its status, progress, spend, and ledger."""

    id: str
    session_id: str
    origin: Literal["chat", "sub_agent", "automation", "compact"]
    status: OperationStatus
    step_count: int
    usage: TokenUsage
    cost_usd: float
    created_at: datetime
    updated_at: datetime
    parent_operation_id: str | None = None
    agent_type: AgentType | None = None
    provider: str | None = None
    model: str | None = None
    ask_id: str | None = Field(default=None, description="The retry group (a turn and its try-harder retries).")
    tier: str | None = Field(default=None, description="The router's tier, when the router chose the model.")
    error_code: str | None = None
    error_message: str | None = None
    summary: str | None = Field(default=None, description="The final answer, once done (a sub-agent's report).")
    tool_calls: list[ToolCallInfo] = Field(default_factory=list)
    pending: PendingRequests = Field(default_factory=PendingRequests)

"""Session events: the closed set of event types a session produces, and the `session/event` envelope.

Each payload class names its wire `type` once (`event_type`); the `EventPayload` union lists the classes once; every
other view of the set (`EVENT_PAYLOADS`, `EventType`, the generated reference) is derived from those two.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias

from pydantic import Field, model_validator

from ._base import WireModel
from ._errors import ErrorCode, ErrorSource
from ._values import GuardrailCode, OperationStatus, Todo

__all__ = [
    "DELTA_EVENT_TYPES",
    "EVENT_PAYLOADS",
    "AgentSpawned",
    "ApprovalRequested",
    "ApprovalResolved",
    "Ask",
    "AskResolved",
    "AssistantMessage",
    "BudgetWarning",
    "Citation",
    "Citations",
    "ContextCompressed",
    "ErrorEvent",
    "EventPayload",
    "EventType",
    "Guardrail",
    "LogLine",
    "ModelRetry",
    "ModelStreamChunk",
    "OperationStatusChanged",
    "Reasoning",
    "Route",
    "SessionEvent",
    "SessionUpdated",
    "Todos",
    "ToolCall",
    "ToolInterrupted",
    "ToolResult",
    "Usage",
    "UserMessage",
]


class _Payload(WireModel):
    event_type: ClassVar[str]
    """The `type` this payload travels under in a `SessionEvent` (the payload itself carries no type field)."""


class UserMessage(_Payload):
    """The user's input that started a turn."""

    event_type = "user_message"
    operation_id: str
    message_id: str
    text: str
    client_message_id: str
    steer: bool = Field(
        default=False, description="Sent while the operation was running (turn/steer); applied at the next step."
    )


class OperationStatusChanged(_Payload):
    """An operation changed status; `code` and `reason` say why when it stopped other than by finishing."""

    event_type = "operation_status"
    operation_id: str
    status: OperationStatus
    code: ErrorCode | None = None
    reason: str | None = None
    parent_operation_id: str | None = Field(default=None, description="Set for a sub-agent's operation.")
    trace_id: str | None = Field(
        default=None,
        description="The operation's trace (32 hex digits; `trace/get`): a turn's sub-agents share their turn's trace.",
    )


class ModelStreamChunk(_Payload):
    """A piece of the assistant's answer as the model streams it. Droppable under back-pressure; replay has it.

    Often several of the model's deltas joined (the server coalesces them): append `text`; a step's chunks joined
    are its answer.
    """

    event_type = "model_stream_chunk"
    operation_id: str
    step: int
    text: str


class Reasoning(_Payload):
    """A piece of the model's reasoning (thinking) as it streams. Droppable under back-pressure; replay has it.

    Often several of the model's deltas joined (the server coalesces them): append `text`.
    """

    event_type = "reasoning"
    operation_id: str
    step: int
    text: str


class AssistantMessage(_Payload):
    """The assistant's complete text for one model step (the streamed chunks joined)."""

    event_type = "assistant_message"
    operation_id: str
    step: int
    message_id: str
    text: str


class ToolCall(_Payload):
    """The model asked to run a tool."""

    event_type = "tool_call"
    operation_id: str
    step: int
    tool_call_id: str
    name: str
    arguments: dict[str, Any]
    side_effects: bool = False
    needs_approval: bool = False


class ToolResult(_Payload):
    """A tool finished; `content` is what the model reads (an error message when `is_error`)."""

    event_type = "tool_result"
    operation_id: str
    step: int
    tool_call_id: str
    name: str
    is_error: bool
    content: str
    diff: str | None = Field(
        default=None,
        description="For a call that changed a file (`edit`, `write`): the unified diff of the change, cut at 64 KB.",
    )
    rejected: bool = Field(default=False, description="The user rejected the call; `content` says why.")
    files: list[str] = Field(
        default_factory=list,
        description="Files the call created or changed (relative to the workspace), as its checkpoint recorded them: "
        "a write's or edit's file, whatever a shell command made. Empty when checkpoints are off.",
    )


class Usage(_Payload):
    """Tokens used by one model request."""

    event_type = "usage"
    operation_id: str
    step: int
    provider: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = Field(default=0.0, description="0 when the model's price is unknown.")
    cost_known: bool = Field(default=True, description="False when neither config nor the price table knows it.")
    interaction_cost_usd: float | None = Field(
        default=None, description="What this user request has cost so far (its turn and sub-agents)."
    )
    day_cost_usd: float | None = Field(default=None, description="What today has cost so far, all sessions.")


class LogLine(_Payload):
    """Progress output from a running tool."""

    event_type = "log"
    operation_id: str | None = None
    tool_call_id: str | None = None
    text: str


class ErrorEvent(_Payload):
    """Something went wrong during a turn; `code` is stable, `message` is for people."""

    event_type = "error"
    operation_id: str | None = None
    code: ErrorCode
    message: str
    source: ErrorSource


class SessionUpdated(_Payload):
    """Session settings changed (title, provider, model)."""

    event_type = "session_updated"
    title: str | None = None
    provider: str | None = None
    model: str | None = None
    network: bool | None = None
    yolo: bool | None = None
    reasoning_effort: str | None = Field(default=None, description="`default` when set back to the config's.")
    auto_model: bool | None = None
    allowances: list[str] | None = Field(
        default=None, description="What the session now allows without asking, in words (empty: cleared)."
    )
    plan_mode: bool | None = Field(default=None, description="Plan mode turned on or off.")


class ToolInterrupted(_Payload):
    """A tool call was running when the server stopped; on resume it is re-run (read-only) or re-asked."""

    event_type = "tool_interrupted"
    operation_id: str
    step: int
    tool_call_id: str
    name: str
    side_effects: bool
    action: Literal["rerun", "ask"]


class ApprovalRequested(_Payload):
    """A tool call waits for the user's approval (`approval/respond`)."""

    event_type = "approval_requested"
    request_id: str
    operation_id: str
    tool_call_id: str
    name: str
    arguments: dict[str, Any]
    reason: str = ""
    rerun: bool = False
    dangerous: bool = Field(
        default=False, description="The security check flagged it (a destructive command, deleting, sending, paying)."
    )
    preview: str | None = Field(
        default=None,
        description="For `edit` and `write`: the unified diff the call would make (a new file: all lines added), "
        "computed by the server, cut at 64 KB.",
    )
    session_allow: str | None = Field(
        default=None,
        description="What answering with scope `session` would allow for the rest of the session, in words "
        "(`edit`, or `commands starting with git status`); null when it is not offered (dangerous calls).",
    )


class ApprovalResolved(_Payload):
    """The user approved or rejected a tool call."""

    event_type = "approval_resolved"
    request_id: str
    operation_id: str
    tool_call_id: str
    approved: bool
    message: str | None = None
    scope: Literal["once", "session"] = Field(
        default="once", description="`session`: the same kind of call is allowed without asking for the session."
    )


class Ask(_Payload):
    """The agent asks the user something (`ask/respond`); `kind` is `guardrail` when it asks whether to go on."""

    event_type = "ask"
    request_id: str
    operation_id: str
    question: str
    options: list[str] = Field(default_factory=list)
    kind: Literal["question", "guardrail"] = "question"


class AskResolved(_Payload):
    """A question got its answer."""

    event_type = "ask_resolved"
    request_id: str
    operation_id: str
    answer: str


class Todos(_Payload):
    """The agent's whole progress list, after each change."""

    event_type = "todos"
    operation_id: str | None = None
    todos: list[Todo]


class ContextCompressed(_Payload):
    """Older history was summarised to fit the model's context window."""

    event_type = "context_compressed"
    operation_id: str
    summarized_messages: int
    kept_messages: int
    tokens_before: int
    tokens_after: int


class Guardrail(_Payload):
    """A guardrail stopped or paused the operation; `code` says which and `message` why."""

    event_type = "guardrail"
    operation_id: str
    code: GuardrailCode
    message: str
    request_id: str | None = Field(default=None, description="Set when the operation waits to be told to go on.")
    details: dict[str, Any] | None = Field(
        default=None, description="Figures behind it; for budget_exceeded: cap, limitUsd, spentUsd, estimateUsd."
    )


class AgentSpawned(_Payload):
    """A sub-agent started on a task for its parent operation."""

    event_type = "agent_spawned"
    operation_id: str
    child_operation_id: str
    agent_type: str
    task: str
    model: str | None = None


class Route(_Payload):
    """The complexity router chose this turn's model, and says why."""

    event_type = "route"
    operation_id: str
    tier: str
    provider: str
    model: str
    code: str = Field(description="A stable reason code: simple, too_long, attachments, multi_tool, try_harder, ...")
    reason: str
    notify: bool = Field(default=False, description="Worth showing: the user preferred local but this needed cloud.")
    estimated_tokens: int = 0
    ask_id: str | None = None
    warning: str | None = Field(default=None, description="A local model that may not fit (preflight yellow).")


class ModelRetry(_Payload):
    """A model request failed before it streamed anything and will be tried again after a delay."""

    event_type = "model_retry"
    operation_id: str
    step: int
    attempt: int = Field(description="The attempt about to be made (2 for the first retry).")
    max_attempts: int
    delay_seconds: float
    code: ErrorCode
    message: str


class BudgetWarning(_Payload):
    """Spend crossed the warning share of a budget cap."""

    event_type = "budget_warning"
    operation_id: str | None = None
    cap: Literal["interaction", "daily", "weekly", "monthly"]
    limit_usd: float
    spent_usd: float
    fraction: float


class Citation(WireModel):
    """One passage of the folder's documents an answer was given (`Citations`)."""

    chunk_id: int = Field(description="The passage, for `memory/passage` (gone once its file is indexed again).")
    path: str = Field(
        description="The source file, relative to the session's folder, or the URL of a web page indexed there."
    )
    title: str
    heading: str = Field(description="Where in the file the passage sits: its heading path, outermost first.")
    similarity: float | None = Field(default=None, description="Cosine similarity to the query, when searched.")
    origin: Literal["pinned", "search", "backfill", "tool"] = Field(
        description="A file the user pinned (in every turn), found for this message, re-offered from an earlier "
        "answer's sources (a follow-up), or found by the agent's `searchDocuments` call."
    )


class Citations(_Payload):
    """Passages of the folder's documents the operation's answer was given: put in its context before the first
    model request (`memory.context = "auto"`), or found by a `searchDocuments` call. Clients show them under the
    answer, numbered in the order they arrive across the operation."""

    event_type = "citations"
    operation_id: str
    step: int
    citations: list[Citation]


EventPayload: TypeAlias = (
    UserMessage
    | OperationStatusChanged
    | ModelStreamChunk
    | Reasoning
    | AssistantMessage
    | ToolCall
    | ToolResult
    | Usage
    | LogLine
    | ErrorEvent
    | SessionUpdated
    | ToolInterrupted
    | ApprovalRequested
    | ApprovalResolved
    | Ask
    | AskResolved
    | Todos
    | ContextCompressed
    | Guardrail
    | AgentSpawned
    | Route
    | ModelRetry
    | BudgetWarning
    | Citations
)
"""Every event payload: the one list of event types. Add a class here and every client's dispatch must decide."""


def _payload_table() -> Mapping[str, type[EventPayload]]:
    table: dict[str, type[EventPayload]] = {}
    for cls in typing.get_args(EventPayload):
        tag = cls.__dict__.get("event_type")
        # A class that forgot its tag would inherit none (or a parent's) and shadow another type on the wire.
        if not isinstance(tag, str) or tag in table:
            raise TypeError(f"{cls.__name__} needs its own, unique `event_type` (got {tag!r})")
        table[tag] = cls
    return MappingProxyType(table)


EVENT_PAYLOADS: Mapping[str, type[EventPayload]] = _payload_table()
"""Event type → payload class, in the union's order."""

if TYPE_CHECKING:
    # mypy cannot build a Literal from a computed tuple; statically the tag is a string, which is all callers need
    # (dispatch is by payload class, `match` + `assert_never`).
    EventType: TypeAlias = str
else:
    # At run time it is the closed set, so `SessionEvent` rejects an unknown `type` and the schema lists the names.
    EventType = Literal[tuple(EVENT_PAYLOADS)]

DELTA_EVENT_TYPES: frozenset[str] = frozenset({ModelStreamChunk.event_type, Reasoning.event_type})
"""Event types a slow connection may drop; a client that sees a gap in `seq` recovers them with `events/replay`."""


class SessionEvent(WireModel):
    """One entry of a session's append-only event log, as sent in `session/event` and returned by `events/replay`."""

    session_id: str
    seq: int = Field(ge=1, description="Per-session sequence number, starting at 1, without gaps in the log.")
    ts: datetime
    type: EventType
    payload: EventPayload

    @model_validator(mode="before")
    @classmethod
    def _payload_by_type(cls, data: Any) -> Any:
        # The payload union has no tag of its own: `type` beside it decides which model validates it.
        if isinstance(data, dict):
            payload, kind = data.get("payload"), data.get("type")
            payload_cls = EVENT_PAYLOADS.get(kind) if isinstance(kind, str) else None
            if payload_cls is not None and isinstance(payload, dict):
                return {**data, "payload": payload_cls.model_validate(payload)}
        return data

    @model_validator(mode="after")
    def _type_matches_payload(self) -> SessionEvent:
        if self.payload.event_type != self.type:
            raise ValueError(f"payload of type {self.payload.event_type!r} does not match event type {self.type!r}")
        return self

"""Rows as plain values. Repositories return these; nothing above the store sees SQLAlchemy."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

__all__ = [
    "CheckpointFileRow",
    "CheckpointRow",
    "ContextSummaryRow",
    "EventRow",
    "HumanRequestRow",
    "IngestJobRow",
    "MessageRow",
    "OperationInputRow",
    "OperationRow",
    "RagChunkRow",
    "RagSourceRow",
    "SessionRow",
    "SpanRow",
    "ToolCallRow",
    "TraceRow",
    "UsageRow",
]


@dataclass(frozen=True, slots=True)
class SessionRow:
    id: str
    title: str
    workspace: str
    provider: str | None
    model: str | None
    created_at: datetime
    updated_at: datetime
    last_seq: int = 0
    todos: str = "[]"
    """The agent's progress list as JSON (a list of todo objects)."""
    network: bool = False
    """Shell commands of this session may reach the network."""
    yolo: bool = False
    """Approvals and the sandbox are off for this session."""
    reasoning_effort: str | None = None
    """The session's reasoning (thinking) effort; None: the configured default."""
    allowances: str = "[]"
    """What the user allowed without asking again, as a JSON list of keys (`tool:edit`, `command:git status`)."""
    plan_mode: bool = False
    """Only tools that change nothing run, until the user approves the plan (turns plan mode off)."""


@dataclass(frozen=True, slots=True)
class EventRow:
    session_id: str
    seq: int
    type: str
    payload: str
    """The payload as JSON text, exactly as it is sent."""
    created_at: datetime


@dataclass(frozen=True, slots=True)
class OperationRow:
    id: str
    session_id: str
    client_message_id: str | None
    origin: str
    status: str
    provider: str | None
    model: str | None
    created_at: datetime
    updated_at: datetime
    step_count: int = 0
    error_code: str | None = None
    error_message: str | None = None
    thread_id: str = ""
    """The history the operation reads and extends: its session's main thread, or its own (a sub-agent)."""
    parent_operation_id: str | None = None
    agent_type: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    summary: str | None = None
    ask_id: str | None = None
    """The retry group: a "try harder" retry shares its original turn's ask id."""
    tier: str | None = None
    """The router's tier for this turn, when the router chose the model."""


@dataclass(frozen=True, slots=True)
class MessageRow:
    id: str
    session_id: str
    operation_id: str
    position: int
    kind: str
    """`request` (to the model: user input, tool results) or `response` (from the model)."""
    text: str
    """What a person reads: the user's text or the assistant's text; empty for tool-only messages."""
    model_message: str
    """The provider-neutral model message as JSON (pydantic-ai's message format)."""
    created_at: datetime
    thread_id: str = ""
    superseded: bool = False
    """Replaced by a "try harder" retry: still shown, no longer sent to the model."""
    excluded: bool = False
    """Left out of the model's context: a grounded refusal and the question it refused (shown, never sent)."""


@dataclass(frozen=True, slots=True)
class ToolCallRow:
    operation_id: str
    tool_call_id: str
    session_id: str
    step: int
    name: str
    arguments: str
    """JSON object."""
    side_effects: bool
    status: str
    created_at: datetime
    updated_at: datetime
    result: str | None = None
    is_error: bool | None = None
    meta: str | None = None
    """JSON object with tool-specific facts (a sub-agent's operation id)."""


@dataclass(frozen=True, slots=True)
class HumanRequestRow:
    id: str
    session_id: str
    operation_id: str
    kind: str
    """`approval`, `question` or `guardrail`."""
    tool_call_id: str | None
    payload: str
    """JSON: what is asked (tool name and arguments, question and options, guardrail code)."""
    status: str
    """`pending`, `resolved` or `cancelled`."""
    created_at: datetime
    response: str | None = None
    resolved_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class OperationInputRow:
    id: str
    operation_id: str
    session_id: str
    client_message_id: str
    text: str
    status: str
    """`queued` or `applied`."""
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ContextSummaryRow:
    id: str
    thread_id: str
    operation_id: str
    up_to_position: int
    """Messages of the thread up to and including this position are replaced by the summary."""
    summary: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class UsageRow:
    """One model call's tokens and cost."""

    session_id: str
    operation_id: str
    root_operation_id: str
    """The top-level operation (the user's request) a sub-agent's call counts towards."""
    step: int
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    reasoning_tokens: int
    cost_usd: float
    cost_known: bool
    created_at: datetime


@dataclass(frozen=True, slots=True)
class CheckpointFileRow:
    """One path a checkpoint's call changed: git object id and mode before and after (mode 0: absent)."""

    path: str
    before_blob: str | None
    before_mode: int
    after_blob: str | None
    after_mode: int
    size: int = 0


@dataclass(frozen=True, slots=True)
class CheckpointRow:
    """A tool call that changed a session's folder, and what it changed."""

    id: int
    session_id: str
    workspace: str
    operation_id: str
    tool_call_id: str
    tool: str
    created_at: datetime
    undone_at: datetime | None
    files: tuple[CheckpointFileRow, ...] = ()


@dataclass(frozen=True, slots=True)
class SpanRow:
    """A finished span (see the `spans` table)."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: str
    start_us: int
    end_us: int
    status: str
    status_message: str | None
    session_id: str | None
    operation_id: str | None
    cost_usd: float | None
    input_tokens: int | None
    output_tokens: int | None
    attributes: str
    """JSON object."""
    events: str | None = None
    """JSON list of `{name, time_us, attributes}`, or None."""


@dataclass(frozen=True, slots=True)
class TraceRow:
    """One trace, summed over its stored spans."""

    trace_id: str
    start_us: int
    end_us: int
    span_count: int
    failed: bool
    cost_usd: float
    input_tokens: int
    output_tokens: int
    session_id: str | None
    operation_id: str | None
    """The root operation's (the span without a parent that names one), when stored."""
    name: str | None
    """The root span's name."""


@dataclass(frozen=True, slots=True)
class RagSourceRow:
    id: int
    kind: str
    scope: str
    uri: str
    title: str
    content_hash: str
    size: int
    mtime_ns: int
    chunk_count: int
    embedder: str
    error: str | None
    indexed_at: datetime


@dataclass(frozen=True, slots=True)
class RagChunkRow:
    id: int
    source_id: int
    ordinal: int
    heading: str
    text: str
    uri: str
    title: str
    kind: str
    scope: str


@dataclass(frozen=True, slots=True)
class IngestJobRow:
    id: str
    kind: str
    scope: str
    status: str
    spec: str
    total: int
    done: int
    failed: int
    chunks: int
    error: str | None
    created_at: datetime
    updated_at: datetime

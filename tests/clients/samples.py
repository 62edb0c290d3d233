"""One realistic payload of every event type the protocol knows, and events it does not, for client dispatch tests."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from cowork.protocol import (
    EVENT_PAYLOADS,
    AgentSpawned,
    ApprovalRequested,
    ApprovalResolved,
    Ask,
    AskResolved,
    AssistantMessage,
    BudgetWarning,
    Citation,
    Citations,
    ContextCompressed,
    ErrorCode,
    ErrorEvent,
    ErrorSource,
    EventPayload,
    Guardrail,
    GuardrailCode,
    LogLine,
    ModelRetry,
    ModelStreamChunk,
    OperationStatus,
    OperationStatusChanged,
    Reasoning,
    Route,
    SessionUpdated,
    Todo,
    Todos,
    ToolCall,
    ToolInterrupted,
    ToolResult,
    Usage,
    UserMessage,
)

OP = "op_1"
CHILD = "op_child"
T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

UNKNOWN_TYPE = "hologram"
"""An event type no version of the protocol has (yet): what a newer server might send."""


def one_of_each(op: str = OP) -> list[EventPayload]:
    """Every payload class once, in the protocol's order; fails when the protocol gains a type this list lacks."""
    payloads: list[EventPayload] = [
        UserMessage(operation_id=op, message_id="m1", text="Why does the build fail?", client_message_id="c1"),
        OperationStatusChanged(operation_id=op, status=OperationStatus.RUNNING),
        ModelStreamChunk(operation_id=op, step=1, text="The build "),
        Reasoning(operation_id=op, step=1, text="Look at the log first."),
        AssistantMessage(operation_id=op, step=1, message_id="m2", text="The build fails."),
        ToolCall(operation_id=op, step=1, tool_call_id="t1", name="read", arguments={"filePath": "ci.log"}),
        ToolResult(operation_id=op, step=1, tool_call_id="t1", name="read", is_error=False, content="a\nb\n"),
        Usage(operation_id=op, step=1, provider="openai", model="gpt-test", input_tokens=120, output_tokens=8),
        LogLine(operation_id=op, tool_call_id="t1", text="reading…"),
        ErrorEvent(operation_id=op, code=ErrorCode.INTERNAL_ERROR, message="a hiccup", source=ErrorSource.RUNTIME),
        SessionUpdated(title="The failing build"),
        ToolInterrupted(operation_id=op, step=1, tool_call_id="t0", name="bash", side_effects=True, action="ask"),
        ApprovalRequested(
            request_id="r1", operation_id=op, tool_call_id="t2", name="bash", arguments={"command": "ls"}, reason="x"
        ),
        ApprovalResolved(request_id="r1", operation_id=op, tool_call_id="t2", approved=True),
        Ask(request_id="q1", operation_id=op, question="Which one?", options=["a", "b"]),
        AskResolved(request_id="q1", operation_id=op, answer="a"),
        Todos(operation_id=op, todos=[Todo(content="Read the log", status="in_progress", active_form="Reading")]),
        ContextCompressed(
            operation_id=op, summarized_messages=4, kept_messages=2, tokens_before=9000, tokens_after=1200
        ),
        Guardrail(operation_id=op, code=GuardrailCode.STUCK, message="the same call three times"),
        AgentSpawned(operation_id=op, child_operation_id=CHILD, agent_type="explore", task="find the config"),
        Route(operation_id=op, tier="cloud", provider="openai", model="gpt-test", code="multi_tool", reason="tools"),
        ModelRetry(
            operation_id=op,
            step=1,
            attempt=2,
            max_attempts=3,
            delay_seconds=0.5,
            code=ErrorCode.PROVIDER_ERROR,
            message="overloaded",
        ),
        BudgetWarning(operation_id=op, cap="daily", limit_usd=1.0, spent_usd=0.8, fraction=0.8),
        Citations(
            operation_id=op,
            step=0,
            citations=[
                Citation(
                    chunk_id=7,
                    path="docs/leave.md",
                    title="leave",
                    heading="Holiday policy",
                    similarity=0.61,
                    origin="search",
                )
            ],
        ),
    ]
    assert [type(p) for p in payloads] == list(EVENT_PAYLOADS.values()), "add a sample for the new event type"
    return payloads


def for_child(payload: EventPayload) -> EventPayload:
    """The same payload as a sub-agent's (operation `CHILD`), where it has an operation at all."""
    if getattr(payload, "operation_id", None) is None:
        return payload
    return payload.model_copy(update={"operation_id": CHILD})


def wire(seq: int, type_: str, payload: dict[str, Any], session_id: str = "ses_1") -> dict[str, Any]:
    """A `session/event` notification's params, as they come over the wire."""
    return {"sessionId": session_id, "seq": seq, "ts": T0.isoformat(), "type": type_, "payload": payload}


def transcript(session_id: str = "ses_1", op: str = OP) -> list[dict[str, Any]]:
    """A turn as a newer server might send it: every known type, the sub-agent's too, an unknown type, a known type
    with a payload this client cannot read, and the end of the turn; as wire dicts, numbered from 1."""
    payloads = one_of_each(op)
    events = [(p.event_type, p.wire()) for p in payloads]
    events += [(p.event_type, for_child(p).wire()) for p in payloads]
    events.append(("operation_status", {"operationId": CHILD, "status": "done"}))
    events.append((UNKNOWN_TYPE, {"operationId": op, "shape": "cube"}))
    events.append(("tool_call", {"operationId": op, "step": "one"}))  # malformed: not a ToolCall this client reads
    events.append(("operation_status", {"operationId": op, "status": "done"}))
    return [wire(seq, kind, payload, session_id) for seq, (kind, payload) in enumerate(events, 1)]

"""Protocol views of stored operations and requests."""

from __future__ import annotations

import json

from cowork.protocol import (
    ErrorCode,
    ErrorSource,
    OperationInfo,
    OperationStatus,
    PendingApproval,
    PendingQuestion,
    PendingRequests,
    ProtocolError,
    TokenUsage,
    ToolCallInfo,
    ToolCallStatus,
)
from cowork.store import HumanRequestRow, OperationRow, ToolCallRow

__all__ = ["busy", "operation_info", "operation_not_found", "pending_requests"]


def operation_not_found(operation_id: str) -> ProtocolError:
    return ProtocolError(
        ErrorCode.OPERATION_NOT_FOUND, f"No operation with id {operation_id!r}.", source=ErrorSource.RUNTIME
    )


def busy(message: str, operation_id: str) -> ProtocolError:
    """`busy`: what `message` asks cannot be done while `operation_id` is in play (its id in the details)."""
    return ProtocolError(ErrorCode.BUSY, message, source=ErrorSource.RUNTIME, details={"operationId": operation_id})


def pending_requests(rows: list[HumanRequestRow]) -> PendingRequests:
    approvals, questions = [], []
    for row in rows:
        payload = json.loads(row.payload)
        if row.kind == "approval":
            approvals.append(
                PendingApproval(
                    request_id=row.id,
                    session_id=row.session_id,
                    operation_id=row.operation_id,
                    tool_call_id=row.tool_call_id or "",
                    name=payload["name"],
                    arguments=payload["arguments"],
                    reason=payload.get("reason", ""),
                    rerun=payload.get("rerun", False),
                    dangerous=payload.get("dangerous", False),
                    preview=payload.get("preview"),
                    session_allow=payload.get("session_allow"),
                    created_at=row.created_at,
                )
            )
        else:
            questions.append(
                PendingQuestion(
                    request_id=row.id,
                    session_id=row.session_id,
                    operation_id=row.operation_id,
                    question=payload["question"],
                    options=payload.get("options", []),
                    kind="guardrail" if row.kind == "guardrail" else "question",
                    created_at=row.created_at,
                )
            )
    return PendingRequests(approvals=approvals, questions=questions)


def operation_info(op: OperationRow, calls: list[ToolCallRow], requests: list[HumanRequestRow]) -> OperationInfo:
    return OperationInfo(
        id=op.id,
        session_id=op.session_id,
        origin=op.origin,
        status=OperationStatus(op.status),
        step_count=op.step_count,
        usage=TokenUsage(
            input_tokens=op.input_tokens,
            output_tokens=op.output_tokens,
            cached_tokens=op.cached_tokens,
            reasoning_tokens=op.reasoning_tokens,
        ),
        cost_usd=op.cost_usd,
        created_at=op.created_at,
        updated_at=op.updated_at,
        parent_operation_id=op.parent_operation_id,
        agent_type=op.agent_type,
        provider=op.provider,
        model=op.model,
        error_code=op.error_code,
        error_message=op.error_message,
        summary=op.summary,
        tool_calls=[
            ToolCallInfo(
                tool_call_id=c.tool_call_id,
                step=c.step,
                name=c.name,
                arguments=json.loads(c.arguments),
                status=ToolCallStatus(c.status),
                side_effects=c.side_effects,
                is_error=c.is_error,
                result=c.result,
            )
            for c in calls
        ],
        pending=pending_requests(requests),
    )

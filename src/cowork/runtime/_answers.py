"""Answers from a person: approve or reject a tool call, answer a question or a guardrail's continue/stop."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from cowork.protocol import (
    ApprovalResolved,
    ApprovalRespondParams,
    AskResolved,
    AskRespondParams,
    ErrorCode,
    ErrorSource,
    EventPayload,
    GuardrailCode,
    ProtocolError,
    RespondResult,
    ToolCallStatus,
    ToolResult,
)
from cowork.sessions import Mutation
from cowork.store import Connection, HumanRequestRow, repos

from ._handles import Handle
from ._operations import Operations
from ._state import guardrail_ack, rejection_text, transition_call

__all__ = ["Answers"]

C = ToolCallStatus


class Answers:
    """`approval/respond` and `ask/respond`: resolve the request, then let its operation go on."""

    def __init__(self, operations: Operations) -> None:
        self._ops = operations

    async def _request(self, request_id: str) -> HumanRequestRow:
        row = await self._ops.deps.db.read(lambda conn: repos.human_requests.get(conn, request_id))
        if row is None:
            raise ProtocolError(
                ErrorCode.REQUEST_NOT_FOUND,
                f"No approval or question with id {request_id!r}.",
                source=ErrorSource.RUNTIME,
            )
        return row

    @staticmethod
    def _already(row: HumanRequestRow, response: dict[str, Any]) -> RespondResult:
        """A repeat of the same answer is a no-op; anything else on a closed request is an error."""
        if row.status == "resolved" and row.response is not None and json.loads(row.response) == response:
            return RespondResult(request_id=row.id, duplicate=True)
        state = "cancelled (its turn ended)" if row.status == "cancelled" else "already answered"
        raise ProtocolError(
            ErrorCode.ALREADY_RESOLVED,
            f"Request {row.id} was {state}; this answer changes nothing.",
            source=ErrorSource.RUNTIME,
            details={"status": row.status, "response": json.loads(row.response) if row.response else None},
        )

    async def respond_approval(self, params: ApprovalRespondParams) -> RespondResult:
        """Approve or reject a waiting tool call, then let its operation go on.

        Raises:
            ProtocolError: `request_not_found`; `already_resolved` for a different answer to a closed request.
        """
        response: dict[str, Any] = {"approved": params.approved}
        if params.message:
            response["message"] = params.message
        if params.scope == "session" and params.approved:
            response["scope"] = params.scope
        row = await self._request(params.request_id)
        if row.kind != "approval":
            raise ProtocolError(
                ErrorCode.REQUEST_NOT_FOUND,
                f"Request {row.id} is a {row.kind}, not an approval; answer it with ask/respond.",
                source=ErrorSource.RUNTIME,
            )
        if row.status != "pending":
            return self._already(row, response)
        allow: str | None = None
        if params.scope == "session" and params.approved:
            allow = json.loads(row.payload).get("allow")
            if not allow:
                raise ProtocolError(
                    ErrorCode.INVALID_PARAMS,
                    "This call cannot be allowed for the whole session (it was flagged as dangerous, or it chains "
                    "commands); approve it once instead.",
                    source=ErrorSource.RUNTIME,
                )
        if await self._forwarded(row, "approval", params.model_dump(mode="json", by_alias=True, exclude_none=True)):
            return RespondResult(request_id=row.id, duplicate=False)
        async with self._ops.lock(row.operation_id):
            handle = await self._ops.load(row.operation_id)
            await self._hold(handle)
            entry = handle.state.calls.get(row.tool_call_id or "")
            if entry is None or entry.status != C.AWAITING_APPROVAL:
                return self._already(await self._request(params.request_id), response)
            outcome: list[ToolResult] = []
            handle.runner.trace.approval_ended(
                entry.tool_call_id, ("approved_for_session" if allow else "approved") if params.approved else "rejected"
            )
            if params.approved:
                transition_call(entry, C.APPROVED)
                result = None
            else:
                transition_call(entry, C.REJECTED)
                entry.result, entry.is_error = rejection_text(params.message), False
                result = entry.result
                # Every client closes the call's card from its result, so a rejected call gets one too.
                outcome.append(
                    ToolResult(
                        operation_id=row.operation_id,
                        step=entry.step,
                        tool_call_id=entry.tool_call_id,
                        name=entry.name,
                        is_error=True,
                        rejected=True,
                        content=f"Rejected by the user: {params.message}" if params.message else "Rejected by the user",
                    )
                )
            await self._resolve(
                row,
                response,
                ApprovalResolved(
                    request_id=row.id,
                    operation_id=row.operation_id,
                    tool_call_id=entry.tool_call_id,
                    approved=params.approved,
                    message=params.message,
                    scope="session" if allow else "once",
                ),
                handle.runner.ledger_update(entry, result=result),
                *outcome,
            )
            if allow:
                # Before the operation goes on, so its next calls of this kind already run without asking.
                await self._ops.settings.allow(row.session_id, allow)
            if params.approved and handle.running:
                # Other calls of the step are running: start this one now rather than after them.
                handle.runner.start_calls([entry.tool_call_id])
            else:
                self._ops.launch(handle)
        return RespondResult(request_id=row.id, duplicate=False)

    async def respond_ask(self, params: AskRespondParams) -> RespondResult:
        """Answer a question (or a guardrail's continue/stop), then let the operation go on.

        Raises:
            ProtocolError: `request_not_found`; `already_resolved`; `invalid_params` for a guardrail answer other
                than `continue` or `stop`.
        """
        response = {"answer": params.answer}
        row = await self._request(params.request_id)
        if row.kind == "approval":
            raise ProtocolError(
                ErrorCode.REQUEST_NOT_FOUND,
                f"Request {row.id} is an approval; answer it with approval/respond.",
                source=ErrorSource.RUNTIME,
            )
        if row.kind == "guardrail":
            answer = params.answer.strip().lower()
            if answer not in ("continue", "stop"):
                raise ProtocolError(
                    ErrorCode.INVALID_PARAMS,
                    'A guardrail is answered with "continue" or "stop".',
                    source=ErrorSource.PROTOCOL,
                )
            response = {"answer": answer}
        if row.status != "pending":
            return self._already(row, response)
        if await self._forwarded(row, "ask", params.model_dump(mode="json", by_alias=True, exclude_none=True)):
            return RespondResult(request_id=row.id, duplicate=False)
        async with self._ops.lock(row.operation_id):
            handle = await self._ops.load(row.operation_id)
            await self._hold(handle)
            resolved = AskResolved(request_id=row.id, operation_id=row.operation_id, answer=response["answer"])
            if row.kind == "guardrail":
                await self._resolve(row, response, resolved, None)
                if response["answer"] == "stop":
                    await handle.runner.cancel_in_place(reason="Stopped by the user at a guardrail.")
                    self._ops.finish(handle)
                    return RespondResult(request_id=row.id, duplicate=False)
                payload = json.loads(row.payload)
                guardrail_ack(
                    handle.state, GuardrailCode(payload["code"]), handle.runner.limits, payload.get("details")
                )
            else:
                entry = handle.state.calls.get(row.tool_call_id or "")
                if entry is None or entry.status != C.AWAITING_ANSWER:
                    return self._already(await self._request(params.request_id), response)
                entry.result, entry.is_error = params.answer or "(no answer)", False
                transition_call(entry, C.FINISHED)
                await self._resolve(row, response, resolved, handle.runner.ledger_update(entry, result=entry.result))
            self._ops.launch(handle)
        return RespondResult(request_id=row.id, duplicate=False)

    async def _forwarded(self, row: HumanRequestRow, kind: str, params: dict[str, Any]) -> bool:
        """Replicas: when another replica runs the operation, hand the answer to it and wait until it is taken."""
        leases = self._ops.leases
        local = self._ops.get(row.operation_id)
        elsewhere = await leases.holder(row.operation_id) if local is None or not local.running else None
        if elsewhere is None:
            return False

        async def answered() -> bool:
            current = await self._ops.deps.db.read(lambda conn: repos.human_requests.get(conn, row.id))
            return current is None or current.status != "pending"

        await leases.forward(elsewhere, kind, params, answered)
        return True

    async def _hold(self, handle: Handle) -> None:
        """Replicas: hold the operation before answering it, so no other replica takes it over meanwhile.

        Raises:
            ProtocolError: `busy` when another replica took it a moment ago (answer again: it is forwarded then).
        """
        if not handle.running and not await self._ops.leases.take(handle.state.id):
            self._ops.forget(handle.state.id)
            raise ProtocolError(
                ErrorCode.BUSY,
                "Another replica has just taken this operation over; answer again and it is passed on to it.",
                source=ErrorSource.RUNTIME,
            )

    async def _resolve(
        self,
        row: HumanRequestRow,
        response: dict[str, Any],
        event: Any,
        ledger: Mutation | None,
        *after: EventPayload,
    ) -> None:
        """Mark the request answered and announce it; `after` follows in the same transaction."""
        now = datetime.now(UTC)
        response_json = json.dumps(response)

        def mutate(conn: Connection) -> None:
            if not repos.human_requests.resolve(conn, row.id, response=response_json, now=now):
                raise RuntimeError(f"request {row.id} was resolved concurrently")
            if ledger is not None:
                ledger(conn)

        journal = self._ops.deps.journal
        if not after:
            await journal.append(row.session_id, event, mutate=mutate)
            return
        # Queued back to back, before the journal's writer runs again, they share one batch and so one commit.
        pending = [journal.emit(row.session_id, event, mutate=mutate)]
        pending += [journal.emit(row.session_id, payload, urgent=True) for payload in after]
        for future in pending:
            await future

"""Steps that involve a person or end a step: approvals and questions, tool results and steering handed to the
model, and the endings (stop, finish, fail, cancel, interrupt)."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial

from pydantic_ai.messages import ModelRequest, ModelResponse, ToolReturnPart, UserPromptPart

from cowork.policy import describe_allowance
from cowork.protocol import (
    ApprovalRequested,
    Ask,
    ErrorCode,
    ErrorEvent,
    ErrorSource,
    Guardrail,
    OperationStatus,
    ToolCallStatus,
)
from cowork.store import Connection, repos
from cowork.tools._fsutil import run_blocking

from ._history import display_text
from ._runner import RequestHumanApprove, Stop
from ._runner_base import RunnerBase
from ._state import transition_call

__all__ = ["HumanSteps"]

C = ToolCallStatus
S = OperationStatus


class HumanSteps(RunnerBase):
    """`request_human_approve`, `ask`, `record_tool_results`, `apply_steering` and the endings."""

    async def _request_approvals(self, instruction: RequestHumanApprove) -> None:
        allow = instruction.allow or (None,) * len(instruction.tool_call_ids)
        # The diffs first, off the event loop (each reads a file of up to 2 MB); then every request at once.
        previews = [
            await run_blocking(partial(self._approval_preview, self.state.calls[call_id]))
            for call_id in instruction.tool_call_ids
        ]
        for call_id, reason, dangerous, key, preview in zip(
            instruction.tool_call_ids, instruction.reasons, instruction.dangerous, allow, previews, strict=True
        ):
            entry = self.state.calls[call_id]
            entry.rerun = entry.status == C.INTERRUPTED
            transition_call(entry, C.AWAITING_APPROVAL)
            self.trace.approval_started(entry, dangerous)
            key = None if dangerous else key
            session_allow = describe_allowance(key) if key else None
            payload = {
                "name": entry.name,
                "arguments": entry.arguments,
                "reason": reason,
                "rerun": entry.rerun,
                "dangerous": dangerous,
                "preview": preview,
                "allow": key,
                "session_allow": session_allow,
            }
            request_id, mutate = self._human_request(entry, "approval", payload)
            entry.request_id = request_id
            self._emit(
                ApprovalRequested(
                    request_id=request_id,
                    operation_id=self.state.id,
                    tool_call_id=call_id,
                    name=entry.name,
                    arguments=entry.arguments,
                    reason=reason,
                    rerun=entry.rerun,
                    dangerous=dangerous,
                    preview=preview,
                    session_allow=session_allow,
                ),
                mutate,
            )

    def _ask(self, call_id: str) -> None:
        entry = self.state.calls[call_id]
        question = str(entry.arguments.get("question", ""))
        options = [str(o) for o in entry.arguments.get("options", []) or []]
        transition_call(entry, C.AWAITING_ANSWER)
        request_id, mutate = self._human_request(entry, "question", {"question": question, "options": options})
        entry.request_id = request_id
        self._emit(Ask(request_id=request_id, operation_id=self.state.id, question=question, options=options), mutate)

    # -- results, steering, compression ---------------------------------------------------------------------

    def _record_tool_results(self) -> None:
        state = self.state
        parts = []
        for entry in state.calls.values():
            content = entry.result if entry.result is not None else "This tool call was cancelled before it finished."
            parts.append(ToolReturnPart(tool_name=entry.name, content=content, tool_call_id=entry.tool_call_id))
            state.chars_since_usage += len(content)
        state.calls = {}
        _, mutate = self._message_mutation(ModelRequest(parts=parts))
        self._emit(None, mutate)

    def _apply_steering(self) -> None:
        state = self.state
        steering, state.steering = state.steering, []
        ids = [s.id for s in steering]
        parts = [UserPromptPart(s.text, timestamp=datetime.now(UTC)) for s in steering]
        state.chars_since_usage += sum(len(s.text) for s in steering)
        _, store = self._message_mutation(ModelRequest(parts=list(parts)))

        def mutate(conn: Connection) -> None:
            store(conn)
            repos.inputs.mark_applied(conn, ids)

        self._emit(None, mutate)

    async def _stop(self, stop: Stop) -> None:
        self._emit(Guardrail(operation_id=self.state.id, code=stop.code, message=stop.message))
        await self._set_status(S.ERROR, code=ErrorCode(str(stop.code)), reason=stop.message)

    async def _finish(self) -> None:
        last = self.state.messages[-1] if self.state.messages else None
        if self.state.origin in ("compact", "observe"):
            summary = self.state.summary or ""
        else:
            summary = display_text(last) if isinstance(last, ModelResponse) else ""
        self.state.summary = summary
        await self._set_status(S.DONE, summary=summary)

    async def _fail(self, code: ErrorCode, message: str, source: ErrorSource) -> None:
        self._emit(ErrorEvent(operation_id=self.state.id, code=code, message=message, source=source))
        self._close_calls(C.CANCELLED)
        await self._set_status(S.ERROR, code=code, reason=message)

    def _close_calls(self, status: ToolCallStatus) -> None:
        """End the open calls of the latest response and give the model their results, so history stays valid."""
        state = self.state
        if not state.calls:
            return
        for entry in state.calls.values():
            if not entry.status.is_resolved:
                transition_call(entry, status)
                self._emit(None, self.ledger_update(entry))
        self._record_tool_results()

    async def cancel_in_place(self, reason: str = "Cancelled by the user.") -> None:
        """End the operation as cancelled: open calls and pending requests closed, history left valid."""
        state = self.state
        now = datetime.now(UTC)
        self._close_calls(C.CANCELLED)

        def close_requests(conn: Connection) -> None:
            repos.human_requests.cancel_pending(conn, state.id, now=now)

        self._emit(None, close_requests)
        await self._set_status(S.CANCELLED, code=ErrorCode.CANCELLED, reason=reason)

    async def _interrupt(self) -> None:
        for entry in self.state.calls.values():
            if entry.status == C.STARTED:
                transition_call(entry, C.INTERRUPTED)
                self._emit(None, self.ledger_update(entry))
        await self._set_status(S.INTERRUPTED, code=ErrorCode.INTERRUPTED, reason="The server stopped during this turn.")

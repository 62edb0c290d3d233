"""What every step executor of an operation shares: its dependencies, the runtime's hooks, and the helpers that
persist a step (events, messages, status, ledger rows, requests to a person, guardrail pauses)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelRequest, ModelResponse

from cowork.models import ModelTarget
from cowork.policy import PolicyDecision
from cowork.protocol import (
    Ask,
    ErrorCode,
    EventPayload,
    Guardrail,
    OperationStatus,
    OperationStatusChanged,
    ToolCallStatus,
)
from cowork.sessions import Mutation, new_id
from cowork.store import Connection, HumanRequestRow, MessageRow, repos
from cowork.tools import ToolRegistry

from ._deps import RunnerDeps, RunnerHooks
from ._history import display_text, dump_message
from ._runner import Pause
from ._state import GUARDRAIL_QUESTIONS, LedgerEntry, Limits, OperationState, transition
from ._trace import OperationTrace

__all__ = ["RunnerBase"]

C = ToolCallStatus
S = OperationStatus


class RunnerBase:
    """The state and persistence helpers of one operation's runner; the step executors build on it."""

    def __init__(
        self,
        deps: RunnerDeps,
        state: OperationState,
        *,
        target: ModelTarget,
        limits: Limits,
        tools: ToolRegistry,
        workspace: Path,
        hooks: RunnerHooks,
    ) -> None:
        self.deps = deps
        self.state = state
        self.target = target
        self.limits = limits
        self.tools = tools
        self.workspace = workspace
        self.hooks = hooks
        self.interrupted_by_shutdown = False
        self._prompt_extras: str | None = None
        """Skills and memory for the system prompt, read once per run (not at every step)."""
        """The path policy for tool calls and the configuration it was built from (see `_path_policy`)."""
        self._inflight: dict[str, asyncio.Task[None]] = {}
        """Tool calls running now, each in its own task (its own cancel scope)."""
        self.trace = OperationTrace(deps.tracing, state, target)

    # -- helpers ----------------------------------------------------------------------------------------------

    def _approval_preview(self, entry: LedgerEntry) -> str | None:
        """The diff an `edit` or `write` call would make, for its approval (the executors know how)."""
        return None

    def _emit(
        self, payload: EventPayload | None, mutate: Mutation | None = None, *, urgent: bool = False
    ) -> asyncio.Future[Any]:
        return self.deps.journal.emit(self.state.session_id, payload, mutate=mutate, urgent=urgent)

    def _message_mutation(self, message: ModelRequest | ModelResponse) -> tuple[str, Mutation]:
        """Append a model-facing message to the thread (in the journal's transaction)."""
        state = self.state
        message_id = new_id("msg")
        position = state.next_position
        state.next_position += 1
        state.add_message(message, position)
        row = MessageRow(
            id=message_id,
            session_id=state.session_id,
            operation_id=state.id,
            position=position,
            kind="request" if isinstance(message, ModelRequest) else "response",
            text=display_text(message),
            model_message=dump_message(message),
            created_at=datetime.now(UTC),
            thread_id=state.thread_id,
        )
        return message_id, lambda conn: repos.messages.insert(conn, row)

    async def _set_status(
        self,
        status: OperationStatus,
        *,
        code: ErrorCode | None = None,
        reason: str | None = None,
        summary: str | None = None,
    ) -> None:
        state = self.state
        transition(state, status)
        now = datetime.now(UTC)
        step = state.step

        def mutate(conn: Connection) -> None:
            repos.operations.set_status(
                conn,
                state.id,
                status,
                now=now,
                step_count=step,
                error_code=str(code) if code else None,
                error_message=reason if code else None,
                summary=summary,
            )

        if status.has_stopped:
            self.trace.end(status, reason)
        await self._emit(
            OperationStatusChanged(
                operation_id=state.id,
                status=status,
                code=code,
                reason=reason,
                parent_operation_id=state.parent_id,
                trace_id=self.trace.trace_id if self.trace.on else None,
            ),
            mutate,
            urgent=True,
        )
        self.hooks.on_status(state)

    def _policy(self, entry: LedgerEntry) -> PolicyDecision:
        """Whether a call runs, asks, or is a question (`OperationRunner` decides)."""
        raise NotImplementedError

    def ledger_update(
        self, entry: LedgerEntry, *, result: str | None = None, meta: dict[str, Any] | None = None
    ) -> Mutation:
        op_id, call_id, status, is_error = self.state.id, entry.tool_call_id, entry.status, entry.is_error
        now = datetime.now(UTC)
        meta_json = json.dumps(meta) if meta else None

        def mutate(conn: Connection) -> None:
            repos.tool_calls.update(
                conn, op_id, call_id, status=status, now=now, result=result, is_error=is_error, meta=meta_json
            )

        return mutate

    def _human_request(self, entry: LedgerEntry | None, kind: str, payload: dict[str, Any]) -> tuple[str, Mutation]:
        state = self.state
        row = HumanRequestRow(
            id=new_id("req"),
            session_id=state.session_id,
            operation_id=state.id,
            kind=kind,
            tool_call_id=entry.tool_call_id if entry else None,
            payload=json.dumps(payload),
            status="pending",
            created_at=datetime.now(UTC),
        )
        ledger = self.ledger_update(entry) if entry else None

        def mutate(conn: Connection) -> None:
            repos.human_requests.insert(conn, row)
            if ledger is not None:
                ledger(conn)

        return row.id, mutate

    async def _pause(self, pause: Pause, *, details: dict[str, Any] | None = None) -> None:
        state = self.state
        question = GUARDRAIL_QUESTIONS[pause.code].format(**pause.details)
        payload = {"code": str(pause.code), "question": question, "options": ["continue", "stop"], "details": details}
        request_id, mutate = self._human_request(None, "guardrail", payload)
        self._emit(
            Guardrail(operation_id=state.id, code=pause.code, message=question, request_id=request_id, details=details),
            mutate,
        )
        self._emit(
            Ask(
                request_id=request_id,
                operation_id=state.id,
                question=question,
                options=["continue", "stop"],
                kind="guardrail",
            )
        )
        await self._set_status(S.WAITING_FOR_HUMAN, code=ErrorCode(str(pause.code)), reason=question)

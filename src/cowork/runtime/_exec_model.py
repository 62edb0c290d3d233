"""Model steps: the system prompt and settings, one model request (budget admitted first, usage charged after, its
deltas coalesced into few events by `_coalesce`), the response recorded with its tool calls, and context
compression."""

from __future__ import annotations

import json
import time
from datetime import UTC, date, datetime
from pathlib import Path

from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RequestUsage

from cowork.models import Finished, RetryNotice, RetryPolicy, TextDelta, stream_with_retries
from cowork.models import with_instructions as _with_instructions
from cowork.prompts import PromptVariables, render_system_prompt, skills_directories
from cowork.protocol import (
    AssistantMessage,
    ErrorCode,
    ErrorSource,
    EventPayload,
    GuardrailCode,
    ModelRetry,
    ModelStreamChunk,
    OperationStatus,
    ProtocolError,
    Reasoning,
    ToolCall,
    ToolCallStatus,
)
from cowork.store import Connection, ToolCallRow, repos
from cowork.usage import Charge, ModelCall, Spend, admit, charge

from ._coalesce import Delta, DeltaCoalescer
from ._compress import compress
from ._history import display_text
from ._runner import Pause, estimate_tokens
from ._runner_base import RunnerBase
from ._state import LedgerEntry

__all__ = ["ModelSteps"]

C = ToolCallStatus
S = OperationStatus
_PROMPT_FOR_AGENT = {
    None: "system",
    "explore": "subagent_explore",
    "research": "subagent_research",
    "general": "subagent_general",
}


_PLAN_MODE_PROMPT = """

# Plan mode

Plan mode is on for this session. Only tools that change nothing run: read, search, list, fetch, and shell
commands that only read. Anything that would write, edit, delete, install or send is refused. Investigate what you
need, then write the plan as todos (todoWrite): concrete steps, the files each touches, how you will check the
result. Present it briefly and ask the user to approve it; they leave plan mode (/plan off) when they agree, and
then you carry it out."""


class ModelSteps(RunnerBase):
    """`call_llm` and `compress_context`."""

    def _system_prompt(self) -> str:
        agent = self.deps.config.agent
        workspace = str(self.workspace)
        output = agent.output_directory or workspace
        return render_system_prompt(
            PromptVariables(
                working_directory=workspace,
                output_directory=output,
                uploads_directory=str(Path(output) / "uploads"),
                model_name=f"{self.target.provider}:{self.target.model}",
                today=date.today(),
                user_name=agent.user_name,
                knowledge_cutoff=agent.knowledge_cutoff,
                skills_directory=skills_directories(self.workspace, self.deps.home),
            ),
            template=_PROMPT_FOR_AGENT.get(self.state.agent_type, "system"),
            extras=(self._prompt_extras or "") + (_PLAN_MODE_PROMPT if self._plan_mode() else ""),
        )

    def _plan_mode(self) -> bool:
        return self.hooks.session_flags(self.state.session_id).plan

    def _settings(self) -> ModelSettings:
        agent = self.deps.config.agent
        # One attempt per request at the SDK level: `stream_with_retries` owns retrying (and tells the user).
        settings = ModelSettings(timeout=agent.request_timeout_seconds, max_retries=0)
        effort = self.hooks.session_flags(self.state.session_id).reasoning_effort or agent.reasoning_effort
        if effort is not None:
            settings["thinking"] = False if effort == "off" else effort  # type: ignore[typeddict-item]
        return settings

    def _retry_policy(self) -> RetryPolicy:
        agent = self.deps.config.agent
        return RetryPolicy(
            max_retries=agent.provider_max_retries,
            base_seconds=agent.retry_base_seconds,
            max_seconds=agent.retry_max_seconds,
            max_retry_after_seconds=agent.max_retry_after_seconds,
        )

    # -- call_llm ---------------------------------------------------------------------------------------------

    async def _call_llm(self) -> bool:
        """One model request; False when a budget refused it (the operation then waits or has failed)."""
        state, journal = self.state, self.deps.journal
        await self.deps.journal.flush()  # the previous call's usage row is in the ledger before spend is read
        spend = await self.deps.usage.spend(state.root)
        if not await self._within_budget(spend):
            return False
        state.step += 1
        step = state.step
        self.trace.start_step(step)
        model = await self.deps.models.get(self.target)
        messages = _with_instructions(state.messages, self._system_prompt())

        def publish(delta: Delta) -> None:
            kind = ModelStreamChunk if isinstance(delta, TextDelta) else Reasoning
            journal.emit(state.session_id, kind(operation_id=state.id, step=step, text=delta.text))

        deltas = DeltaCoalescer(publish)

        async def announce_retry(notice: RetryNotice) -> None:
            call.retries += 1
            deltas.flush()  # nothing is held (only a request that streamed nothing is retried), but order is kept
            journal.emit(
                state.session_id,
                ModelRetry(
                    operation_id=state.id,
                    step=step,
                    attempt=notice.attempt,
                    max_attempts=notice.max_attempts,
                    delay_seconds=round(notice.delay, 3),
                    code=notice.error.code,
                    message=notice.error.message,
                ),
            )

        response: ModelResponse | None = None
        with self.trace.model_call(step) as call:
            try:
                async for event in stream_with_retries(
                    model,
                    messages,
                    self.tools.specs(),
                    settings=self._settings(),
                    policy=self._retry_policy(),
                    on_retry=announce_retry,
                ):
                    if isinstance(event, Finished):
                        response = event.response
                    else:
                        call.first_token()
                        deltas.add(event)
            finally:
                # However the stream ends (finished, a provider error, the turn cancelled), what it streamed is
                # logged, and before anything else about this step.
                deltas.flush()
            assert response is not None
            cost = self._record_response(response, spend)
            call.finished(response, cost)
        return True

    async def _within_budget(self, spend: Spend) -> bool:
        """Refuse a call that would take spend over a cap, before it is made: pause (or fail, for a sub-agent)."""
        state, usage = self.state, self.deps.usage
        unmeasured = 0
        if not state.last_input_tokens:
            # No response has measured the request yet: count what it carries besides the history, the system
            # prompt and the tool definitions (often more than the user's message), or the first call of every
            # request and sub-agent is under-estimated.
            unmeasured = len(self._system_prompt()) + sum(
                len(spec.name) + len(spec.description) + len(json.dumps(spec.parameters_json_schema))
                for spec in self.tools.specs()
            )
        refusal = admit(
            usage,
            spend,
            provider=self.target.provider,
            model=self.target.model,
            input_tokens=estimate_tokens(state, unmeasured),
            allowed=frozenset(state.budget_allowed),
        )
        if refusal is None:
            return True
        if state.parent_id is not None or state.origin == "automation":
            raise ProtocolError(
                ErrorCode.BUDGET_EXCEEDED,
                refusal.message().split(" Continue once")[0] + " The request that started this work can continue.",
                source=ErrorSource.RUNTIME,
                details=refusal.details(),
            )
        await self._pause(
            Pause(GuardrailCode.BUDGET_EXCEEDED, {"message": refusal.message()}), details=refusal.details()
        )
        return False

    def _account(self, usage: RequestUsage, spend: Spend, now: datetime) -> Charge:
        """One model call's usage and cost (see `cowork.usage.charge`); its cost joins the cost cap's window."""
        state = self.state
        call = ModelCall(state.session_id, state.id, state.root, state.step, self.target.provider, self.target.model)
        bill = charge(self.deps.usage, call, usage, spend, now, prices=self.deps.config.prices)
        state.spend.append((time.monotonic(), bill.cost_usd))
        return bill

    def _record_response(self, response: ModelResponse, spend: Spend) -> float | None:
        """Store the response, its calls in the ledger and the step's usage; announce them. One transaction.

        Returns:
            The call's cost in USD (None when its price is unknown).
        """
        state = self.state
        step = state.step
        usage = response.usage
        state.last_input_tokens, state.last_output_tokens, state.chars_since_usage = (
            usage.input_tokens,
            usage.output_tokens,
            0,
        )
        entries = [self._ledger_entry(call) for call in response.parts if isinstance(call, ToolCallPart)]
        state.calls = {e.tool_call_id: e for e in entries}
        message_id, store_message = self._message_mutation(response)
        now = datetime.now(UTC)
        bill = self._account(usage, spend, now)
        account, usage_events = bill.mutate, bill.events

        def mutate(conn: Connection) -> None:
            store_message(conn)
            account(conn)
            repos.tool_calls.insert_many(
                conn,
                [
                    ToolCallRow(
                        operation_id=state.id,
                        tool_call_id=e.tool_call_id,
                        session_id=state.session_id,
                        step=step,
                        name=e.name,
                        arguments=json.dumps(e.arguments),
                        side_effects=e.side_effects,
                        status=e.status,
                        created_at=now,
                        updated_at=now,
                    )
                    for e in entries
                ],
            )

        text = display_text(response)
        first: EventPayload | None = (
            AssistantMessage(operation_id=state.id, step=step, message_id=message_id, text=text) if text else None
        )
        self._emit(first, mutate)
        for e in entries:
            self._emit(
                ToolCall(
                    operation_id=state.id,
                    step=step,
                    tool_call_id=e.tool_call_id,
                    name=e.name,
                    arguments=e.arguments,
                    side_effects=e.side_effects,
                    needs_approval=self._policy(e).decision == "ask",
                )
            )
        for event in usage_events:
            self._emit(event)
        return bill.cost_usd if bill.cost_known else None

    def _ledger_entry(self, call: ToolCallPart) -> LedgerEntry:
        invalid: str | None = None
        try:
            arguments = call.args_as_dict(raise_if_invalid=True)
        except (ValueError, AssertionError):
            arguments, invalid = {}, str(call.args)
        tool = self.tools.get(call.tool_name)
        side_effects = tool.side_effects_of(arguments) if tool is not None and invalid is None else False
        return LedgerEntry(
            tool_call_id=call.tool_call_id,
            step=self.state.step,
            name=call.tool_name,
            arguments=arguments,
            side_effects=side_effects,
            status=C.REQUESTED,
            invalid_arguments=invalid,
        )

    async def _compress(self) -> None:
        model = await self.deps.models.get(self.target)
        await self.deps.journal.flush()
        spend = await self.deps.usage.spend(self.state.root)
        compact = self.state.origin == "compact"
        outcome = await compress(
            self.state,
            self.limits,
            model,
            settings=self._settings(),
            keep_tokens=0 if compact else None,  # `/compact`: all but the latest exchange
            focus=self.state.compact_focus,
        )
        if outcome is None:
            self.state.compress_failed_at_step = self.state.step
            if compact:
                self.state.summary = "Nothing to compress yet: the conversation is too short."
            return
        payload, mutate, usage = outcome
        if compact:
            self.state.summary = (
                f"Compressed {payload.summarized_messages} earlier messages into a summary: about "
                f"{payload.tokens_before:,} → {payload.tokens_after:,} tokens of history."
            )
        bill = self._account(usage, spend, datetime.now(UTC))
        account, usage_events = bill.mutate, bill.events

        def record(conn: Connection) -> None:
            mutate(conn)
            account(conn)

        done = self._emit(payload, record, urgent=True)
        for event in usage_events:
            self._emit(event)
        await done

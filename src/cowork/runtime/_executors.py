"""Executors: carry out the runner's instructions for one operation, persisting every step as it happens.

`OperationRunner.run` loops: ask the runner (`decide`) what to do, execute it, repeat, until the operation
waits for a person, ends, or is cancelled. Every change is written through the journal together with the
event that announces it, and a tool with side effects is on record as started before it runs.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, assert_never

from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RequestUsage

from cowork.config import CoworkConfig
from cowork.models import (
    Finished,
    ModelCache,
    ModelTarget,
    ReasoningDelta,
    RetryNotice,
    RetryPolicy,
    TextDelta,
    cost_of,
    stream_with_retries,
)
from cowork.models import with_instructions as _with_instructions
from cowork.policy import CallFacts, PathPolicy, PolicyContext, PolicyDecision, ToolOverride, classify
from cowork.policy import decide as decide_approval
from cowork.prompts import PromptVariables, gather_prompt_extras, render_system_prompt
from cowork.protocol import (
    ApprovalRequested,
    Ask,
    AssistantMessage,
    BudgetWarning,
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
    ProtocolError,
    Reasoning,
    ToolCall,
    ToolCallStatus,
    ToolResult,
    Usage,
)
from cowork.sessions import Journal, Mutation, new_id
from cowork.store import Connection, Database, HumanRequestRow, MessageRow, ToolCallRow, UsageRow, repos
from cowork.tools import ToolContext, ToolError, ToolRegistry
from cowork.tools._fsutil import run_blocking
from cowork.usage import Spend, UsageService, check, crossings

from ._compress import compress
from ._history import display_text, dump_message
from ._runner import (
    ApplySteering,
    AskHuman,
    AwaitRunning,
    CallLLM,
    CallTool,
    CallToolsBatch,
    CompressContext,
    Finish,
    Instruction,
    Pause,
    RecordToolResults,
    RequestHumanApprove,
    Stop,
    Wait,
    decide,
    estimate_tokens,
)
from ._state import (
    GUARDRAIL_QUESTIONS,
    RESOLVED_CALLS,
    LedgerEntry,
    Limits,
    OperationState,
    transition,
    transition_call,
)

__all__ = ["OperationRunner", "RunnerDeps", "rejection_text"]

log = logging.getLogger(__name__)

C = ToolCallStatus
S = OperationStatus
_PROMPT_FOR_AGENT = {
    None: "system",
    "explore": "subagent_explore",
    "research": "subagent_research",
    "general": "subagent_general",
}


@dataclass(frozen=True)
class RunnerDeps:
    """What every operation's runner shares."""

    db: Database
    journal: Journal
    models: ModelCache
    config: CoworkConfig
    home: Path
    usage: UsageService
    bwrap: str | None = None
    """bubblewrap, when shell commands can run sandboxed."""


@dataclass
class RunnerHooks:
    """What a runner asks of the runtime: sub-agents, todos, being told its status changed."""

    spawn_agent: Callable[[OperationState, LedgerEntry, str, str, str | None], Awaitable[str]] | None = None
    set_todos: Callable[[OperationState, list[dict[str, str]]], Awaitable[None]] | None = None
    on_status: Callable[[OperationState], None] = field(default=lambda _state: None)
    session_flags: Callable[[str], SessionFlags] = field(default=lambda _sid: SessionFlags())
    """The session's live switches (network, yolo): read at every decision, so a toggle applies at once."""
    overrides: Callable[[], Mapping[str, ToolOverride]] = field(default=lambda: {})


@dataclass(frozen=True)
class SessionFlags:
    network: bool = False
    yolo: bool = False
    reasoning_effort: str | None = None


def rejection_text(message: str | None) -> str:
    note = f" Their note: {message}" if message else ""
    return f"The user rejected this tool call, so it did not run.{note} Do not retry it as is; choose another way."


class OperationRunner:
    """Advances one operation: decide, execute, persist, repeat."""

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
        self._inflight: dict[str, asyncio.Task[None]] = {}
        """Tool calls running now, each in its own task (its own cancel scope)."""

    # -- the loop ---------------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Advance until the operation waits for a person, ends, or is cancelled (then re-raises)."""
        try:
            if self._prompt_extras is None:
                workspace, home, skills = self.workspace, self.deps.home, self.state.agent_type is None
                self._prompt_extras = await run_blocking(
                    lambda: gather_prompt_extras(workspace, home, with_skills=skills)
                )
            if self.state.status != S.RUNNING:
                await self._set_status(S.RUNNING)
            while True:
                for instruction in decide(self.state, self.limits, self._policy, now=time.monotonic()):
                    if not await self._execute(instruction):
                        return
        except asyncio.CancelledError:
            await self._cancel_inflight()
            if self.interrupted_by_shutdown:
                await self._interrupt()
            else:
                await self.cancel_in_place()
            raise
        except ProtocolError as exc:
            await self._fail(exc.code, exc.message, exc.source)
        except Exception as exc:
            log.exception("operation %s failed", self.state.id)
            await self._fail(
                ErrorCode.INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}", ErrorSource.RUNTIME
            )

    def _policy(self, entry: LedgerEntry) -> PolicyDecision:
        tool = self.tools.get(entry.name)
        if tool is None or entry.invalid_arguments is not None:
            return PolicyDecision(
                "run", "fails without running"
            )  # the call returns an error to the model; nothing to approve
        config = self.deps.config.tools
        command = None
        raw_command = entry.arguments.get("command")
        if entry.name == "bash" and isinstance(raw_command, str):
            command = classify(raw_command, allow=config.commands.allow, deny=config.commands.deny)
        flags = self.hooks.session_flags(self.state.session_id)
        facts = CallFacts(
            tool=entry.name,
            risky=command.verdict != "safe" if command is not None else tool.needs_approval(entry.arguments),
            asks_user=tool.asks_user,
            arguments=entry.arguments,
            command=command,
            needs_network=bool(entry.arguments.get("needsNetwork")),
            mcp_server=server[0] if (server := tool.server_policy()) else None,
        )
        context = PolicyContext(
            mode=config.approval_mode,
            allow_list=frozenset(config.auto_approve),
            overrides=self.hooks.overrides(),
            automation=self.state.origin == "automation",
            yolo=flags.yolo,
            sandboxed=self._bwrap(flags) is not None,
            network=flags.network,
            server_policies=dict([server]) if server else {},
        )
        decision = decide_approval(facts, context)
        if decision.decision == "question" and self.state.parent_id is not None:
            return PolicyDecision("run", "a sub-agent cannot ask the user")  # the tool itself then says so
        return decision

    def _bwrap(self, flags: SessionFlags) -> str | None:
        return None if flags.yolo else self.deps.bwrap

    async def _execute(self, instruction: Instruction) -> bool:
        """Carry out one instruction; False when the loop should stop (waiting, paused, or ended)."""
        if isinstance(instruction, CallLLM):
            return await self._call_llm()
        elif isinstance(instruction, CallTool):
            await self._call_tools([instruction.tool_call_id])
        elif isinstance(instruction, CallToolsBatch):
            await self._call_tools(list(instruction.tool_call_ids))
        elif isinstance(instruction, AwaitRunning):
            await asyncio.wait(list(self._inflight.values()))
        elif isinstance(instruction, RequestHumanApprove):
            self._request_approvals(instruction)
        elif isinstance(instruction, AskHuman):
            self._ask(instruction.tool_call_id)
        elif isinstance(instruction, RecordToolResults):
            self._record_tool_results()
        elif isinstance(instruction, ApplySteering):
            self._apply_steering()
        elif isinstance(instruction, CompressContext):
            await self._compress()
        elif isinstance(instruction, Pause):
            await self._pause(instruction)
            return False
        elif isinstance(instruction, Stop):
            await self._stop(instruction)
            return False
        elif isinstance(instruction, Finish):
            await self._finish()
            return False
        elif isinstance(instruction, Wait):
            await self._set_status(S.WAITING_FOR_HUMAN)
            return False
        else:
            assert_never(instruction)
        return True

    # -- helpers ----------------------------------------------------------------------------------------------

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

        await self._emit(
            OperationStatusChanged(
                operation_id=state.id, status=status, code=code, reason=reason, parent_operation_id=state.parent_id
            ),
            mutate,
            urgent=True,
        )
        self.hooks.on_status(state)

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
            ),
            template=_PROMPT_FOR_AGENT.get(self.state.agent_type, "system"),
            extras=self._prompt_extras or "",
        )

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
        model = await self.deps.models.get(self.target)
        messages = _with_instructions(state.messages, self._system_prompt())

        async def announce_retry(notice: RetryNotice) -> None:
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
        async for event in stream_with_retries(
            model,
            messages,
            self.tools.specs(),
            settings=self._settings(),
            policy=self._retry_policy(),
            on_retry=announce_retry,
        ):
            if isinstance(event, TextDelta):
                journal.emit(state.session_id, ModelStreamChunk(operation_id=state.id, step=step, text=event.text))
            elif isinstance(event, ReasoningDelta):
                journal.emit(state.session_id, Reasoning(operation_id=state.id, step=step, text=event.text))
            elif isinstance(event, Finished):
                response = event.response
        assert response is not None
        self._record_response(response, spend)
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
        estimate = usage.estimate(
            self.target.provider, self.target.model, input_tokens=estimate_tokens(state, unmeasured)
        )
        refusal = check(usage.budgets, spend, estimate.usd, allowed=frozenset(state.budget_allowed))  # type: ignore[arg-type]
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

    def _account(self, usage: RequestUsage, spend: Spend, now: datetime) -> tuple[Mutation, list[EventPayload]]:
        """One model call's usage and cost: the store changes (usage ledger, operation totals) and the events
        (`usage`, and `budget_warning` for each cap whose warning share it crossed)."""
        state, step = self.state, self.state.step
        reasoning_tokens = max(usage.output_reasoning_tokens, int(usage.details.get("reasoning_tokens", 0)))
        cost = cost_of(
            self.target.provider,
            self.target.model,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached_tokens=usage.cache_read_tokens,
            overrides=self.deps.config.prices,
        )
        state.spend.append((time.monotonic(), cost.usd))
        row = UsageRow(
            session_id=state.session_id,
            operation_id=state.id,
            root_operation_id=state.root,
            step=step,
            provider=self.target.provider,
            model=self.target.model,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached_tokens=usage.cache_read_tokens,
            reasoning_tokens=reasoning_tokens,
            cost_usd=cost.usd,
            cost_known=cost.known,
            created_at=now,
        )
        record = UsageService.record(row)

        def mutate(conn: Connection) -> None:
            record(conn)
            repos.operations.add_usage(
                conn,
                state.id,
                step_count=step,
                now=now,
                input_tokens=row.input_tokens,
                output_tokens=row.output_tokens,
                cached_tokens=row.cached_tokens,
                reasoning_tokens=row.reasoning_tokens,
                cost_usd=row.cost_usd,
            )

        after = spend.plus(cost.usd)
        events: list[EventPayload] = [
            Usage(
                operation_id=state.id,
                step=step,
                provider=self.target.provider,
                model=self.target.model,
                input_tokens=row.input_tokens,
                output_tokens=row.output_tokens,
                cached_tokens=row.cached_tokens,
                reasoning_tokens=row.reasoning_tokens,
                cost_usd=cost.usd,
                cost_known=cost.known,
                interaction_cost_usd=round(after["interaction"], 6),
                day_cost_usd=round(after["daily"], 6),
            )
        ]
        events += [
            BudgetWarning(
                operation_id=state.id,
                cap=crossing.cap,
                limit_usd=crossing.limit_usd,
                spent_usd=round(crossing.spent_usd, 6),
                fraction=round(crossing.fraction, 4),
            )
            for crossing in crossings(self.deps.usage.budgets, spend, after)
        ]
        return mutate, events

    def _record_response(self, response: ModelResponse, spend: Spend) -> None:
        """Store the response, its calls in the ledger and the step's usage; announce them. One transaction."""
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
        account, usage_events = self._account(usage, spend, now)

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

    # -- call_tool / call_tools_batch -------------------------------------------------------------------------

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

    async def _call_tools(self, call_ids: list[str]) -> None:
        tasks = await self.start_calls(call_ids)
        await asyncio.wait(tasks)

    async def start_calls(self, call_ids: list[str]) -> list[asyncio.Task[None]]:
        """Mark calls started and start each in its own task (its own cancel scope); returns the tasks.

        Also used for a call approved while others of its step are still running, so it starts at once.
        """
        entries = [self.state.calls[i] for i in call_ids]
        mutations = []
        for entry in entries:
            transition_call(entry, C.STARTED)
            mutations.append(self.ledger_update(entry))

        def mark_started(conn: Connection) -> None:
            for mutate in mutations:
                mutate(conn)

        side_effects = any(e.side_effects for e in entries)
        started = self._emit(None, mark_started, urgent=side_effects)
        if side_effects:
            # Persist before side effects: after a crash this call shows as started, and is never silently re-run.
            await started
        loop = asyncio.get_running_loop()
        tasks = []
        for entry in entries:
            task = loop.create_task(self._run_one(entry), name=f"tool-{entry.name}-{entry.tool_call_id}")
            self._inflight[entry.tool_call_id] = task
            task.add_done_callback(functools.partial(self._forget, entry.tool_call_id))
            tasks.append(task)
        return tasks

    def _forget(self, call_id: str, _task: asyncio.Task[None]) -> None:
        self._inflight.pop(call_id, None)

    async def _cancel_inflight(self) -> None:
        tasks = list(self._inflight.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    async def _run_one(self, entry: LedgerEntry) -> None:
        content, is_error = await self._invoke(entry)
        entry.result, entry.is_error = content, is_error
        transition_call(entry, C.FINISHED)
        self.state.outcomes.append(is_error)
        self.state.signatures.append(entry.signature)
        self._emit(
            ToolResult(
                operation_id=self.state.id,
                step=entry.step,
                tool_call_id=entry.tool_call_id,
                name=entry.name,
                is_error=is_error,
                content=content,
            ),
            self.ledger_update(entry, result=content),
        )

    async def _invoke(self, entry: LedgerEntry) -> tuple[str, bool]:
        state = self.state
        tool = self.tools.get(entry.name)
        try:
            if tool is None:
                raise ToolError(
                    f"There is no tool named {entry.name!r}. Available tools: {', '.join(self.tools.names())}."
                )
            if entry.invalid_arguments is not None:
                raise ToolError(
                    f"The arguments for {entry.name} are not a valid JSON object: {entry.invalid_arguments!r}"
                )
            params = tool.parse(entry.arguments)
            return await tool.run(params, self._tool_context(entry)), False
        except ToolError as exc:
            return f"Error: {exc}", True
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("tool %s failed in operation %s", entry.name, state.id)
            return f"Error: the {entry.name} tool failed unexpectedly ({type(exc).__name__}: {exc}).", True

    def _tool_context(self, entry: LedgerEntry) -> ToolContext:
        state, hooks = self.state, self.hooks

        async def emit_log(text: str) -> None:
            self._emit(LogLine(operation_id=state.id, tool_call_id=entry.tool_call_id, text=text))

        async def set_todos(todos: list[dict[str, str]]) -> None:
            assert hooks.set_todos is not None
            await hooks.set_todos(state, todos)

        async def spawn(agent_type: str, task: str, model: str | None) -> str:
            assert hooks.spawn_agent is not None
            return await hooks.spawn_agent(state, entry, agent_type, task, model)

        config = self.deps.config
        flags = hooks.session_flags(state.session_id)
        home = self.deps.home
        paths = PathPolicy.build(
            self.workspace,
            home=home,
            output_dir=Path(config.agent.output_directory) if config.agent.output_directory else None,
            extra_read=config.tools.permissions.extra_read_roots,
            extra_write=[*config.tools.permissions.extra_write_roots, *config.tools.sandbox.extra_writable],
            deny=config.tools.permissions.deny,
        )
        return ToolContext(
            workspace=self.workspace,
            paths=paths,
            settings=config.tools,
            network=flags.network or flags.yolo,
            output_dir=home / "tool-output" / state.session_id,
            home=home,
            bwrap=self._bwrap(flags),
            session_id=state.session_id,
            operation_id=state.id,
            tool_call_id=entry.tool_call_id,
            log=emit_log,
            set_todos=set_todos if hooks.set_todos is not None else None,
            spawn_agent=spawn if hooks.spawn_agent is not None else None,
        )

    # -- request_human_approve / ask --------------------------------------------------------------------------

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

    def _request_approvals(self, instruction: RequestHumanApprove) -> None:
        for call_id, reason, dangerous in zip(
            instruction.tool_call_ids, instruction.reasons, instruction.dangerous, strict=True
        ):
            entry = self.state.calls[call_id]
            entry.rerun = entry.status == C.INTERRUPTED
            transition_call(entry, C.AWAITING_APPROVAL)
            payload = {
                "name": entry.name,
                "arguments": entry.arguments,
                "reason": reason,
                "rerun": entry.rerun,
                "dangerous": dangerous,
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

    async def _compress(self) -> None:
        model = await self.deps.models.get(self.target)
        await self.deps.journal.flush()
        spend = await self.deps.usage.spend(self.state.root)
        outcome = await compress(self.state, self.limits, model, settings=self._settings())
        if outcome is None:
            self.state.compress_failed_at_step = self.state.step
            return
        payload, mutate, usage = outcome
        account, usage_events = self._account(usage, spend, datetime.now(UTC))

        def record(conn: Connection) -> None:
            mutate(conn)
            account(conn)

        done = self._emit(payload, record, urgent=True)
        for event in usage_events:
            self._emit(event)
        await done

    # -- endings ----------------------------------------------------------------------------------------------

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

    async def _stop(self, stop: Stop) -> None:
        self._emit(Guardrail(operation_id=self.state.id, code=stop.code, message=stop.message))
        await self._set_status(S.ERROR, code=ErrorCode(str(stop.code)), reason=stop.message)

    async def _finish(self) -> None:
        last = self.state.messages[-1]
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
            if entry.status not in RESOLVED_CALLS:
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


def guardrail_ack(
    state: OperationState, code: GuardrailCode, limits: Limits, details: dict[str, Any] | None = None
) -> None:
    """The user said to go on past a guardrail: reset what tripped it."""
    if code == GuardrailCode.BUDGET_EXCEEDED and details and isinstance(details.get("cap"), str):
        state.budget_allowed.add(details["cap"])
    elif code == GuardrailCode.MAX_STEPS:
        state.step_limit = state.step + limits.max_steps
    elif code == GuardrailCode.STUCK:
        state.signatures.clear()
    elif code == GuardrailCode.COST_CAP:
        state.spend.clear()
    elif code == GuardrailCode.CHECKIN:
        state.checkin_at = time.monotonic() + limits.checkin_seconds

"""The runtime: starting, steering, answering, resuming, cancelling and recovering operations.

Operations live in the store; this keeps the ones in play in memory (a runner and, while it runs, a task),
and loads any other from the store when something touches it (an approval after a restart, a resume).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

from cowork.models import ModelSelector, ModelTarget, estimate_cost, presets
from cowork.policy import ToolOverride
from cowork.protocol import (
    ApprovalResolved,
    ApprovalRespondParams,
    AskResolved,
    AskRespondParams,
    ErrorCode,
    ErrorSource,
    GuardrailCode,
    OperationInfo,
    OperationStatus,
    OperationStatusChanged,
    PendingRequests,
    ProtocolError,
    RespondResult,
    Route,
    SessionInfo,
    SessionUpdated,
    SessionUpdateParams,
    Todo,
    Todos,
    ToolCallStatus,
    ToolInfo,
    ToolInterrupted,
    ToolSetPolicyParams,
    TurnRetryParams,
    TurnRetryResult,
    TurnStartParams,
    TurnStartResult,
    TurnSteerParams,
    TurnSteerResult,
    UserMessage,
)
from cowork.providers import ProviderService
from cowork.sessions import AUTO_MODEL, Mutation, SessionService, new_id, session_not_found
from cowork.store import (
    Connection,
    HumanRequestRow,
    MessageRow,
    OperationInputRow,
    OperationRow,
    SessionRow,
    ToolCallRow,
    repos,
)
from cowork.tools import ToolRegistry

from ._executors import (
    OperationRunner,
    RunnerDeps,
    RunnerHooks,
    SessionFlags,
    guardrail_ack,
    rejection_text,
)
from ._history import dump_message, repair_with_positions
from ._loading import load_operation_state, read_thread
from ._routing import Routed, TurnRouter
from ._state import Limits, OperationState, Steer, transition_call
from ._subagents import SubAgents
from ._views import operation_info, operation_not_found, pending_requests

__all__ = ["Runtime"]

log = logging.getLogger(__name__)

S = OperationStatus
C = ToolCallStatus
_DEFAULT_TITLE = "New session"
_DEFAULT_CONTEXT_WINDOW = 128_000
_HISTORY_CACHE = 64
_TERMINAL = frozenset({S.DONE, S.ERROR, S.CANCELLED})
_SUB_AGENT_EXCLUDED = {"spawnAgent", "ask", "todoWrite"}
_EXPLORE_EXCLUDED = {*_SUB_AGENT_EXCLUDED, "memory", "skill", "webSearch", "webFetch"}
"""Explore agents search the workspace with read-only tools: no web, no memory notes, no skills."""
_RESEARCH_TOOLS = {"webSearch", "webFetch", "read"}


def _flags_of(session: SessionRow) -> SessionFlags:
    return SessionFlags(network=session.network, yolo=session.yolo, reasoning_effort=session.reasoning_effort)


def _route_event(operation_id: str, routed: Routed, ask_id: str | None = None) -> Route:
    decision = routed.decision
    return Route(
        operation_id=operation_id,
        tier=decision.tier.name,
        provider=decision.tier.provider,
        model=decision.tier.model,
        code=str(decision.code),
        reason=decision.reason,
        notify=decision.notify,
        estimated_tokens=decision.estimated_tokens,
        ask_id=ask_id,
        warning=routed.warning,
    )


def _message_tokens(messages: list[ModelMessage]) -> int:
    """A cheap estimate of a history's size (about four characters a token)."""
    return sum(len(str(m)) for m in messages) // 4


def _title_from(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 60 else line[:59].rstrip() + "…"


@dataclass
class _Handle:
    """An operation in play: its runner, its task while it runs, and a future that resolves when it ends."""

    runner: OperationRunner
    done: asyncio.Future[None]
    task: asyncio.Task[None] | None = None
    children: set[str] = field(default_factory=set)
    spawning: int = 0
    """Sub-agents being started or run for this operation right now (the concurrency limit counts these)."""

    @property
    def state(self) -> OperationState:
        return self.runner.state

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()


@dataclass(frozen=True)
class _CachedThread:
    messages: list[ModelMessage]
    positions: list[int]
    next_position: int


class Runtime:
    """The operations side of the core."""

    def __init__(
        self,
        deps: RunnerDeps,
        sessions: SessionService,
        selector: ModelSelector,
        tools: ToolRegistry,
        providers: ProviderService,
    ) -> None:
        self._deps = deps
        self._sessions = sessions
        self._selector = selector
        self._tools = tools
        self.router = TurnRouter(deps.config, selector, providers)
        self._handles: dict[str, _Handle] = {}
        self._waiting: dict[str, str] = {}
        """session → its top-level operation waiting for a person (known from the store, maybe not loaded)."""
        self._start_locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._op_locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._threads: OrderedDict[str, _CachedThread] = OrderedDict()
        self._shutting_down = False
        self._flags: dict[str, SessionFlags] = {}
        self._overrides: dict[str, ToolOverride] = {}
        self.agents = SubAgents(self)
        sessions.set_active_operation_lookup(self.active_operation)

    # -- lookups ----------------------------------------------------------------------------------------------

    def active_operation(self, session_id: str) -> str | None:
        """The session's top-level operation that is running or waiting for a person."""
        for handle in self._handles.values():
            state = handle.state
            if (
                state.session_id == session_id
                and state.parent_id is None
                and state.status in (S.RUNNING, S.WAITING_FOR_HUMAN)
            ):
                return state.id
        return self._waiting.get(session_id)

    def running_count(self) -> int:
        return sum(1 for h in self._handles.values() if h.running)

    def _limits(self, target: ModelTarget) -> Limits:
        window = _DEFAULT_CONTEXT_WINDOW
        preset = presets().get(target.provider)
        for model in preset.models if preset else ():
            if model.id == target.model and model.context_window:
                window = model.context_window
        return Limits.from_config(self._deps.config.agent, context_window=window)

    def _tools_for(self, agent_type: str | None) -> ToolRegistry:
        if agent_type is None:
            if self._deps.config.agent.max_agent_depth == 0:
                return self._tools.without({"spawnAgent"})
            return self._tools
        if agent_type == "explore":
            return self._tools.only(lambda t: not t.side_effects and t.name not in _EXPLORE_EXCLUDED)
        if agent_type == "research":
            return self._tools.only(lambda t: t.name in _RESEARCH_TOOLS)
        return self._tools.without(_SUB_AGENT_EXCLUDED)

    def _target_for(self, op: OperationRow) -> ModelTarget:
        return self._selector.resolve(op.provider, op.model)

    # -- running operations -----------------------------------------------------------------------------------

    def _make_handle(self, state: OperationState, target: ModelTarget, workspace: Path) -> _Handle:
        runner = OperationRunner(
            self._deps,
            state,
            target=target,
            limits=self._limits(target),
            tools=self._tools_for(state.agent_type),
            workspace=workspace,
            hooks=RunnerHooks(
                spawn_agent=self.agents.spawn,
                set_todos=self._set_todos,
                on_status=self._on_status,
                session_flags=self.session_flags,
                overrides=lambda: self._overrides,
            ),
        )
        handle = _Handle(runner=runner, done=asyncio.get_running_loop().create_future())
        self._handles[state.id] = handle
        return handle

    def _launch(self, handle: _Handle) -> None:
        if handle.running or self._shutting_down:
            return
        handle.task = asyncio.get_running_loop().create_task(self._drive(handle), name=f"operation-{handle.state.id}")

    async def _drive(self, handle: _Handle) -> None:
        try:
            await handle.runner.run()
        finally:
            state = handle.state
            if state.status in _TERMINAL or state.status == S.INTERRUPTED:
                self._handles.pop(state.id, None)
                if not handle.done.done():
                    handle.done.set_result(None)
            if state.status == S.DONE and state.parent_id is None:
                self._threads[state.thread_id] = _CachedThread(
                    list(state.messages), list(state.positions), state.next_position
                )
                while len(self._threads) > _HISTORY_CACHE:
                    self._threads.popitem(last=False)

    def _on_status(self, state: OperationState) -> None:
        if state.parent_id is None:
            if state.status == S.WAITING_FOR_HUMAN:
                self._waiting[state.session_id] = state.id
            elif self._waiting.get(state.session_id) == state.id:
                del self._waiting[state.session_id]
        if state.status != S.DONE:
            self._threads.pop(state.thread_id, None)

    async def _workspace(self, session_id: str) -> Path:
        row = await self._sessions.get_row(session_id)
        self._flags[session_id] = _flags_of(row)
        return Path(row.workspace)

    def session_flags(self, session_id: str) -> SessionFlags:
        return self._flags.get(session_id, SessionFlags())

    # -- settings ---------------------------------------------------------------------------------------------

    async def update_session(self, params: SessionUpdateParams) -> SessionInfo:
        """Change a session's title or switches; a switch applies to the running turn's next call.

        Raises:
            ProtocolError: `session_not_found`.
        """
        changes: dict[str, str | bool | None] = {
            name: value
            for name, value in (("title", params.title), ("network", params.network), ("yolo", params.yolo))
            if value is not None
        }
        if params.reasoning_effort is not None:
            if params.reasoning_effort not in ("default", "off"):
                self._check_reasoning(await self._sessions.get_row(params.session_id))
            changes["reasoning_effort"] = None if params.reasoning_effort == "default" else params.reasoning_effort
        info = await self._sessions.update_settings(params.session_id, **changes)
        self._flags[params.session_id] = SessionFlags(
            network=info.network, yolo=info.yolo, reasoning_effort=info.reasoning_effort
        )
        if params.yolo:
            log.warning("session %s: --yolo is on: approvals and the sandbox are off", params.session_id)
        return info

    def _check_reasoning(self, session: SessionRow) -> None:
        """Refuse a reasoning effort for a model the catalog says cannot reason (unknown models may)."""
        if session.model == AUTO_MODEL or self.router.routes(session):
            return
        try:
            target = self._selector.resolve(session.provider, session.model)
        except ProtocolError:
            return
        preset = presets().get(target.provider)
        entry = preset.model(target.model) if preset else None
        if entry is not None and not entry.reasoning:
            raise ProtocolError(
                ErrorCode.NOT_SUPPORTED,
                f"{target.provider}:{target.model} does not support reasoning effort; pick a reasoning model with "
                "/model first.",
                source=ErrorSource.RUNTIME,
            )

    def tool_infos(self) -> list[ToolInfo]:
        return [
            ToolInfo(
                name=tool.name,
                summary=tool.description.strip().splitlines()[0],
                side_effects=tool.side_effects,
                policy=self._overrides.get(tool.name, "inherit"),
            )
            for tool in self._tools
        ]

    async def set_tool_policy(self, params: ToolSetPolicyParams) -> ToolInfo:
        """Raises: ProtocolError `tool_not_found`."""
        tool = self._tools.get(params.name)
        if tool is None:
            raise ProtocolError(
                ErrorCode.TOOL_NOT_FOUND,
                f"No tool named {params.name!r}. Known tools: {', '.join(self._tools.names())}.",
                source=ErrorSource.RUNTIME,
            )
        now = datetime.now(UTC)
        await self._deps.db.write(
            lambda conn: repos.tool_policies.set_override(conn, params.name, params.policy, now=now)
        )
        if params.policy == "inherit":
            self._overrides.pop(params.name, None)
        else:
            self._overrides[params.name] = params.policy
        return next(info for info in self.tool_infos() if info.name == params.name)

    async def _handle_for(self, operation_id: str) -> _Handle:
        """The operation in memory, loading it from the store if needed.

        Raises:
            ProtocolError: `operation_not_found`.
        """
        handle = self._handles.get(operation_id)
        if handle is not None:
            return handle
        op = await self._deps.db.read(lambda conn: repos.operations.get(conn, operation_id))
        if op is None:
            raise operation_not_found(operation_id)
        handle = self._handles.get(operation_id)  # loaded by someone else meanwhile
        if handle is not None:
            return handle
        target = self._target_for(op)
        depth = 0 if op.parent_operation_id is None else 1
        state = await load_operation_state(self._deps.db, op, self._limits(target), depth=depth)
        return self._make_handle(state, target, await self._workspace(op.session_id))

    # -- turns ------------------------------------------------------------------------------------------------

    async def start_turn(self, params: TurnStartParams) -> TurnStartResult:
        """Record the user's message and start an operation on it.

        A turn started while the previous one waits for a person (or was interrupted) supersedes it: the old
        one is cancelled and its open calls are told so.

        Raises:
            ProtocolError: `session_not_found`, `busy` (a turn is running), `no_provider`/`unknown_provider`.
                Nothing is recorded when it raises.
        """
        sid = params.session_id
        async with self._start_locks[sid]:
            session, existing, previous = await self._deps.db.read(
                lambda conn: (
                    repos.sessions.get(conn, sid),
                    repos.operations.find_by_client_message(conn, sid, params.client_message_id),
                    repos.operations.latest_active(conn, sid, [S.RUNNING, S.WAITING_FOR_HUMAN, S.INTERRUPTED]),
                )
            )
            if session is None:
                raise session_not_found(sid)
            self._flags[sid] = _flags_of(session)
            if existing is not None:
                return TurnStartResult(
                    operation_id=existing.id, status=OperationStatus(existing.status), duplicate=True
                )
            running = next(
                (
                    h
                    for h in self._handles.values()
                    if h.state.session_id == sid and h.state.parent_id is None and h.running
                ),
                None,
            )
            if running is not None:
                raise ProtocolError(
                    ErrorCode.BUSY,
                    "A turn is already running in this session; wait for it, steer it (turn/steer) or cancel it.",
                    source=ErrorSource.RUNTIME,
                    details={"operationId": running.state.id},
                )
            routed: Routed | None = None
            if self.router.routes(session):
                routed = await self.router.route(params.text, await self._history_tokens(sid))
                target = self._selector.resolve(routed.decision.tier.provider, routed.decision.tier.model)
            else:
                target = self._selector.resolve(session.provider, session.model)
            if previous is not None:
                await self._cancel_operation(previous.id, reason="Superseded by a new message.")
            cached = self._threads.pop(sid, None)
            if cached is None:
                thread = await self._deps.db.read(lambda conn: read_thread(conn, sid))
                messages, positions = repair_with_positions(thread.messages, thread.positions)
                cached = _CachedThread(messages, positions, thread.next_position)
            operation_id, message_id = new_id("op"), new_id("msg")
            now = datetime.now(UTC)
            request = ModelRequest(parts=[UserPromptPart(params.text, timestamp=now)])
            new_title = _title_from(params.text) if session.title == _DEFAULT_TITLE else None
            position = cached.next_position

            def record(conn: Connection) -> None:
                repos.operations.insert(
                    conn,
                    OperationRow(
                        id=operation_id,
                        session_id=sid,
                        client_message_id=params.client_message_id,
                        origin="chat",
                        status=S.RUNNING,
                        provider=target.provider,
                        model=target.model,
                        created_at=now,
                        updated_at=now,
                        thread_id=sid,
                        tier=routed.decision.tier.name if routed else None,
                    ),
                )
                repos.messages.insert(
                    conn,
                    MessageRow(
                        id=message_id,
                        session_id=sid,
                        operation_id=operation_id,
                        position=position,
                        kind="request",
                        text=params.text,
                        model_message=dump_message(request),
                        created_at=now,
                        thread_id=sid,
                    ),
                )
                if new_title:
                    repos.sessions.update(conn, sid, now=now, title=new_title)

            journal = self._deps.journal
            recorded = journal.emit(
                sid,
                UserMessage(
                    operation_id=operation_id,
                    message_id=message_id,
                    text=params.text,
                    client_message_id=params.client_message_id,
                ),
                mutate=record,
            )
            if new_title:
                journal.emit(sid, SessionUpdated(title=new_title))
            if routed is not None:
                journal.emit(sid, _route_event(operation_id, routed))
            running_event = journal.emit(
                sid, OperationStatusChanged(operation_id=operation_id, status=S.RUNNING), urgent=True
            )
            # These commit together; if the user's message could not be written, nothing starts.
            await asyncio.wait([recorded, running_event])
            recorded.result()
            limits = self._limits(target)
            state = OperationState(
                id=operation_id,
                session_id=sid,
                thread_id=sid,
                origin="chat",
                status=S.RUNNING,
                step=0,
                step_limit=limits.max_steps,
                messages=[*cached.messages, request],
                positions=[*cached.positions, position],
                next_position=position + 1,
                checkin_at=time.monotonic() + limits.checkin_seconds,
            )
            handle = self._make_handle(state, target, Path(session.workspace))
            self._launch(handle)
            return TurnStartResult(operation_id=operation_id, status=S.RUNNING, duplicate=False)

    async def _history_tokens(self, session_id: str) -> int:
        cached = self._threads.get(session_id)
        if cached is not None:
            return _message_tokens(cached.messages)
        thread = await self._deps.db.read(lambda conn: read_thread(conn, session_id))
        return _message_tokens(thread.messages)

    # -- try harder ---------------------------------------------------------------------------------------------

    async def retry(self, params: TurnRetryParams) -> TurnRetryResult:
        """Run a session's latest turn again, on the next tier up (or the same model): first an estimate, then,
        confirmed, the retry. Both answers share an `askId`; the retry's replaces the original in the history the
        model sees from then on.

        Raises:
            ProtocolError: `session_not_found`; `operation_not_found`; `not_resumable` (not the latest turn, or
                nothing to retry); `busy` (a turn is running); `no_provider`.
        """
        sid = params.session_id
        async with self._start_locks[sid]:
            session, original, latest, duplicate = await self._deps.db.read(
                lambda conn: (
                    repos.sessions.get(conn, sid),
                    repos.operations.get(conn, params.operation_id) if params.operation_id else None,
                    repos.operations.latest_active(
                        conn, sid, [S.RUNNING, S.WAITING_FOR_HUMAN, S.INTERRUPTED, S.DONE, S.ERROR, S.CANCELLED]
                    ),
                    repos.operations.find_by_client_message(conn, sid, params.client_message_id)
                    if params.client_message_id
                    else None,
                )
            )
            if session is None:
                raise session_not_found(sid)
            if params.operation_id is None:
                original = latest
            if original is None or original.session_id != sid or original.parent_operation_id is not None:
                raise ProtocolError(
                    ErrorCode.OPERATION_NOT_FOUND if params.operation_id else ErrorCode.NOT_RESUMABLE,
                    "There is no turn to retry in this session."
                    if not params.operation_id
                    else f"No turn {params.operation_id!r} in this session.",
                    source=ErrorSource.RUNTIME,
                )
            ask_id = original.ask_id or original.id
            if duplicate is not None:
                return TurnRetryResult(
                    ask_id=duplicate.ask_id or ask_id,
                    provider=duplicate.provider or "",
                    model=duplicate.model or "",
                    tier=duplicate.tier,
                    from_model=f"{original.provider}:{original.model}",
                    estimated_cost_usd=None,
                    ask_cost_usd=await self._ask_cost(sid, ask_id),
                    started=True,
                    operation_id=duplicate.id,
                    duplicate=True,
                )
            if latest is not None and latest.id != original.id:
                raise ProtocolError(
                    ErrorCode.NOT_RESUMABLE,
                    "Only the session's latest turn can be retried; later turns built on this answer.",
                    source=ErrorSource.RUNTIME,
                )
            handle = self._handles.get(original.id)
            if OperationStatus(original.status) == S.RUNNING or (handle is not None and handle.running):
                raise ProtocolError(
                    ErrorCode.BUSY, "The turn is still running; cancel it first.", source=ErrorSource.RUNTIME
                )
            # A retry's question is its group's first turn's (the ask id is that turn's id).
            request, history = await self._deps.db.read(lambda conn: _retry_request(conn, sid, ask_id))
            if request is None:
                raise ProtocolError(
                    ErrorCode.NOT_RESUMABLE, "That turn has no message to retry.", source=ErrorSource.RUNTIME
                )
            provider, model = original.provider or "", original.model or ""
            routed: Routed | None = None
            if params.tier == "up":
                decision = self.router.step_up(
                    provider, model, original.tier, text=request.text, history_tokens=history
                )
                routed = Routed(decision)
                provider, model = decision.tier.provider, decision.tier.model
            target = self._selector.resolve(provider, model)
            # What the original turn used (its whole tool loop), priced for the new model; for a turn that used
            # nothing (it failed), one request of the history plus the usual answer size.
            estimate = estimate_cost(
                target.provider,
                target.model,
                input_tokens=max(history, original.input_tokens),
                output_tokens=max(self._deps.config.budgets.estimated_output_tokens, original.output_tokens),
                overrides=self._deps.config.prices,
            )
            result = TurnRetryResult(
                ask_id=ask_id,
                provider=target.provider,
                model=target.model,
                tier=routed.decision.tier.name if routed else original.tier,
                from_model=f"{original.provider}:{original.model}",
                estimated_cost_usd=round(estimate.usd, 6) if estimate.known else None,
                ask_cost_usd=await self._ask_cost(sid, ask_id),
                started=False,
            )
            if not params.confirm:
                return result
            if OperationStatus(original.status) in (S.WAITING_FOR_HUMAN, S.INTERRUPTED):
                await self._cancel_operation(original.id, reason="Retried on another model.")
            operation_id = await self._start_retry(session, original, request, target, routed, ask_id, params)
            return result.model_copy(update={"started": True, "operation_id": operation_id})

    async def _ask_cost(self, session_id: str, ask_id: str) -> float:
        usage = await self._deps.usage.session_usage(session_id)
        return round(sum(op.totals.cost_usd for op in usage.operations if (op.ask_id or op.operation_id) == ask_id), 6)

    async def _start_retry(
        self,
        session: SessionRow,
        original: OperationRow,
        request: MessageRow,
        target: ModelTarget,
        routed: Routed | None,
        ask_id: str,
        params: TurnRetryParams,
    ) -> str:
        sid = session.id
        operation_id = new_id("op")
        now = datetime.now(UTC)
        tier = routed.decision.tier.name if routed else original.tier

        def record(conn: Connection) -> None:
            # The original answer leaves the model's history (it stays on screen, grouped by the ask id); the
            # user's message stays, and the retry answers it again.
            repos.messages.supersede(conn, original.id, keep=[request.id])
            repos.operations.set_ask(conn, original.id, ask_id)
            repos.operations.insert(
                conn,
                OperationRow(
                    id=operation_id,
                    session_id=sid,
                    client_message_id=params.client_message_id,
                    origin="chat",
                    status=S.RUNNING,
                    provider=target.provider,
                    model=target.model,
                    created_at=now,
                    updated_at=now,
                    thread_id=sid,
                    ask_id=ask_id,
                    tier=tier,
                ),
            )

        self._threads.pop(sid, None)
        journal = self._deps.journal
        recorded = journal.emit(
            sid,
            Route(
                operation_id=operation_id,
                tier=tier or "",
                provider=target.provider,
                model=target.model,
                code=str(routed.decision.code) if routed else "retry",
                reason=routed.decision.reason if routed else f"Retrying on {target.provider}:{target.model}.",
                notify=routed.decision.notify if routed else False,
                estimated_tokens=routed.decision.estimated_tokens if routed else 0,
                ask_id=ask_id,
            ),
            mutate=record,
        )
        running = journal.emit(sid, OperationStatusChanged(operation_id=operation_id, status=S.RUNNING), urgent=True)
        await asyncio.wait([recorded, running])
        recorded.result()
        thread = await self._deps.db.read(lambda conn: read_thread(conn, sid))
        messages, positions = repair_with_positions(thread.messages, thread.positions)
        limits = self._limits(target)
        state = OperationState(
            id=operation_id,
            session_id=sid,
            thread_id=sid,
            origin="chat",
            status=S.RUNNING,
            step=0,
            step_limit=limits.max_steps,
            messages=messages,
            positions=positions,
            next_position=thread.next_position,
            checkin_at=time.monotonic() + limits.checkin_seconds,
        )
        self._flags[sid] = _flags_of(session)
        self._launch(self._make_handle(state, target, Path(session.workspace)))
        return operation_id

    async def steer(self, params: TurnSteerParams) -> TurnSteerResult:
        """Queue user input for the session's active operation; it joins at the next step boundary.

        Raises:
            ProtocolError: `session_not_found`; `not_running` when no turn is active.
        """
        sid = params.session_id
        async with self._start_locks[sid]:
            session, existing, active = await self._deps.db.read(
                lambda conn: (
                    repos.sessions.get(conn, sid),
                    repos.inputs.find_by_client_message(conn, sid, params.client_message_id),
                    repos.operations.latest_active(conn, sid, [S.RUNNING, S.WAITING_FOR_HUMAN, S.INTERRUPTED]),
                )
            )
            if session is None:
                raise session_not_found(sid)
            if existing is not None:
                return TurnSteerResult(operation_id=existing.operation_id, duplicate=True)
            if active is None:
                raise ProtocolError(
                    ErrorCode.NOT_RUNNING,
                    "No turn is running in this session to steer; start one with turn/start.",
                    source=ErrorSource.RUNTIME,
                )
            row = OperationInputRow(
                id=new_id("in"),
                operation_id=active.id,
                session_id=sid,
                client_message_id=params.client_message_id,
                text=params.text,
                status="queued",
                created_at=datetime.now(UTC),
            )
            await self._deps.journal.append(
                sid,
                UserMessage(
                    operation_id=active.id,
                    message_id=row.id,
                    text=params.text,
                    client_message_id=params.client_message_id,
                    steer=True,
                ),
                mutate=lambda conn: repos.inputs.insert(conn, row),
            )
            handle = self._handles.get(active.id)
            if handle is not None:
                handle.state.steering.append(Steer(row.id, row.text, row.client_message_id))
            return TurnSteerResult(operation_id=active.id, duplicate=False)

    # -- answers ----------------------------------------------------------------------------------------------

    async def _request(self, request_id: str) -> HumanRequestRow:
        row = await self._deps.db.read(lambda conn: repos.human_requests.get(conn, request_id))
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
        row = await self._request(params.request_id)
        if row.kind != "approval":
            raise ProtocolError(
                ErrorCode.REQUEST_NOT_FOUND,
                f"Request {row.id} is a {row.kind}, not an approval; answer it with ask/respond.",
                source=ErrorSource.RUNTIME,
            )
        if row.status != "pending":
            return self._already(row, response)
        async with self._op_locks[row.operation_id]:
            handle = await self._handle_for(row.operation_id)
            entry = handle.state.calls.get(row.tool_call_id or "")
            if entry is None or entry.status != C.AWAITING_APPROVAL:
                return self._already(await self._request(params.request_id), response)
            if params.approved:
                transition_call(entry, C.APPROVED)
                result = None
            else:
                transition_call(entry, C.REJECTED)
                entry.result, entry.is_error = rejection_text(params.message), False
                result = entry.result
            await self._resolve(
                row,
                response,
                ApprovalResolved(
                    request_id=row.id,
                    operation_id=row.operation_id,
                    tool_call_id=entry.tool_call_id,
                    approved=params.approved,
                    message=params.message,
                ),
                handle.runner.ledger_update(entry, result=result),
            )
            if params.approved and handle.running:
                # Other calls of the step are running: start this one now rather than after them.
                await handle.runner.start_calls([entry.tool_call_id])
            else:
                self._launch(handle)
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
        async with self._op_locks[row.operation_id]:
            handle = await self._handle_for(row.operation_id)
            resolved = AskResolved(request_id=row.id, operation_id=row.operation_id, answer=response["answer"])
            if row.kind == "guardrail":
                await self._resolve(row, response, resolved, None)
                if response["answer"] == "stop":
                    await handle.runner.cancel_in_place(reason="Stopped by the user at a guardrail.")
                    self._finish_handle(handle)
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
            self._launch(handle)
        return RespondResult(request_id=row.id, duplicate=False)

    async def _resolve(
        self, row: HumanRequestRow, response: dict[str, Any], event: Any, ledger: Mutation | None
    ) -> None:
        now = datetime.now(UTC)
        response_json = json.dumps(response)

        def mutate(conn: Connection) -> None:
            if not repos.human_requests.resolve(conn, row.id, response=response_json, now=now):
                raise RuntimeError(f"request {row.id} was resolved concurrently")
            if ledger is not None:
                ledger(conn)

        await self._deps.journal.append(row.session_id, event, mutate=mutate)

    # -- resume, cancel, recover ------------------------------------------------------------------------------

    async def resume(self, operation_id: str) -> OperationStatus:
        """Continue an interrupted or guardrail-paused operation.

        Raises:
            ProtocolError: `operation_not_found`; `not_resumable` (ended, superseded, or waiting for an approval).
        """
        async with self._op_locks[operation_id]:
            handle = await self._handle_for(operation_id)
            state = handle.state
            if handle.running or state.status == S.RUNNING:
                return S.RUNNING
            if state.status in _TERMINAL:
                raise ProtocolError(
                    ErrorCode.NOT_RESUMABLE,
                    f"Operation {operation_id} has ended ({state.status}).",
                    source=ErrorSource.RUNTIME,
                )
            if state.status == S.WAITING_FOR_HUMAN:
                pending = await self._deps.db.read(
                    lambda conn: repos.human_requests.pending(conn, operation_id=operation_id)
                )
                guardrails = [r for r in pending if r.kind == "guardrail"]
                if not guardrails or len(guardrails) != len(pending):
                    raise ProtocolError(
                        ErrorCode.NOT_RESUMABLE,
                        f"Operation {operation_id} is waiting for an answer; respond to its pending requests.",
                        source=ErrorSource.RUNTIME,
                        details={"requestIds": [r.id for r in pending]},
                    )
            else:
                guardrails = []
        for request in guardrails:
            await self.respond_ask(AskRespondParams(request_id=request.id, answer="continue"))
        if guardrails:
            return S.RUNNING
        async with self._op_locks[operation_id]:
            if state.parent_id is None and not await self._is_latest_turn(state):
                self._handles.pop(operation_id, None)
                raise ProtocolError(
                    ErrorCode.NOT_RESUMABLE,
                    f"Operation {operation_id} was superseded by a later turn in its session.",
                    source=ErrorSource.RUNTIME,
                )
            for entry in state.calls.values():
                if entry.status == C.INTERRUPTED:
                    self._deps.journal.emit(
                        state.session_id,
                        ToolInterrupted(
                            operation_id=state.id,
                            step=entry.step,
                            tool_call_id=entry.tool_call_id,
                            name=entry.name,
                            side_effects=entry.side_effects,
                            action="ask" if entry.side_effects else "rerun",
                        ),
                    )
            self._launch(handle)
        return S.RUNNING

    async def _is_latest_turn(self, state: OperationState) -> bool:
        latest = await self._deps.db.read(
            lambda conn: repos.operations.latest_active(
                conn, state.session_id, [S.RUNNING, S.WAITING_FOR_HUMAN, S.INTERRUPTED, S.DONE, S.ERROR, S.CANCELLED]
            )
        )
        return latest is None or latest.id == state.id

    def _finish_handle(self, handle: _Handle) -> None:
        self._handles.pop(handle.state.id, None)
        if not handle.done.done():
            handle.done.set_result(None)

    async def _cancel_operation(self, operation_id: str, *, reason: str = "Cancelled by the user.") -> bool:
        """Cancel an operation wherever it is (running, waiting, interrupted) and its sub-agents."""
        handle = self._handles.get(operation_id)
        if handle is None:
            op = await self._deps.db.read(lambda conn: repos.operations.get(conn, operation_id))
            if op is None or OperationStatus(op.status) in _TERMINAL:
                return False
            handle = await self._handle_for(operation_id)
        for child in list(handle.children):
            await self._cancel_operation(child, reason="Its parent was cancelled.")
        if handle.running:
            assert handle.task is not None
            handle.task.cancel()
            await asyncio.wait([handle.task])
            return True
        if handle.state.status in _TERMINAL:
            return False
        await handle.runner.cancel_in_place(reason=reason)
        self._finish_handle(handle)
        return True

    async def cancel(self, session_id: str, operation_id: str | None = None) -> bool:
        """Cancel the session's active turn (or the given operation of it); False when nothing was active.

        Raises:
            ProtocolError: `session_not_found`; `operation_not_found` for an operation not in this session.
        """
        await self._sessions.get_row(session_id)
        if operation_id is None:
            active = await self._deps.db.read(
                lambda conn: repos.operations.latest_active(
                    conn, session_id, [S.RUNNING, S.WAITING_FOR_HUMAN, S.INTERRUPTED]
                )
            )
            if active is None:
                return False
            operation_id = active.id
        op = await self._deps.db.read(lambda conn: repos.operations.get(conn, operation_id))
        if op is None or op.session_id != session_id:
            raise ProtocolError(
                ErrorCode.OPERATION_NOT_FOUND,
                f"No operation {operation_id!r} in this session.",
                source=ErrorSource.RUNTIME,
            )
        return await self._cancel_operation(operation_id)

    async def wait(self, session_id: str) -> None:
        """Wait until no operation of the session is running (tests and benchmarks)."""
        while True:
            tasks = [h.task for h in self._handles.values() if h.state.session_id == session_id and h.running]
            if not tasks:
                return
            await asyncio.wait([t for t in tasks if t is not None])

    async def recover(self) -> int:
        """At start-up: operations that were running when the process died become `interrupted`, with an event;
        their started tool calls become `interrupted` too."""
        now = datetime.now(UTC)
        stale = await self._deps.db.read(lambda conn: repos.operations.with_status(conn, [S.RUNNING]))
        for op in stale:

            def mutate(conn: Connection, op_id: str = op.id) -> None:
                repos.operations.set_status(
                    conn,
                    op_id,
                    S.INTERRUPTED,
                    now=now,
                    error_code=ErrorCode.INTERRUPTED,
                    error_message="The server stopped.",
                )
                repos.tool_calls.interrupt_started(conn, [op_id], now=now)

            await self._deps.journal.append(
                op.session_id,
                OperationStatusChanged(
                    operation_id=op.id,
                    status=S.INTERRUPTED,
                    code=ErrorCode.INTERRUPTED,
                    reason="The server stopped during this turn. Resume it (operation/resume) or send a new message.",
                    parent_operation_id=op.parent_operation_id,
                ),
                mutate=mutate,
            )
        stored = await self._deps.db.read(repos.tool_policies.all_overrides)
        self._overrides = {tool: cast(ToolOverride, policy) for tool, policy in stored.items()}
        waiting = await self._deps.db.read(lambda conn: repos.operations.with_status(conn, [S.WAITING_FOR_HUMAN]))
        for op in waiting:
            if op.parent_operation_id is None:
                self._waiting[op.session_id] = op.id
        if stale:
            log.info("marked %d interrupted operation(s)", len(stale))
        return len(stale)

    async def shutdown(self) -> None:
        """Stop every running operation; each is recorded as `interrupted`."""
        self._shutting_down = True
        running = [h for h in self._handles.values() if h.running]
        for handle in running:
            handle.runner.interrupted_by_shutdown = True
            assert handle.task is not None
            handle.task.cancel()
        if running:
            await asyncio.wait([h.task for h in running if h.task is not None])

    # -- todos ------------------------------------------------------------------------------------------------

    async def _set_todos(self, state: OperationState, todos: list[dict[str, str]]) -> None:
        items = [Todo(content=t["content"], status=t["status"], active_form=t.get("activeForm", "")) for t in todos]
        as_json = json.dumps([t.wire() for t in items])
        await self._deps.journal.append(
            state.session_id,
            Todos(operation_id=state.id, todos=items),
            mutate=lambda conn: repos.sessions.set_todos(conn, state.session_id, as_json),
        )

    async def todos(self, session_id: str) -> list[Todo]:
        row = await self._sessions.get_row(session_id)
        return [Todo.model_validate(t) for t in json.loads(row.todos)]

    # -- reading ----------------------------------------------------------------------------------------------

    async def pending(self, session_id: str) -> PendingRequests:
        rows = await self._deps.db.read(lambda conn: repos.human_requests.pending(conn, session_id=session_id))
        return pending_requests(rows)

    async def operation_info(self, operation_id: str, *, with_calls: bool = True) -> OperationInfo:
        """Raises: ProtocolError `operation_not_found`."""

        def read(conn: Connection) -> tuple[OperationRow | None, list[ToolCallRow], list[HumanRequestRow]]:
            op = repos.operations.get(conn, operation_id)
            calls = repos.tool_calls.for_operation(conn, operation_id) if with_calls and op else []
            requests = repos.human_requests.pending(conn, operation_id=operation_id) if op else []
            return op, calls, requests

        op, calls, requests = await self._deps.db.read(read)
        if op is None:
            raise operation_not_found(operation_id)
        return operation_info(op, calls, requests)


def _retry_request(conn: Connection, session_id: str, operation_id: str) -> tuple[MessageRow | None, int]:
    """The user message that started a turn, and the size of the history up to it (in tokens)."""
    thread = read_thread(conn, session_id)
    for index, row in enumerate(thread.rows):
        if row.operation_id == operation_id and row.kind == "request":
            offset = len(thread.messages) - len(thread.rows)
            return row, _message_tokens(thread.messages[: offset + index + 1])
    return None, 0

"""Operations in play: the one way to create an operation, and the registry of the ones in memory.

Every operation (a chat turn, a retry, a sub-agent, an automation's agent step) is created by `new_operation`: its
row, its first request message, the events announcing it and any extra change commit in one transaction, then its
runner starts. The registry keeps a handle per operation in play and loads any other from the store on demand.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, TypeAlias

from cowork.lazy import HEAVY_IMPORTS
from cowork.models import ModelSelector, ModelTarget, presets
from cowork.observability import trace_id_for
from cowork.protocol import EventPayload, OperationStatus, OperationStatusChanged, UserMessage
from cowork.sessions import Mutation, SessionService, SessionSettings, new_id
from cowork.store import Connection, MessageRow, OperationRow, repos
from cowork.tools import ToolRegistry

from ._deps import RunnerDeps, RunnerHooks
from ._handles import CachedThread, Handle, ThreadCache
from ._history import dump_message, repair_with_positions, user_request
from ._leases import Leases
from ._loading import load_operation_state, read_thread
from ._state import Limits, OperationState
from ._views import operation_not_found

__all__ = ["NewOperation", "Operations", "Origin", "preload"]

log = logging.getLogger(__name__)

S = OperationStatus
Origin: TypeAlias = Literal["chat", "sub_agent", "automation", "compact", "observe"]
_DEFAULT_CONTEXT_WINDOW = 128_000
_SUB_AGENT_EXCLUDED = {"spawnAgent", "ask", "todoWrite"}
_EXPLORE_EXCLUDED = {*_SUB_AGENT_EXCLUDED, "memory", "skill", "webSearch", "webFetch", "activity"}
"""Explore agents search the workspace with read-only tools: no web, no memory notes, no skills, no captured
activity (the user's, not the workspace's)."""
_RESEARCH_TOOLS = {"webSearch", "webFetch", "read"}


def preload() -> None:
    """Load what the first operation would (the executors, pydantic-ai's model layer, the history's schema):
    blocking, thread-safe (under `HEAVY_IMPORTS`)."""
    with HEAVY_IMPORTS:
        importlib.import_module(f"{__package__}._executors")
        dump_message(user_request("warm-up"))


@dataclass(frozen=True)
class NewOperation:
    """What `Operations.new_operation` creates."""

    session_id: str
    thread_id: str
    """The model-facing history it continues: the session's for a turn, its own id for a sub-agent."""
    origin: Origin
    target: ModelTarget
    workspace: Path
    operation_id: str = field(default_factory=lambda: new_id("op"))
    request: str | None = None
    """The first request's text, stored as the thread's next message; None when the thread already ends with it
    (a retry answers the original question again)."""
    history: CachedThread | None = None
    """The thread before the request (required with `request`); None: read from the store once recorded."""
    announce_request: bool = False
    """Announce the request as the user's message (`user_message`), as a chat turn does."""
    client_message_id: str | None = None
    parent: OperationState | None = None
    agent_type: str | None = None
    ask_id: str | None = None
    tier: str | None = None
    running: bool = True
    """Recorded as running at once, with its `operation_status` event; else idle until its runner starts it."""
    events: Sequence[EventPayload] = ()
    """Events announcing it (after the `user_message`); the first one written carries the rows."""
    mutate: Mutation | None = None
    """Another store change committed with its rows (a new title, a superseded answer, the parent's ledger)."""
    compact_focus: str | None = None
    """A `compact` operation's instructions: what the summary should keep."""
    tool_names: frozenset[str] | None = None
    """The only tools it may use (an automation's agent step that names them); None: its agent type's set. Not
    stored: an operation loaded again after a restart gets its agent type's set."""


class Operations:
    """Creates operations and keeps the ones in play: a runner each and, while it runs, a task."""

    def __init__(
        self,
        deps: RunnerDeps,
        sessions: SessionService,
        settings: SessionSettings,
        selector: ModelSelector,
        tools: ToolRegistry,
        hooks: RunnerHooks,
        leases: Leases,
    ) -> None:
        """Args:
        deps: what every runner shares.
        sessions: the session store (workspaces).
        settings: the sessions' live switches.
        selector: resolves stored provider and model names.
        tools: every tool; each operation gets the subset its agent type allows.
        hooks: what runners ask of the rest of the core (its `on_status` is replaced by the registry's own).
        leases: which replica runs what (replicas on PostgreSQL; inert on SQLite).
        """
        self.deps = deps
        self.leases = leases
        self._sessions = sessions
        self._settings = settings
        self._selector = selector
        self._tools = tools
        self._hooks = replace(hooks, on_status=self._on_status)
        self._handles: dict[str, Handle] = {}
        self._waiting: dict[str, str] = {}
        """session → its top-level operation waiting for a person (known from the store, maybe not loaded)."""
        self._session_locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._op_locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self.threads = ThreadCache()
        self.shutting_down = False

    @property
    def settings(self) -> SessionSettings:
        """The sessions' live switches (what an approval allowed for the session goes there)."""
        return self._settings

    # -- creating ---------------------------------------------------------------------------------------------

    async def new_operation(self, spec: NewOperation) -> Handle:
        """Record a new operation with its first request and events (one transaction), then start its runner.

        Raises:
            Exception: whatever the store raised; then nothing was recorded and nothing starts.
        """
        sid, op_id, thread_id = spec.session_id, spec.operation_id, spec.thread_id
        now = datetime.now(UTC)
        status = S.RUNNING if spec.running else S.IDLE
        message_id = new_id("msg")
        request = None
        position = 0
        if spec.request is not None:
            assert spec.history is not None, "a new request needs the history it follows"
            request = user_request(spec.request, now)
            position = spec.history.next_position
        row = OperationRow(
            id=op_id,
            session_id=sid,
            client_message_id=spec.client_message_id,
            origin=spec.origin,
            status=status,
            provider=spec.target.provider,
            model=spec.target.model,
            created_at=now,
            updated_at=now,
            thread_id=thread_id,
            parent_operation_id=spec.parent.id if spec.parent else None,
            agent_type=spec.agent_type,
            ask_id=spec.ask_id,
            tier=spec.tier,
        )
        message = (
            MessageRow(
                id=message_id,
                session_id=sid,
                operation_id=op_id,
                position=position,
                kind="request",
                text=spec.request,
                model_message=dump_message(request),
                created_at=now,
                thread_id=thread_id,
            )
            if request is not None and spec.request is not None
            else None
        )

        def record(conn: Connection) -> None:
            repos.operations.insert(conn, row)
            if spec.running:
                self.leases.record(conn, op_id)
            if message is not None:
                repos.messages.insert(conn, message)
            if spec.mutate is not None:
                spec.mutate(conn)

        payloads: list[EventPayload] = []
        if spec.announce_request and spec.request is not None:
            payloads.append(
                UserMessage(
                    operation_id=op_id,
                    message_id=message_id,
                    text=spec.request,
                    client_message_id=spec.client_message_id,
                )
            )
        payloads += spec.events
        journal = self.deps.journal
        recorded = journal.emit(sid, payloads[0] if payloads else None, mutate=record, urgent=not spec.running)
        last = recorded
        for payload in payloads[1:]:
            last = journal.emit(sid, payload)
        if spec.running:
            tracing = self.deps.tracing
            trace_id = trace_id_for(spec.parent.root if spec.parent else op_id) if tracing and tracing.enabled else None
            last = journal.emit(
                sid, OperationStatusChanged(operation_id=op_id, status=S.RUNNING, trace_id=trace_id), urgent=True
            )
        # These commit together; if the operation could not be written, nothing starts.
        await asyncio.wait([recorded, last])
        recorded.result()

        if spec.history is None:
            thread = await self.deps.db.read(lambda conn: read_thread(conn, thread_id))
            messages, positions = repair_with_positions(thread.messages, thread.positions)
            next_position = thread.next_position
        else:
            messages, positions = list(spec.history.messages), list(spec.history.positions)
            if request is not None:
                messages.append(request)
                positions.append(position)
            next_position = position + 1 if request is not None else spec.history.next_position
        limits = self.limits(spec.target)
        parent = spec.parent
        state = OperationState(
            id=op_id,
            session_id=sid,
            thread_id=thread_id,
            origin=spec.origin,
            status=status,
            step=0,
            step_limit=limits.max_steps,
            messages=messages,
            positions=positions,
            next_position=next_position,
            checkin_at=time.monotonic() + limits.checkin_seconds,
            parent_id=parent.id if parent else None,
            root_id=parent.root if parent else None,
            agent_type=spec.agent_type,
            depth=parent.depth + 1 if parent else 0,
            # The same set, not a copy: "continue once" past a budget covers the whole request, sub-agents included.
            budget_allowed=parent.budget_allowed if parent else set(),
            compact_focus=spec.compact_focus,
        )
        handle = self._make_handle(state, spec.target, spec.workspace, spec.tool_names)
        handle.leased = spec.running
        self.launch(handle)
        return handle

    def limits(self, target: ModelTarget) -> Limits:
        """The configured limits, with the model's context window when the catalog knows it."""
        window = _DEFAULT_CONTEXT_WINDOW
        preset = presets().get(target.provider)
        for model in preset.models if preset else ():
            if model.id == target.model and model.context_window:
                window = model.context_window
        return Limits.from_config(self.deps.config.agent, context_window=window)

    def _tools_for(self, agent_type: str | None) -> ToolRegistry:
        if agent_type is None:
            if self.deps.config.agent.max_agent_depth == 0:
                return self._tools.without({"spawnAgent"})
            return self._tools
        if agent_type == "explore":
            return self._tools.only(lambda t: not t.side_effects and t.name not in _EXPLORE_EXCLUDED)
        if agent_type == "research":
            return self._tools.only(lambda t: t.name in _RESEARCH_TOOLS)
        return self._tools.without(_SUB_AGENT_EXCLUDED)

    def _make_handle(
        self, state: OperationState, target: ModelTarget, workspace: Path, tool_names: frozenset[str] | None = None
    ) -> Handle:
        # The executors (and pydantic-ai's model layer with them) load with the first operation in play, not with
        # the runtime: the server answers its first requests without them (`preload` loads them early).
        with HEAVY_IMPORTS:
            from ._executors import OperationRunner

        runner = OperationRunner(
            self.deps,
            state,
            target=target,
            limits=self.limits(target),
            tools=self._tools_for(state.agent_type).only(lambda t: tool_names is None or t.name in tool_names),
            workspace=workspace,
            hooks=self._hooks,
        )
        handle = Handle(runner=runner, done=asyncio.get_running_loop().create_future())
        self._handles[state.id] = handle
        return handle

    async def workspace(self, session_id: str) -> Path:
        """The session's workspace (its switches are refreshed on the way).

        Raises:
            ProtocolError: `session_not_found`.
        """
        row = await self._sessions.get_row(session_id)
        self._settings.remember(row)
        return Path(row.workspace)

    # -- running ----------------------------------------------------------------------------------------------

    def launch(self, handle: Handle) -> None:
        """Run the operation's runner in a task, unless it runs already or the process is stopping."""
        if handle.running or self.shutting_down:
            return
        handle.task = asyncio.get_running_loop().create_task(self._drive(handle), name=f"operation-{handle.state.id}")

    async def _drive(self, handle: Handle) -> None:
        operation_id, leased, handle.leased = handle.state.id, handle.leased, False
        if not leased and not await self.leases.take(operation_id):
            # Another replica runs it (it answered or resumed it first): this copy is stale.
            log.info("operation %s runs on another replica; not running it here", operation_id)
            self.finish(handle)
            return
        try:
            await handle.runner.run()
        finally:
            self.leases.drop_soon(operation_id)  # not awaited: the turn counts as ended as soon as it has
            state = handle.state
            if state.status.has_stopped:
                self.finish(handle)
            if state.status == S.DONE and state.parent_id is None:
                if state.excluded:
                    self.threads.drop(state.thread_id)
                else:
                    self.threads.keep(state)

    def _on_status(self, state: OperationState) -> None:
        if state.parent_id is None:
            if state.status == S.WAITING_FOR_HUMAN:
                self._waiting[state.session_id] = state.id
            elif self._waiting.get(state.session_id) == state.id:
                del self._waiting[state.session_id]
        if state.status != S.DONE:
            self.threads.drop(state.thread_id)
        elif state.parent_id is None and self.deps.recall is not None:
            self.deps.recall.turn_finished()  # indexed later, in a quiet moment

    def finish(self, handle: Handle) -> None:
        """The operation left play: forget it and wake whoever waits for it."""
        self._handles.pop(handle.state.id, None)
        if not handle.done.done():
            handle.done.set_result(None)

    def forget(self, operation_id: str) -> None:
        """Drop a loaded operation that will not run (nothing waits for it)."""
        self._handles.pop(operation_id, None)

    def forget_session(self, session_id: str) -> None:
        """Another replica wrote to this session: what is cached here of its operations that are not running here
        (loaded copies, the one known to wait) may be stale, and is read from the store when next needed."""
        for operation_id, handle in list(self._handles.items()):
            if handle.state.session_id == session_id and not handle.running:
                del self._handles[operation_id]
        self._waiting.pop(session_id, None)

    async def cancel(self, operation_id: str, *, reason: str = "Cancelled by the user.") -> bool:
        """Cancel an operation wherever it is (running, waiting, interrupted) and its sub-agents.

        Returns:
            False when it had already ended (or does not exist).
        """
        handle = self._handles.get(operation_id)
        if handle is None or not handle.running:
            op = await self.deps.db.read(lambda conn: repos.operations.get(conn, operation_id))
            if op is None or OperationStatus(op.status).is_final:
                return False
            if (elsewhere := await self.leases.holder(operation_id)) is not None:
                await self.leases.forward(
                    elsewhere,
                    "cancel",
                    {"operationId": operation_id, "reason": reason},
                    lambda: self._has_ended(operation_id),
                )
                return True
            handle = await self.load(operation_id)
        for child in list(handle.children):
            await self.cancel(child, reason="Its parent was cancelled.")
        if handle.running:
            assert handle.task is not None
            handle.task.cancel()
            await asyncio.wait([handle.task])
            return True
        if handle.state.status.is_final:
            return False
        await handle.runner.cancel_in_place(reason=reason)
        self.finish(handle)
        return True

    async def _has_ended(self, operation_id: str) -> bool:
        op = await self.deps.db.read(lambda conn: repos.operations.get(conn, operation_id))
        return op is None or OperationStatus(op.status).is_final

    async def wait(self, operation_id: str, within: float | None = None) -> None:
        """Wait until the operation leaves play (or `within` seconds pass); returns at once if it is not in play."""
        handle = self._handles.get(operation_id)
        if handle is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(handle.done), within)
        except TimeoutError:
            pass

    async def wait_idle(self, session_id: str) -> None:
        """Wait until no operation of the session is running."""
        while True:
            tasks = [h.task for h in self._handles.values() if h.state.session_id == session_id and h.running]
            if not tasks:
                return
            await asyncio.wait([t for t in tasks if t is not None])

    async def stop_all(self) -> None:
        """Stop every running operation, each recorded as `interrupted`; nothing starts afterwards."""
        self.shutting_down = True
        running = [h for h in self._handles.values() if h.running]
        for handle in running:
            handle.runner.interrupted_by_shutdown = True
            assert handle.task is not None
            handle.task.cancel()
        if running:
            await asyncio.wait([h.task for h in running if h.task is not None])

    # -- lookups ----------------------------------------------------------------------------------------------

    def get(self, operation_id: str) -> Handle | None:
        """The operation if it is in memory."""
        return self._handles.get(operation_id)

    async def load(self, operation_id: str) -> Handle:
        """The operation in memory, loading it from the store if needed.

        Raises:
            ProtocolError: `operation_not_found`.
        """
        handle = self._handles.get(operation_id)
        if handle is not None:
            return handle
        op = await self.deps.db.read(lambda conn: repos.operations.get(conn, operation_id))
        if op is None:
            raise operation_not_found(operation_id)
        handle = self._handles.get(operation_id)  # loaded by someone else meanwhile
        if handle is not None:
            return handle
        target = self._selector.resolve(op.provider, op.model)
        depth = 0 if op.parent_operation_id is None else 1
        state = await load_operation_state(self.deps.db, op, self.limits(target), depth=depth)
        return self._make_handle(state, target, await self.workspace(op.session_id))

    def running_turn(self, session_id: str) -> Handle | None:
        """The session's top-level operation whose task is running now."""
        return next(
            (
                h
                for h in self._handles.values()
                if h.state.session_id == session_id and h.state.parent_id is None and h.running
            ),
            None,
        )

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

    def note_waiting(self, session_id: str, operation_id: str) -> None:
        """A top-level operation the store says waits for a person (at start-up)."""
        self._waiting[session_id] = operation_id

    def running_ids(self) -> list[str]:
        return [operation_id for operation_id, h in self._handles.items() if h.running]

    def running_count(self) -> int:
        return sum(1 for h in self._handles.values() if h.running)

    def session_lock(self, session_id: str) -> asyncio.Lock:
        """Held while a turn of the session starts, retries or is steered."""
        return self._session_locks[session_id]

    def lock(self, operation_id: str) -> asyncio.Lock:
        """Held while an operation is answered or resumed."""
        return self._op_locks[operation_id]

"""Automations in the server: saved flows, their schedule and triggers, and their tools.

`AutomationService` owns the automations (create, update, delete, enable) and when they run (the cron loop, event
triggers through `fire`, the agent through flow tools); a run's life is `_runs`'s, its steps `_engine`'s, when a cron
flow fires `_schedule`'s, the event triggers `_triggers_live`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any

from cowork.protocol import (
    AutomationChanged,
    AutomationInfo,
    AutomationRunInfo,
    ErrorCode,
    ErrorSource,
    ProtocolError,
    WireModel,
)
from cowork.runtime import Leases
from cowork.sessions import new_id
from cowork.store import Database, repos
from cowork.store.repos.automations import AutomationRow, RunRow
from cowork.tools import ToolError, ToolRegistry

from ._files import FlowFileError, load_flow, parse_flow
from ._host import StepHost
from ._model import Flow, FlowInputError
from ._runs import Runs, RunState
from ._schedule import plan_fires
from ._tools import FLOW_TOOL_PREFIX, FlowTool, ProposeAutomationTool, flow_tool_name
from ._triggers import CronTrigger
from ._wire import automation_info, flow_of, run_info, stored_definition

__all__ = ["AutomationService", "parse_definition"]

log = logging.getLogger(__name__)

_MAX_SLEEP = 30.0


def _not_found(ref: str) -> ProtocolError:
    return ProtocolError(ErrorCode.AUTOMATION_NOT_FOUND, f"No automation {ref!r}.", source=ErrorSource.SERVER)


def _invalid(message: str) -> ProtocolError:
    return ProtocolError(ErrorCode.INVALID_PARAMS, message, source=ErrorSource.SERVER)


def parse_definition(definition: dict[str, Any] | None, text: str | None, format: str = "yaml") -> Flow:
    """A flow from a client's definition object or file text.

    Raises:
        ProtocolError: `invalid_params`, one line per problem.
    """
    try:
        if text is not None:
            return load_flow(text, "toml" if format == "toml" else "yaml")
        return parse_flow(definition)
    except FlowFileError as error:
        raise _invalid("The flow is not valid:\n" + "\n".join(error.problems)) from None


def _log_death(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("the automation scheduler stopped; scheduled automations do not fire", exc_info=task.exception())


def _clear_next_fire(automation_id: str, conn: Any) -> None:
    repos.automations.set_next_fire(conn, automation_id, None)


class AutomationService:
    """Saved flows, their runs and their tools (`automation/*`)."""

    def __init__(
        self,
        db: Database,
        host: StepHost,
        tools: ToolRegistry,
        *,
        publish: Callable[[str, WireModel], None],
        create_session: Callable[[str], Awaitable[str]] | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        leases: Leases | None = None,
    ) -> None:
        """Args:
        db: the store.
        host: what steps need from the core.
        tools: the registry flow tools and `proposeAutomation` go into, and steps' tools come from.
        publish: sends a notification to every connection (`automation/run`).
        create_session: makes a session with this title and returns its id (where agent steps run).
        clock: now, aware.
        leases: replicas on PostgreSQL: which replica drives each run (default: one process).
        """
        self._create_session = create_session
        self._sessions: dict[str, str] = {}
        """automation id → its session."""
        self._db = db
        self._host = host
        self._tools = tools
        self._publish = publish
        self._clock = clock
        self.run_log = Runs(db, host, tools, publish=publish, clock=clock, leases=leases)
        """Every run: started, parked, resumed, cancelled, recovered."""
        self._stopping = False
        self._wake = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None
        self._flows: dict[str, tuple[AutomationRow, Flow]] = {}
        """Enabled automations by id, as last loaded (the triggers read this)."""
        self.on_change: list[Callable[[], None]] = []
        """Told whenever the set of enabled automations changes (the live triggers re-read `enabled_flows`)."""

    # -- life ------------------------------------------------------------------------------------------------

    async def start(self, *, schedule: bool = True) -> None:
        """Recover runs a previous process left, register the tools, and start the cron loop."""
        if self._tools.get(ProposeAutomationTool.name) is None:
            self._tools.register(ProposeAutomationTool(self))
        await self._reload()
        await self.run_log.recover()
        if schedule:
            self._loop_task = asyncio.get_running_loop().create_task(self._schedule_forever(), name="automations")
            self._loop_task.add_done_callback(_log_death)

    async def stop(self) -> None:
        """Stop the cron loop and every live run; those in a step are `interrupted`, resumed at the next start."""
        self._stopping = True
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):  # a loop that died was logged then
                await self._loop_task
        await self.run_log.stop()

    def _changed(self, automation_id: str, name: str, *, deleted: bool = False) -> None:
        self._publish("automation/changed", AutomationChanged(id=automation_id, name=name, deleted=deleted))

    async def session_for(self, automation_id: str, name: str) -> str:
        """The automation's session, made on first use (its agent steps' turns are visible there like any turn)."""
        known = self._sessions.get(automation_id)
        if known is not None:
            return known
        row = await self._db.read(lambda conn: repos.automations.get(conn, automation_id))
        stored = row.session_id if row is not None else None
        session: str | None = None
        if stored is not None and await self._db.read(lambda conn: repos.sessions.get(conn, stored)) is not None:
            session = stored
        if session is None:
            if self._create_session is None:
                raise ToolError("Agent steps need sessions, which are not available here.")
            session = await self._create_session(f"Automation: {name}")
            await self._db.write(lambda conn: repos.automations.set_session(conn, automation_id, session))
        self._sessions[automation_id] = session
        return session

    def automation_sessions(self) -> set[str]:
        """The sessions automations' agent steps run in (their events fire no session-event trigger)."""
        return set(self._sessions.values())

    def scheduler_problem(self) -> str | None:
        """Why scheduled automations would not fire now, if they would not (the `scheduler` health entry)."""
        task = self._loop_task
        if task is None:
            return None if self._stopping else "The automation scheduler has not started."
        if task.done() and not task.cancelled() and task.exception() is not None:
            return f"The automation scheduler stopped: {task.exception()!r}"
        return None

    def enabled_flows(self) -> list[tuple[AutomationRow, Flow]]:
        return list(self._flows.values())

    async def reload(self) -> None:
        """Read the enabled automations again (another replica changed one)."""
        await self._reload()

    async def _reload(self) -> None:
        rows = await self._db.read(repos.automations.list_all)
        flows: dict[str, tuple[AutomationRow, Flow]] = {}
        for row in rows:
            if not row.enabled:
                continue
            try:
                flows[row.id] = (row, flow_of(row))
            except ValueError:
                log.warning("automation %s no longer validates; it is left out", row.name, exc_info=True)
        self._flows = flows
        self._sessions.update({row.id: row.session_id for row in rows if row.session_id is not None})
        wanted = {flow_tool_name(flow.name): flow for _, flow in flows.values()}
        for tool in list(self._tools):
            if tool.name.startswith(FLOW_TOOL_PREFIX) and isinstance(tool, FlowTool):
                if wanted.get(tool.name) is not tool.flow:
                    self._tools.unregister(tool.name)
        for name, flow in wanted.items():
            taken = self._tools.get(name)
            if taken is None:
                self._tools.register(FlowTool(flow, self))
            elif not isinstance(taken, FlowTool):
                log.warning("automation %s is not a tool: a plugin's tool is already named %s", flow.name, name)
        self._wake.set()
        for listener in list(self.on_change):
            listener()

    # -- automations -----------------------------------------------------------------------------------------

    async def _row(self, ref: str) -> AutomationRow:
        def read(conn: Any) -> AutomationRow | None:
            return repos.automations.get(conn, ref) or repos.automations.get_by_name(conn, ref)

        row = await self._db.read(read)
        if row is None:
            raise _not_found(ref)
        return row

    async def _info(self, row: AutomationRow) -> AutomationInfo:
        last = await self._db.read(lambda conn: repos.automations.runs(conn, automation_id=row.id, limit=1))
        last_info = None
        if last:
            steps = await self._db.read(lambda conn: repos.automations.steps_of(conn, [last[0].id]))
            last_info = run_info(last[0], steps[last[0].id])
        return automation_info(row, last_info)

    async def list_all(self) -> list[AutomationInfo]:
        rows = await self._db.read(repos.automations.list_all)
        last = await self._db.read(repos.automations.last_runs)
        return [automation_info(row, run_info(last[row.id], []) if row.id in last else None) for row in rows]

    async def get(self, ref: str) -> AutomationInfo:
        return await self._info(await self._row(ref))

    def _next_fire(self, flow: Flow, enabled: bool) -> datetime | None:
        if enabled and isinstance(flow.trigger, CronTrigger):
            return flow.trigger.next_after(self._clock())
        return None

    async def create(self, flow: Flow) -> AutomationInfo:
        """Save a new automation (version 1).

        Raises:
            ProtocolError: `automation_exists`.
        """
        now = self._clock()
        row = AutomationRow(
            id=new_id("auto"),
            name=flow.name,
            definition=stored_definition(flow),
            enabled=flow.enabled,
            version=1,
            created_at=now,
            updated_at=now,
            next_fire_at=self._next_fire(flow, flow.enabled),
            session_id=None,
        )

        def write(conn: Any) -> bool:
            if repos.automations.get_by_name(conn, flow.name) is not None:
                return False
            repos.automations.insert(conn, row)
            return True

        if not await self._db.write(write):
            existing = await self._db.read(lambda conn: repos.automations.get_by_name(conn, flow.name))
            raise ProtocolError(
                ErrorCode.AUTOMATION_EXISTS,
                f"An automation named {flow.name!r} exists already; update it, or choose another name.",
                source=ErrorSource.SERVER,
                details={"id": existing.id if existing else None, "name": flow.name},
            )
        await self._reload()
        self._changed(row.id, row.name)
        return await self._info(row)

    async def update(self, ref: str, flow: Flow) -> AutomationInfo:
        """Replace the definition; the version goes up (a run in progress keeps the definition it started with).

        Raises:
            ProtocolError: `automation_not_found`, `automation_exists` (renamed onto another's name).
        """
        row = await self._row(ref)
        now = self._clock()
        enabled = flow.enabled
        updated = AutomationRow(
            id=row.id,
            name=flow.name,
            definition=stored_definition(flow),
            enabled=enabled,
            version=row.version + 1,
            created_at=row.created_at,
            updated_at=now,
            next_fire_at=self._next_fire(flow, enabled),
            session_id=row.session_id,
        )

        def write(conn: Any) -> bool:
            other = repos.automations.get_by_name(conn, flow.name)
            if other is not None and other.id != row.id:
                return False
            repos.automations.update(conn, updated)
            return True

        if not await self._db.write(write):
            raise ProtocolError(
                ErrorCode.AUTOMATION_EXISTS, f"An automation named {flow.name!r} exists already.",
                source=ErrorSource.SERVER,
            )  # fmt: skip
        await self._reload()
        self._changed(updated.id, updated.name)
        return await self._info(updated)

    async def delete(self, ref: str) -> bool:
        row = await self._row(ref)
        for run_id in self.run_log.running_for(row.id):
            await self.run_log.cancel(run_id)
        deleted = await self._db.write(lambda conn: repos.automations.delete(conn, row.id))
        await self._reload()
        self._changed(row.id, row.name, deleted=True)
        return bool(deleted)

    async def set_enabled(self, ref: str, enabled: bool) -> AutomationInfo:
        row = await self._row(ref)
        flow = flow_of(row)
        now = self._clock()
        next_fire = self._next_fire(flow, enabled) if enabled != row.enabled or not enabled else row.next_fire_at
        await self._db.write(lambda conn: repos.automations.set_enabled(conn, row.id, enabled, next_fire, now))
        await self._reload()
        self._changed(row.id, row.name)
        return await self.get(row.id)

    # -- runs ------------------------------------------------------------------------------------------------

    async def run(
        self,
        ref: str,
        inputs: dict[str, Any],
        *,
        trigger: dict[str, Any] | None = None,
    ) -> AutomationRunInfo:
        """Start a run now (enabled or not).

        Raises:
            ProtocolError: `automation_not_found`; `invalid_params` for inputs that do not match.
        """
        row = await self._row(ref)
        run = await self.run_log.start(row, inputs, trigger or {"type": "manual"})
        assert run is not None
        return await self.run_log.info(run.id)

    async def runs(self, ref: str | None = None, run_id: str | None = None, limit: int = 50) -> list[AutomationRunInfo]:
        """Recent runs, newest first (of one automation, or the one run), with their steps."""
        automation_id = (await self._row(ref)).id if ref is not None and run_id is None else None
        return await self.run_log.list(automation_id, run_id, limit)

    async def cancel(self, run_id: str) -> AutomationRunInfo:
        return await self.run_log.cancel(run_id)

    async def respond(self, run_id: str, approve: bool) -> AutomationRunInfo:
        return await self.run_log.respond(run_id, approve)

    async def resume(self, run_id: str) -> AutomationRunInfo:
        return await self.run_log.resume(run_id)

    async def wait(self, run_id: str) -> None:
        await self.run_log.wait(run_id)

    # -- cron ------------------------------------------------------------------------------------------------

    async def tick(self, now: datetime | None = None) -> list[str]:
        """Fire the cron automations that are due at `now` (default: the clock); returns the runs started."""
        now = now or self._clock()
        due = await self._db.read(lambda conn: repos.automations.due(conn, now))
        started: list[str] = []
        for row in due:
            try:
                flow = flow_of(row)
            except ValueError:
                continue
            trigger = flow.trigger
            if not isinstance(trigger, CronTrigger) or row.next_fire_at is None:
                await self._db.write(partial(_clear_next_fire, row.id))
                continue
            plan = plan_fires(trigger, row.next_fire_at, now)
            try:
                inputs = flow.resolve_inputs({})
            except FlowInputError:
                inputs = None  # required inputs: a scheduled run cannot give them
            runs = [
                self.run_log.new_run(row, inputs, {"type": "cron", "scheduledFor": fire.at.isoformat(),
                                            "missed": fire.missed}, fire.key)
                for fire in plan.fires
            ] if inputs is not None else []  # fmt: skip

            def record(
                conn: Any, row: AutomationRow = row, runs: list[RunRow] = runs, plan: Any = plan
            ) -> list[RunRow]:
                inserted = [run for run in runs if repos.automations.insert_run(conn, run)]
                repos.automations.set_next_fire(conn, row.id, plan.next_at)
                return inserted

            for run in await self._db.write(record):
                self.run_log.launch(run)
                self.run_log.announce_soon(run.id)
                started.append(run.id)
            if inputs is None and plan.fires:
                log.warning("automation %s has required inputs, so its schedule cannot run it", row.name)
        return started

    async def _schedule_forever(self) -> None:
        while True:
            self._wake.clear()
            try:
                await self.tick()
            except Exception:
                log.exception("firing scheduled automations failed")
            upcoming = [row.next_fire_at for row, _ in self._flows.values() if row.next_fire_at is not None]
            wait = _MAX_SLEEP
            if upcoming:
                wait = max(0.05, min(wait, (min(upcoming) - self._clock()).total_seconds() + 0.01))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)

    # -- other triggers --------------------------------------------------------------------------------------

    async def fire(self, automation_id: str, trigger: dict[str, Any]) -> str | None:
        """Start a run for an event trigger (file, session event, MCP notification); None when it may not run now
        (its previous run is still going, or it is disabled)."""
        entry = self._flows.get(automation_id)
        if entry is None or self._stopping:
            return None
        if self.run_log.running_for(automation_id):
            return None  # one run at a time per event-triggered flow: its own writes cannot make it loop
        row, _ = entry
        try:
            run = await self.run_log.start(row, {}, trigger)
        except ProtocolError:
            log.warning("automation %s has required inputs, so its trigger cannot run it", row.name)
            return None
        if run is None:
            return None
        self.run_log.announce_soon(run.id)
        return run.id

    # -- tools -----------------------------------------------------------------------------------------------

    async def run_for_tool(self, flow_name: str, inputs: dict[str, Any], session_id: str) -> tuple[str, str, Any]:
        row = await self._row(flow_name)
        try:
            run = await self.run_log.start(row, inputs, {"type": "tool", "sessionId": session_id})
        except ProtocolError as error:
            raise ToolError(error.message) from None
        assert run is not None
        await self.run_log.wait(run.id)
        done = await self.run_log.row(run.id)
        if done.status == RunState.DONE:
            return run.id, done.status, done.result
        message = (done.error or {}).get("message", "") if done.error else ""
        return run.id, done.status, message

    async def propose(self, flow: Flow, enable: bool) -> str:
        flow = flow.model_copy(update={"enabled": enable})
        try:
            info = await self.create(flow)
        except ProtocolError as error:
            raise ToolError(error.message) from None
        state = "enabled" if info.enabled else "disabled (the user can enable it)"
        when = f"; next run {info.next_run_at.isoformat()}" if info.next_run_at else ""
        return f"Created automation {info.name} ({state}{when}). The agent can also run it as {info.tool}."

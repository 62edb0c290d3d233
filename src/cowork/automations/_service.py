"""Automations in the server: saved flows, their runs (persisted, resumable, cancellable), and their tools.

Long because it is the one owner of a run's life: start (by hand, a trigger or the agent), park on an approval and
go on when answered, cancel, recover after a crash, resume after an interruption. The step effects and their record
are `_engine`'s, when a cron flow fires `_schedule`'s, the other triggers `_triggers_live`'s.

Runs have their own state machine (below, `RUNS`): `running` → `waiting_for_human` (a step waits for the user) →
`running` again when approved; `interrupted` when the server stopped during a step with side effects; `done`,
`failed`, `cancelled` are final. After a crash (`recover`) a run cut between steps, or in a condition or delay, goes
on by itself; one cut inside a step with side effects is `interrupted`, and `automation/resume` asks before it runs
that step again. A finished step is never run again: its output is stored with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from enum import StrEnum
from functools import partial
from typing import Any

from cowork.machines import StateMachine
from cowork.protocol import (
    AutomationInfo,
    AutomationRunInfo,
    ErrorCode,
    ErrorSource,
    ProtocolError,
    WireModel,
)
from cowork.sessions import new_id
from cowork.store import Database, repos
from cowork.store.repos.automations import AutomationRow, RunRow, RunStepRow
from cowork.tools import ToolError, ToolRegistry

from ._engine import RunEngine
from ._executor import run_flow
from ._files import FlowFileError, load_flow, parse_flow
from ._host import StepHost
from ._model import Flow, FlowInputError
from ._schedule import plan_fires
from ._steps import AgentStep, ConditionStep, DelayStep, NotificationStep
from ._tools import FLOW_TOOL_PREFIX, FlowTool, ProposeAutomationTool, flow_tool_name
from ._triggers import CronTrigger
from ._wire import automation_info, flow_of, run_info, stored_definition

__all__ = ["RUNS", "AutomationService", "RunState"]

log = logging.getLogger(__name__)

_MAX_SLEEP = 30.0


class RunState(StrEnum):
    RUNNING = "running"
    WAITING_FOR_HUMAN = "waiting_for_human"
    INTERRUPTED = "interrupted"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


R = RunState
RUNS = StateMachine(
    "automation run",
    RunState,
    {
        R.RUNNING: {R.WAITING_FOR_HUMAN, R.INTERRUPTED, R.DONE, R.FAILED, R.CANCELLED},
        R.WAITING_FOR_HUMAN: {R.RUNNING, R.FAILED, R.CANCELLED},
        R.INTERRUPTED: {R.RUNNING, R.WAITING_FOR_HUMAN, R.CANCELLED},
        R.DONE: set(),
        R.FAILED: set(),
        R.CANCELLED: set(),
    },
)


def _not_found(ref: str) -> ProtocolError:
    return ProtocolError(ErrorCode.AUTOMATION_NOT_FOUND, f"No automation {ref!r}.", source=ErrorSource.SERVER)


def _run_not_found(run_id: str) -> ProtocolError:
    return ProtocolError(ErrorCode.RUN_NOT_FOUND, f"No automation run {run_id!r}.", source=ErrorSource.SERVER)


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


def _clear_next_fire(automation_id: str, conn: Any) -> None:
    repos.automations.set_next_fire(conn, automation_id, None)


class _Live:
    """A run whose steps are running in this process."""

    def __init__(self, engine: RunEngine, task: asyncio.Task[None]) -> None:
        self.engine = engine
        self.task = task


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
    ) -> None:
        """Args:
        db: the store.
        host: what steps need from the core.
        tools: the registry flow tools and `proposeAutomation` go into, and steps' tools come from.
        publish: sends a notification to every connection (`automation/run`).
        create_session: makes a session with this title and returns its id (where agent steps run).
        clock: now, aware.
        """
        self._create_session = create_session
        self._sessions: dict[str, str] = {}
        """automation id → its session."""
        self._db = db
        self._host = host
        self._tools = tools
        self._publish = publish
        self._clock = clock
        self._live: dict[str, _Live] = {}
        self._stopping = False
        self._wake = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None
        self._flows: dict[str, tuple[AutomationRow, Flow]] = {}
        """Enabled automations by id, as last loaded (the triggers read this)."""
        self.on_change: list[Callable[[], None]] = []
        """Told whenever the set of enabled automations changes (the live triggers re-read `enabled_flows`)."""
        self._announcing: set[asyncio.Task[None]] = set()

    # -- life ------------------------------------------------------------------------------------------------

    async def start(self, *, schedule: bool = True) -> None:
        """Recover runs a previous process left, register the tools, and start the cron loop."""
        if self._tools.get(ProposeAutomationTool.name) is None:
            self._tools.register(ProposeAutomationTool(self))
        await self._reload()
        await self.recover()
        if schedule:
            self._loop_task = asyncio.get_running_loop().create_task(self._schedule_forever(), name="automations")

    async def stop(self) -> None:
        """Stop the cron loop and every live run; those in a step are `interrupted`, resumed at the next start."""
        self._stopping = True
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
        for live in list(self._live.values()):
            live.engine.stopping = True
            live.task.cancel()
        if self._live:
            await asyncio.wait([live.task for live in self._live.values()])
        if self._announcing:
            await asyncio.wait(list(self._announcing))

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
            if self._tools.get(name) is None:
                self._tools.register(FlowTool(flow, self))
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
            raise ProtocolError(
                ErrorCode.AUTOMATION_EXISTS,
                f"An automation named {flow.name!r} exists already; update it, or choose another name.",
                source=ErrorSource.SERVER,
            )
        await self._reload()
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
        return await self._info(updated)

    async def delete(self, ref: str) -> bool:
        row = await self._row(ref)
        for run_id, live in list(self._live.items()):
            if live.engine.automation_id == row.id:
                await self.cancel(run_id)
        deleted = await self._db.write(lambda conn: repos.automations.delete(conn, row.id))
        await self._reload()
        return bool(deleted)

    async def set_enabled(self, ref: str, enabled: bool) -> AutomationInfo:
        row = await self._row(ref)
        flow = flow_of(row)
        now = self._clock()
        next_fire = self._next_fire(flow, enabled) if enabled != row.enabled or not enabled else row.next_fire_at
        await self._db.write(lambda conn: repos.automations.set_enabled(conn, row.id, enabled, next_fire, now))
        await self._reload()
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
        run = await self._start(row, inputs, trigger or {"type": "manual"})
        assert run is not None
        return await self._run_info(run.id)

    async def _start(
        self, row: AutomationRow, inputs: dict[str, Any], trigger: dict[str, Any], fire_key: str | None = None
    ) -> RunRow | None:
        flow = flow_of(row)
        try:
            resolved = flow.resolve_inputs(inputs)
        except FlowInputError as error:
            raise _invalid(f"Inputs for {flow.name}: {error}") from None
        run = self._new_run(row, resolved, trigger, fire_key)
        if not await self._db.write(lambda conn: repos.automations.insert_run(conn, run)):
            return None
        self._launch(run)
        return run

    def _new_run(
        self, row: AutomationRow, inputs: dict[str, Any], trigger: dict[str, Any], fire_key: str | None
    ) -> RunRow:
        return RunRow(
            id=new_id("run"),
            automation_id=row.id,
            automation_name=row.name,
            version=row.version,
            definition={**row.definition, "enabled": row.enabled, "version": row.version},
            status=R.RUNNING,
            trigger=trigger,
            inputs=inputs,
            fire_key=fire_key,
            started_at=self._clock(),
            finished_at=None,
            outputs={},
            resume_at=0,
            result=None,
            error=None,
            pending=None,
            approved_step=None,
            session_id=None,
        )

    def _launch(self, run: RunRow, *, steps: list[RunStepRow] | None = None) -> None:
        """Run `run`'s steps from `resume_at` in a task of its own."""
        if self._stopping or run.id in self._live:
            return
        flow = Flow.model_validate(run.definition)
        operations = {
            s.step_id: s.input["operationId"]
            for s in steps or []
            if isinstance(s.input, dict) and isinstance(s.input.get("operationId"), str)
        }
        engine = RunEngine(
            self._db,
            self._host,
            self._tools,
            run_id=run.id,
            automation_id=run.automation_id,
            flow=flow,
            approved_step=run.approved_step,
            agent_operations=operations,
            announce=self._announce_soon,
            clock=self._clock,
        )
        engine.outputs = dict(run.outputs)
        start_at = run.resume_at or 0
        sleep = self._sleep_for(flow, start_at, steps or [])
        task = asyncio.get_running_loop().create_task(self._drive(engine, run, start_at, sleep), name=f"run-{run.id}")
        self._live[run.id] = _Live(engine, task)

    def _sleep_for(self, flow: Flow, start_at: int, steps: list[RunStepRow]) -> Callable[[float], Any]:
        """A delay step cut short by a restart waits only what was left of it."""
        first = flow.steps[start_at] if start_at < len(flow.steps) else None
        started = next((s.started_at for s in steps if first is not None and s.step_id == first.id), None)
        left: list[float] = []
        if isinstance(first, DelayStep) and started is not None:
            left.append(max(0.0, first.seconds - (self._clock() - started).total_seconds()))

        async def sleep(seconds: float) -> None:
            await asyncio.sleep(left.pop() if left else seconds)

        return sleep

    async def _drive(self, engine: RunEngine, run: RunRow, start_at: int, sleep: Callable[[float], Any]) -> None:
        try:
            result = await run_flow(
                engine.flow,
                run.inputs,
                engine,
                record=engine,
                start_at=start_at,
                outputs=run.outputs,
                trigger=run.trigger,
                run_id=run.id,
                sleep=sleep,
            )
        except asyncio.CancelledError:
            return
        except Exception as error:
            log.exception("automation run %s failed", run.id)
            message = f"{type(error).__name__}: {error}"
            await self._db.write(lambda conn: repos.automations.update_run(
                conn, run.id, status=R.FAILED, finished_at=self._clock(), error={"code": "internal", "message": message},
            ))  # fmt: skip
            self._announce_soon(run.id)
            return
        finally:
            self._live.pop(run.id, None)
        notifier = self._host.notifier
        if notifier is None:
            return
        if str(result.status) == R.WAITING_FOR_HUMAN and engine.pending is not None:
            pending = engine.pending
            await notifier.offer(
                kind="automation_approval",
                tier="urgent",
                title=f"{run.automation_name} waits for your approval",
                body=f"Step {pending['stepId']} wants to run {pending['tool']}: {pending['reason']}",
                key=f"approval:{run.id}",
                run_id=run.id,
                automation_id=run.automation_id,
            )
        elif str(result.status) == R.FAILED and result.error is not None:
            await notifier.offer(
                kind="automation_failed",
                tier="helpful",
                title=f"{run.automation_name} failed",
                body=f"Step {result.step_id}: {result.error.message}"[:1000],
                key=f"failed:{run.automation_id}",
                run_id=run.id,
                automation_id=run.automation_id,
            )

    async def wait(self, run_id: str) -> None:
        """Wait until the run's steps stop running in this process (done, failed, parked, interrupted)."""
        live = self._live.get(run_id)
        if live is not None:
            await asyncio.wait([live.task])

    def _announce_soon(self, run_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._announce(run_id))
        self._announcing.add(task)
        task.add_done_callback(self._announcing.discard)

    async def _announce(self, run_id: str) -> None:
        with contextlib.suppress(ProtocolError):
            self._publish("automation/run", await self._run_info(run_id))

    async def _run_row(self, run_id: str) -> RunRow:
        run = await self._db.read(lambda conn: repos.automations.get_run(conn, run_id))
        if run is None:
            raise _run_not_found(run_id)
        return run

    async def _run_info(self, run_id: str) -> AutomationRunInfo:
        run = await self._run_row(run_id)
        steps = await self._db.read(lambda conn: repos.automations.steps_of(conn, [run_id]))
        return run_info(run, steps[run_id])

    async def runs(self, ref: str | None = None, run_id: str | None = None, limit: int = 50) -> list[AutomationRunInfo]:
        if run_id is not None:
            return [await self._run_info(run_id)]
        automation_id = (await self._row(ref)).id if ref is not None else None
        rows = await self._db.read(lambda conn: repos.automations.runs(conn, automation_id=automation_id, limit=limit))
        steps = await self._db.read(lambda conn: repos.automations.steps_of(conn, [r.id for r in rows]))
        return [run_info(row, steps[row.id]) for row in rows]

    async def cancel(self, run_id: str) -> AutomationRunInfo:
        """Cancel a run that is running, waiting or interrupted (its agent step's operation too).

        Raises:
            ProtocolError: `run_not_found`; `not_running` when it has ended.
        """
        live = self._live.get(run_id)
        if live is not None:
            live.task.cancel()
            await asyncio.wait([live.task])
            return await self._run_info(run_id)
        run = await self._run_row(run_id)
        state = RunState(run.status)
        if not RUNS.allows(state, R.CANCELLED):
            raise ProtocolError(ErrorCode.NOT_RUNNING, f"Run {run_id} has ended ({run.status}).",
                                source=ErrorSource.SERVER)  # fmt: skip
        await self._db.write(lambda conn: repos.automations.update_run(
            conn, run_id, status=R.CANCELLED, finished_at=self._clock(), pending=None,
            error={"code": "cancelled", "message": "Cancelled by the user."},
        ))  # fmt: skip
        self._announce_soon(run_id)
        return await self._run_info(run_id)

    async def respond(self, run_id: str, approve: bool) -> AutomationRunInfo:
        """Approve (run it, then go on) or reject (the run fails) the step a run waits on.

        Raises:
            ProtocolError: `run_not_found`; `not_resumable` when it waits on nothing this can answer.
        """
        run = await self._run_row(run_id)
        pending = run.pending
        if run.status != R.WAITING_FOR_HUMAN or not pending or run.id in self._live:
            where = ""
            if pending and pending.get("sessionId"):
                where = f" Its agent step waits in session {pending['sessionId']}: answer there."
            raise ProtocolError(ErrorCode.NOT_RESUMABLE, f"Run {run_id} waits on no approval here ({run.status})."
                                + where, source=ErrorSource.SERVER)  # fmt: skip
        step_id = str(pending["stepId"])
        if approve:
            RUNS.check(R.WAITING_FOR_HUMAN, R.RUNNING, subject=run_id)
            await self._db.write(lambda conn: repos.automations.update_run(
                conn, run_id, status=R.RUNNING, pending=None, approved_step=step_id))  # fmt: skip
            await self._relaunch(run_id)
        else:
            message = f"The user rejected step {step_id} ({pending.get('tool')})."
            now = self._clock()

            def reject(conn: Any) -> None:
                steps = repos.automations.steps_of(conn, [run_id])[run_id]
                row = next((s for s in steps if s.step_id == step_id), None)
                if row is not None:
                    repos.automations.put_step(conn, RunStepRow(
                        run_id, step_id, row.position, row.type, "failed", input=row.input,
                        error={"code": "rejected", "message": message}, started_at=row.started_at,
                    ))  # fmt: skip
                repos.automations.update_run(conn, run_id, status=R.FAILED, finished_at=now, pending=None,
                                             error={"code": "rejected", "message": message})  # fmt: skip

            await self._db.write(reject)
            self._announce_soon(run_id)
        return await self._run_info(run_id)

    async def _relaunch(self, run_id: str) -> None:
        run = await self._run_row(run_id)
        steps = await self._db.read(lambda conn: repos.automations.steps_of(conn, [run_id]))
        self._launch(run, steps=steps[run_id])
        self._announce_soon(run_id)

    async def resume(self, run_id: str) -> AutomationRunInfo:
        """Go on with an interrupted run. A step with side effects that was cut short asks first (the run waits on
        it); an agent step's operation is resumed, its own interrupted calls asking again.

        Raises:
            ProtocolError: `run_not_found`; `not_resumable` unless the run is interrupted.
        """
        run = await self._run_row(run_id)
        if run.status != R.INTERRUPTED or run.id in self._live:
            raise ProtocolError(ErrorCode.NOT_RESUMABLE, f"Run {run_id} is not interrupted ({run.status}).",
                                source=ErrorSource.SERVER)  # fmt: skip
        steps = (await self._db.read(lambda conn: repos.automations.steps_of(conn, [run_id])))[run_id]
        cut = next((s for s in reversed(steps) if s.status in ("running", "interrupted")), None)
        if cut is not None and cut.type in ("toolCall", "mcpToolCall"):
            arguments = cut.input.get("arguments", {}) if isinstance(cut.input, dict) else {}
            flow = Flow.model_validate(run.definition)
            step = flow.steps[flow.step_index(cut.step_id)]
            tool = getattr(step, "tool", cut.type)
            pending = {
                "stepId": cut.step_id,
                "tool": tool if cut.type == "toolCall" else f"{getattr(step, 'server', '')}/{tool}",
                "arguments": arguments,
                "reason": "The server stopped while this step ran, so it may or may not have taken effect. Run it "
                "again?",
            }
            await self._db.write(lambda conn: repos.automations.update_run(
                conn, run_id, status=R.WAITING_FOR_HUMAN, pending=pending, error=None))  # fmt: skip
            self._announce_soon(run_id)
            return await self._run_info(run_id)
        await self._db.write(lambda conn: repos.automations.update_run(conn, run_id, status=R.RUNNING, error=None))
        await self._relaunch(run_id)
        return await self._run_info(run_id)

    async def recover(self) -> None:
        """At start: runs a previous process left running go on, or become `interrupted` (see the module doc)."""
        rows = await self._db.read(lambda conn: repos.automations.runs_with_status(
            conn, [R.RUNNING, R.WAITING_FOR_HUMAN]))  # fmt: skip
        ids = [r.id for r in rows]
        steps = await self._db.read(lambda conn: repos.automations.steps_of(conn, ids))
        for run in rows:
            run_steps = steps[run.id]
            if run.status == R.WAITING_FOR_HUMAN:
                if run.pending and run.pending.get("tool") == "agentStep":
                    self._launch(run, steps=run_steps)  # it waits on its operation again
                continue
            cut = next((s for s in reversed(run_steps) if s.status == "running"), None)
            flow = Flow.model_validate(run.definition)
            step = flow.steps[flow.step_index(cut.step_id)] if cut is not None else None
            if step is None or isinstance(step, ConditionStep | DelayStep | NotificationStep):
                if cut is not None:
                    run = await self._resume_point(run, flow.step_index(cut.step_id))
                self._launch(run, steps=run_steps)
                continue
            kind = "agent step" if isinstance(step, AgentStep) else "step"
            message = (f"The server stopped while {kind} {step.id} ran; it may or may not have taken effect. "
                       "Resume the run to go on (it asks before running the step again).")  # fmt: skip

            def interrupt(conn: Any, run: RunRow = run, cut: RunStepRow = cut, message: str = message) -> None:  # type: ignore[assignment]
                repos.automations.put_step(conn, RunStepRow(
                    run.id, cut.step_id, cut.position, cut.type, "interrupted", input=cut.input,
                    started_at=cut.started_at, note="The server stopped while it ran.",
                ))  # fmt: skip
                repos.automations.update_run(conn, run.id, status=R.INTERRUPTED,
                                             error={"code": "interrupted", "message": message})  # fmt: skip

            await self._db.write(interrupt)
            self._announce_soon(run.id)
            if self._host.notifier is not None:
                await self._host.notifier.offer(
                    kind="automation_interrupted", tier="helpful", title=f"{run.automation_name} was interrupted",
                    body=message, key=f"interrupted:{run.automation_id}", run_id=run.id,
                    automation_id=run.automation_id,
                )  # fmt: skip

    async def _resume_point(self, run: RunRow, index: int) -> RunRow:
        await self._db.write(lambda conn: repos.automations.update_run(conn, run.id, resume_at=index))
        return await self._run_row(run.id)

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
                self._new_run(row, inputs, {"type": "cron", "scheduledFor": fire.at.isoformat(),
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
                self._launch(run)
                self._announce_soon(run.id)
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
        if any(live.engine.automation_id == automation_id for live in self._live.values()):
            return None  # one run at a time per event-triggered flow: its own writes cannot make it loop
        row, _ = entry
        try:
            run = await self._start(row, {}, trigger)
        except ProtocolError:
            log.warning("automation %s has required inputs, so its trigger cannot run it", row.name)
            return None
        if run is None:
            return None
        self._announce_soon(run.id)
        return run.id

    # -- tools -----------------------------------------------------------------------------------------------

    async def run_for_tool(self, flow_name: str, inputs: dict[str, Any], session_id: str) -> tuple[str, str, Any]:
        row = await self._row(flow_name)
        try:
            run = await self._start(row, inputs, {"type": "tool", "sessionId": session_id})
        except ProtocolError as error:
            raise ToolError(error.message) from None
        assert run is not None
        await self.wait(run.id)
        done = await self._run_row(run.id)
        if done.status == R.DONE:
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

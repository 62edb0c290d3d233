"""A flow's runs in the server: started, parked on an approval and resumed, cancelled, recovered after a crash.

Long because it is the one owner of a run's life. Runs have their own state machine (`RUNS`): `running` →
`waiting_for_human` (a step waits for the user) → `running` again when approved; `interrupted` when the server
stopped during a step with side effects; `done`, `failed`, `cancelled` are final. After a crash (`recover`) a run cut
between steps, or in a condition, delay or notification, goes on by itself; one cut inside a step with side effects
is `interrupted`, and `resume` asks before it runs that step again. A finished step is never run again: its output
is stored with it. The step effects and their record are `_engine`'s.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import logging
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from functools import partial
from typing import Any

from cowork.machines import StateMachine
from cowork.protocol import AutomationRunInfo, ErrorCode, ErrorSource, ProtocolError, WireModel
from cowork.runtime import Leases
from cowork.sessions import new_id
from cowork.store import Database, repos
from cowork.store.repos.automations import AutomationRow, RunRow, RunStepRow
from cowork.tools import ToolRegistry

from ._engine import RunEngine
from ._executor import run_flow
from ._host import StepHost
from ._model import Flow, FlowInputError
from ._steps import AgentStep, ConditionStep, DelayStep, NotificationStep
from ._wire import flow_of, run_info

__all__ = ["RUNS", "RunState", "Runs"]

log = logging.getLogger(__name__)

_ANNOUNCE_AFTER = 0.05
"""Seconds an announcement waits for more changes of its run (a client sees progress within this)."""


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


def _run_not_found(run_id: str) -> ProtocolError:
    return ProtocolError(ErrorCode.RUN_NOT_FOUND, f"No automation run {run_id!r}.", source=ErrorSource.SERVER)


def _invalid(message: str) -> ProtocolError:
    return ProtocolError(ErrorCode.INVALID_PARAMS, message, source=ErrorSource.SERVER)


class _Live:
    """A run whose steps are running in this process."""

    def __init__(self, engine: RunEngine, task: asyncio.Task[None]) -> None:
        self.engine = engine
        self.task = task


class Runs:
    """Every run: the ones in play in this process, and the rest in the store."""

    def __init__(
        self,
        db: Database,
        host: StepHost,
        tools: ToolRegistry,
        *,
        publish: Callable[[str, WireModel], None],
        clock: Callable[[], datetime],
        leases: Leases | None = None,
    ) -> None:
        self._db = db
        self._leases = leases or Leases(db, replica="local", ttl=15, enabled=False)
        """Replicas on PostgreSQL: a run is driven by one replica at a time, and a dead one's runs are taken over."""
        self._leases.add_sweep(self._take_over_orphans)
        self.host = host
        """What steps need of the core (the benchmark borrows its tool context)."""
        self._tools = tools
        self._publish = publish
        self._clock = clock
        self._live: dict[str, _Live] = {}
        self._stopping = False
        self._announcing: set[asyncio.Task[None]] = set()
        self._to_announce: set[str] = set()
        self._publishing = asyncio.Lock()

    async def stop(self) -> None:
        """Stop every live run; those in a step are `interrupted`, resumed at the next start."""
        self._stopping = True
        for live in list(self._live.values()):
            live.engine.stopping = True
            live.task.cancel()
        if self._live:
            await asyncio.wait([live.task for live in self._live.values()])
        if self._announcing:
            await asyncio.wait(list(self._announcing))

    def running_for(self, automation_id: str) -> list[str]:
        """The automation's runs whose steps are running in this process."""
        return [run_id for run_id, live in self._live.items() if live.engine.automation_id == automation_id]

    async def start(
        self, row: AutomationRow, inputs: dict[str, Any], trigger: dict[str, Any], fire_key: str | None = None
    ) -> RunRow | None:
        flow = flow_of(row)
        try:
            resolved = flow.resolve_inputs(inputs)
        except FlowInputError as error:
            raise _invalid(f"Inputs for {flow.name}: {error}") from None
        run = self.new_run(row, resolved, trigger, fire_key)
        if not await self._db.write(lambda conn: repos.automations.insert_run(conn, run)):
            return None
        self.launch(run)
        return run

    def new_run(
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

    def launch(self, run: RunRow, *, steps: list[RunStepRow] | None = None) -> None:
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
            self.host,
            self._tools,
            run_id=run.id,
            automation_id=run.automation_id,
            flow=flow,
            approved_step=run.approved_step,
            agent_operations=operations,
            announce=self.announce_soon,
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
        if not await self._leases.take(run.id):
            self._live.pop(run.id, None)  # another replica drives it
            return
        self._leases.hold(run.id)
        try:
            await self._drive_held(engine, run, start_at, sleep)
        finally:
            self._leases.let_go(run.id)

    async def _drive_held(self, engine: RunEngine, run: RunRow, start_at: int, sleep: Callable[[float], Any]) -> None:
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
            self.announce_soon(run.id)
            return
        finally:
            self._live.pop(run.id, None)
        notifier = self.host.notifier
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

    def announce_soon(self, run_id: str) -> None:
        """Send the run as it stands to every connection, soon: changes that come while one announcement waits for
        its turn are carried by that one (a client gets the latest state, not every intermediate one)."""
        if run_id in self._to_announce:
            return
        self._to_announce.add(run_id)
        task = asyncio.get_running_loop().create_task(self._announce(run_id))
        self._announcing.add(task)
        task.add_done_callback(self._announcing.discard)

    async def _announce(self, run_id: str) -> None:
        await asyncio.sleep(_ANNOUNCE_AFTER)  # a fast flow's steps go out together, not one read per change
        async with self._publishing:  # read and sent in turn: a client never gets an older state after a newer one
            self._to_announce.discard(run_id)  # from here on, a change needs an announcement of its own
            with contextlib.suppress(ProtocolError):
                self._publish("automation/run", await self.info(run_id))

    async def row(self, run_id: str) -> RunRow:
        run = await self._db.read(lambda conn: repos.automations.get_run(conn, run_id))
        if run is None:
            raise _run_not_found(run_id)
        return run

    async def info(self, run_id: str) -> AutomationRunInfo:
        run = await self.row(run_id)
        steps = await self._db.read(lambda conn: repos.automations.steps_of(conn, [run_id]))
        return run_info(run, steps[run_id])

    async def list(self, automation_id: str | None, run_id: str | None, limit: int) -> list[AutomationRunInfo]:
        if run_id is not None:
            return [await self.info(run_id)]
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
            await self._settle(run_id)
            return await self.info(run_id)
        run = await self.row(run_id)
        state = RunState(run.status)
        if not RUNS.allows(state, R.CANCELLED):
            raise ProtocolError(ErrorCode.NOT_RUNNING, f"Run {run_id} has ended ({run.status}).",
                                source=ErrorSource.SERVER)  # fmt: skip
        await self._db.write(lambda conn: repos.automations.update_run(
            conn, run_id, status=R.CANCELLED, finished_at=self._clock(), pending=None,
            error={"code": "cancelled", "message": "Cancelled by the user."},
        ))  # fmt: skip
        self.announce_soon(run_id)
        await self._settle(run_id)
        return await self.info(run_id)

    async def _settle(self, run_id: str) -> None:
        """The run no longer waits: its approval notifications are answered (see `NotificationService.settle`)."""
        if self.host.notifier is not None:
            await self.host.notifier.settle(run_id)

    async def respond(self, run_id: str, approve: bool) -> AutomationRunInfo:
        """Approve (run it, then go on) or reject (the run fails) the step a run waits on.

        Raises:
            ProtocolError: `run_not_found`; `not_resumable` when it waits on nothing this can answer.
        """
        run = await self.row(run_id)
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
            await self.relaunch(run_id)
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
            self.announce_soon(run_id)
        await self._settle(run_id)
        return await self.info(run_id)

    async def relaunch(self, run_id: str) -> None:
        run = await self.row(run_id)
        steps = await self._db.read(lambda conn: repos.automations.steps_of(conn, [run_id]))
        self.launch(run, steps=steps[run_id])
        self.announce_soon(run_id)

    async def resume(self, run_id: str) -> AutomationRunInfo:
        """Go on with an interrupted run. A step with side effects that was cut short asks first (the run waits on
        it); an agent step's operation is resumed, its own interrupted calls asking again.

        Raises:
            ProtocolError: `run_not_found`; `not_resumable` unless the run is interrupted.
        """
        run = await self.row(run_id)
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
            self.announce_soon(run_id)
            return await self.info(run_id)
        await self._db.write(lambda conn: repos.automations.update_run(conn, run_id, status=R.RUNNING, error=None))
        await self.relaunch(run_id)
        return await self.info(run_id)

    async def recover(self) -> None:
        """At start: runs a previous process left running go on, or become `interrupted` (see the module doc)."""
        rows = await self._db.read(lambda conn: repos.automations.runs_with_status(
            conn, [R.RUNNING, R.WAITING_FOR_HUMAN]))  # fmt: skip
        ids = [r.id for r in rows]
        elsewhere = await self._leases.held_elsewhere(ids)
        rows = [r for r in rows if r.id not in elsewhere]
        steps = await self._db.read(lambda conn: repos.automations.steps_of(conn, [r.id for r in rows]))
        for run in rows:
            await self._recover_one(run, steps[run.id])

    async def _take_over_orphans(self) -> None:
        """Replicas: runs whose replica stopped renewing their lease are recovered here as at a start."""
        expired = [key for key in await self._leases.expired() if key not in self._live]
        if not expired:
            return
        rows = await self._db.read(lambda conn: repos.automations.runs_with_status(conn, [R.RUNNING]))
        for run in rows:
            if run.id in expired and await self._leases.take(run.id):
                log.warning("taking over automation run %s from a replica that stopped", run.id)
                steps = await self._db.read(partial(repos.automations.steps_of, run_ids=[run.id]))
                await self._recover_one(run, steps[run.id])
                if run.id not in self._live:
                    self._leases.let_go(run.id)

    async def _recover_one(self, run: RunRow, run_steps: builtins.list[RunStepRow]) -> None:
        if run.status == R.WAITING_FOR_HUMAN:
            if run.pending and run.pending.get("tool") == "agentStep":
                self.launch(run, steps=run_steps)  # it waits on its operation again
            return
        cut = next((s for s in reversed(run_steps) if s.status == "running"), None)
        flow = Flow.model_validate(run.definition)
        step = flow.steps[flow.step_index(cut.step_id)] if cut is not None else None
        if step is None or isinstance(step, ConditionStep | DelayStep | NotificationStep):
            if cut is not None:
                run = await self._resume_point(run, flow.step_index(cut.step_id))
            self.launch(run, steps=run_steps)
            return
        kind = "agent step" if isinstance(step, AgentStep) else "step"
        message = (f"The server stopped while {kind} {step.id} ran; it may or may not have taken effect. "
                   "Resume the run to go on (it asks before running the step again).")  # fmt: skip

        assert cut is not None  # a step with side effects was found from it

        def interrupt(conn: Any, run: RunRow = run, cut: RunStepRow = cut, message: str = message) -> None:
            repos.automations.put_step(conn, RunStepRow(
                run.id, cut.step_id, cut.position, cut.type, "interrupted", input=cut.input,
                started_at=cut.started_at, note="The server stopped while it ran.",
            ))  # fmt: skip
            repos.automations.update_run(conn, run.id, status=R.INTERRUPTED,
                                         error={"code": "interrupted", "message": message})  # fmt: skip

        await self._db.write(interrupt)
        self.announce_soon(run.id)
        if self.host.notifier is not None:
            await self.host.notifier.offer(
                kind="automation_interrupted", tier="helpful", title=f"{run.automation_name} was interrupted",
                body=message, key=f"interrupted:{run.automation_id}", run_id=run.id,
                automation_id=run.automation_id,
            )  # fmt: skip

    async def _resume_point(self, run: RunRow, index: int) -> RunRow:
        await self._db.write(lambda conn: repos.automations.update_run(conn, run.id, resume_at=index))
        return await self.row(run.id)

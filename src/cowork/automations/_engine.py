"""One run of a flow, persisted: the `StepRunner` and `RunRecorder` that `run_flow` drives, over the store.

Every step is recorded as started (with its resolved input) before its effect and as finished (with its output and
the run's next step) after it, each in one transaction, and every change goes out as an `automation/run`
notification. So after a crash the store says exactly which step was cut short: `AutomationService.recover`
decides from there, and a finished step is never run again.

Steps' effects:

- `toolCall` and `mcpToolCall` (an MCP tool is `mcp__<server>__<tool>`) run the tool through the approval policy in
  automation context (`StepHost.decide`). A call the policy asks about parks the run with what it would do; approving
  it (`automation/respond`) runs exactly that step once. A tool's text output that is a JSON object or array is
  parsed, so later steps can read into it (`${fetch.items[0].title}`); anything else stays text.
- `agentStep` starts an operation in the automation's session and waits for it; while it waits for a person the
  run shows `waiting_for_human` with the session to answer in. Its final answer is the output.
- `notification` offers a candidate to the notification engine; the output says what the gates decided.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from cowork.mcp import tool_name as mcp_tool_name
from cowork.protocol import OperationStatus
from cowork.store import Database, repos
from cowork.store.repos.automations import RunStepRow
from cowork.tools import ToolError, ToolRegistry, run_tool

from ._executor import RunContext, RunResult, RunStatus, StepError, StepFailed, StepParked
from ._host import StepHost
from ._model import Flow
from ._steps import AgentStep, ConditionStep, McpToolCallStep, NotificationStep, Step, ToolCallStep
from ._tools import FlowTool

__all__ = ["RunEngine", "json_output"]

_AGENT_POLL_SECONDS = 0.5


def json_output(text: str) -> Any:
    """A tool's text as a step output: a JSON object or array parsed, anything else as it is."""
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except ValueError:
            pass
    return text


class RunEngine:
    """Runs and records one run; made for each `run_flow` call (a resume makes a new one)."""

    def __init__(
        self,
        db: Database,
        host: StepHost,
        tools: ToolRegistry,
        *,
        run_id: str,
        automation_id: str,
        flow: Flow,
        approved_step: str | None,
        agent_operations: Mapping[str, str],
        announce: Callable[[str], Any],
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._db = db
        self._host = host
        self._tools = tools
        self.run_id = run_id
        self.automation_id = automation_id
        self.flow = flow
        self._approved = approved_step
        self._agent_operations = dict(agent_operations)
        """step id → the operation an earlier attempt started (resumed rather than started again)."""
        self._announce = announce
        self._clock = clock
        self.outputs: dict[str, Any] = {}
        self.pending: dict[str, Any] | None = None
        self.stopping = False
        """Set when the server stops: a cancellation is then an interruption, to be resumed at the next start."""

    # -- recording -------------------------------------------------------------------------------------------

    async def _write(self, work: Callable[[Any], None]) -> None:
        await self._db.write(work)
        self._announce(self.run_id)

    def _position(self, step: Step) -> int:
        return self.flow.step_index(step.id)

    async def step_started(self, run: RunContext, step: Step, resolved_input: Mapping[str, Any]) -> None:
        row = RunStepRow(
            self.run_id,
            step.id,
            self._position(step),
            step.type,
            "running",
            input=dict(resolved_input),
            started_at=self._clock(),
        )
        index = self._position(step)

        def write(conn: Any) -> None:
            repos.automations.put_step(conn, row)
            repos.automations.update_run(conn, self.run_id, resume_at=index)

        await self._write(write)

    async def step_finished(self, run: RunContext, step: Step, output: Any, duration: float) -> None:
        self.outputs[step.output_name] = output
        index = self._position(step)
        following = index + 1
        if isinstance(step, ConditionStep) and not output:
            following += step.skip
        if step.direct_output:
            following = len(self.flow.steps)
        outputs = dict(self.outputs)
        approved = self._approved

        def write(conn: Any) -> None:
            started = repos.automations.get_step(conn, self.run_id, step.id)
            repos.automations.put_step(
                conn,
                RunStepRow(
                    self.run_id,
                    step.id,
                    index,
                    step.type,
                    "done",
                    input=started.input if started else None,
                    output=output,
                    started_at=started.started_at if started else None,
                    duration_ms=duration * 1000,
                ),
            )
            values: dict[str, Any] = {"outputs": outputs, "resume_at": following}
            if approved == step.id:
                values["approved_step"] = None
            repos.automations.update_run(conn, self.run_id, **values)

        if approved == step.id:
            self._approved = None
        await self._write(write)

    async def step_failed(self, run: RunContext, step: Step, error: StepError, duration: float) -> None:
        await self._finish_step(step, "failed", error={"code": error.code, "message": error.message}, duration=duration)

    async def step_skipped(self, run: RunContext, step: Step, reason: str) -> None:
        row = RunStepRow(self.run_id, step.id, self._position(step), step.type, "skipped", note=reason)
        await self._write(lambda conn: repos.automations.put_step(conn, row))

    async def step_parked(self, run: RunContext, step: Step, reason: str) -> None:
        await self._finish_step(step, "waiting", note=reason)

    async def _finish_step(
        self,
        step: Step,
        status: str,
        *,
        error: dict[str, str] | None = None,
        note: str | None = None,
        duration: float | None = None,
    ) -> None:
        index = self._position(step)

        def write(conn: Any) -> None:
            started = repos.automations.get_step(conn, self.run_id, step.id)
            repos.automations.put_step(
                conn,
                RunStepRow(
                    self.run_id,
                    step.id,
                    index,
                    step.type,
                    status,
                    input=started.input if started else None,
                    error=error,
                    note=note,
                    started_at=started.started_at if started else None,
                    duration_ms=duration * 1000 if duration is not None else None,
                ),
            )

        await self._write(write)

    async def run_finished(self, run: RunContext, result: RunResult) -> None:
        now = self._clock()
        values: dict[str, Any] = {"outputs": dict(result.outputs)}
        if result.status is RunStatus.WAITING_FOR_HUMAN:
            values.update(status="waiting_for_human", resume_at=result.resume_at, pending=self.pending)
        elif result.status is RunStatus.CANCELLED and self.stopping:
            # The server is stopping: the run stays `running`, and the next start's recovery decides from the step
            # it was in (a delay goes on by itself; a step with side effects becomes `interrupted`).
            values["resume_at"] = result.resume_at
        else:
            values.update(status=str(result.status), finished_at=now, pending=None, resume_at=None)
            if result.status is RunStatus.DONE:
                values["result"] = result.result
            elif result.error is not None:
                values["error"] = {"code": result.error.code, "message": result.error.message}
            elif result.status is RunStatus.CANCELLED:
                values["error"] = {"code": "cancelled", "message": "Cancelled by the user."}
        await self._write(lambda conn: repos.automations.update_run(conn, self.run_id, **values))

    # -- effects ---------------------------------------------------------------------------------------------

    async def tool_call(self, run: RunContext, step: ToolCallStep) -> Any:
        return await self._call(step, step.tool, dict(step.arguments))

    async def mcp_tool_call(self, run: RunContext, step: McpToolCallStep) -> Any:
        return await self._call(step, mcp_tool_name(step.server, step.tool), dict(step.arguments))

    async def _call(self, step: Step, name: str, arguments: dict[str, Any]) -> Any:
        tool = self._tools.get(name)
        if tool is None:
            raise StepFailed(f"There is no tool named {name!r} (is its MCP server configured and running?).",
                             code="tool_not_found")  # fmt: skip
        if isinstance(tool, FlowTool):
            raise StepFailed("A flow cannot call another flow as a step.", code="not_supported")
        decision = self._host.decide(tool, arguments)
        if decision.decision == "question":
            raise StepFailed(f"{name} asks the user a question, which a step cannot do.", code="not_supported")
        if decision.decision == "ask" and self._approved != step.id:  # an approval is used up when the step ends
            self.pending = {"stepId": step.id, "tool": name, "arguments": arguments, "reason": decision.reason}
            raise StepParked(decision.reason)
        try:
            text = await run_tool(tool, arguments, self._host.tool_context(self.run_id, step.id))
        except ToolError as error:
            raise StepFailed(str(error), code="tool_error") from None
        return json_output(text)

    async def agent_step(self, run: RunContext, step: AgentStep) -> Any:
        tasks = self._host.tasks
        if tasks is None:
            raise StepFailed("Agent steps need the runtime, which is not available here.", code="not_supported")
        operation_id = self._agent_operations.get(step.id)
        if operation_id is None:
            session_id = await self._host.session_for(self.automation_id, self.flow.name)
            try:
                operation_id = await tasks.start(session_id, step.prompt, model=step.model, tools=step.tools)
            except Exception as error:  # no provider, unknown model: the step fails with the reason
                code = getattr(error, "code", "agent_failed")
                raise StepFailed(getattr(error, "message", str(error)), code=str(code)) from None
            self._agent_operations[step.id] = operation_id
            await self._note_operation(step, operation_id, session_id)
        else:
            status, _, _ = await tasks.status(operation_id)
            if status == OperationStatus.INTERRUPTED:
                await tasks.resume(operation_id)
        try:
            return await self._await_agent(step, operation_id)
        except asyncio.CancelledError:
            if not self.stopping:
                await tasks.cancel(operation_id)
            raise

    async def _note_operation(self, step: Step, operation_id: str, session_id: str) -> None:
        index = self._position(step)
        started = self._clock()

        def write(conn: Any) -> None:
            row = repos.automations.get_step(conn, self.run_id, step.id)
            data = dict(row.input) if row is not None and isinstance(row.input, dict) else {}
            data["operationId"] = operation_id
            data["sessionId"] = session_id
            repos.automations.put_step(
                conn,
                RunStepRow(self.run_id, step.id, index, step.type, "running", input=data,
                           started_at=row.started_at if row else started),
            )  # fmt: skip
            repos.automations.update_run(conn, self.run_id, session_id=session_id)

        await self._write(write)

    async def _await_agent(self, step: AgentStep, operation_id: str) -> Any:
        tasks = self._host.tasks
        assert tasks is not None
        waiting = False
        while True:
            status, summary, error = await tasks.status(operation_id)
            if status == OperationStatus.DONE:
                if waiting:
                    await self._write(lambda conn: repos.automations.update_run(conn, self.run_id, status="running",
                                                                                pending=None))  # fmt: skip
                return summary or ""
            if status in (OperationStatus.ERROR, OperationStatus.CANCELLED):
                raise StepFailed(f"The agent step {status}: {error or 'no reason given'}", code="agent_failed")
            if status == OperationStatus.INTERRUPTED:
                raise StepFailed("The agent step was interrupted.", code="interrupted")
            now_waiting = status == OperationStatus.WAITING_FOR_HUMAN
            if now_waiting != waiting:
                waiting = now_waiting
                await self._agent_waiting(step, operation_id, waiting)
            await tasks.wait(operation_id, _AGENT_POLL_SECONDS)

    async def _agent_waiting(self, step: AgentStep, operation_id: str, waiting: bool) -> None:
        session_id = await self._host.session_for(self.automation_id, self.flow.name)
        pending = {
            "stepId": step.id,
            "tool": "agentStep",
            "arguments": {"prompt": step.prompt[:500], "operationId": operation_id},
            "reason": "The agent step waits for your answer in the automation's session.",
            "sessionId": session_id,
        }
        values: dict[str, Any] = (
            {"status": "waiting_for_human", "pending": pending} if waiting else {"status": "running", "pending": None}
        )
        await self._write(lambda conn: repos.automations.update_run(conn, self.run_id, **values))
        notifier = self._host.notifier
        if waiting and notifier is not None:
            await notifier.offer(
                kind="automation_approval",
                tier="urgent",
                title=f"{self.flow.name} waits for you",
                body=f"Step {step.id}: the agent asks for approval in the automation's session.",
                key=f"approval:{self.run_id}",
                run_id=self.run_id,
                automation_id=self.automation_id,
            )

    async def notification(self, run: RunContext, step: NotificationStep) -> Any:
        notifier = self._host.notifier
        if notifier is None:
            return {"outcome": "dropped", "reason": "no notification engine"}
        decision = await notifier.offer(
            kind=f"automation:{self.flow.name}",
            tier=step.tier,
            title=step.title,
            body=step.body,
            run_id=self.run_id,
            automation_id=self.automation_id,
        )
        output: dict[str, Any] = {"outcome": str(decision.outcome), "reason": decision.reason}
        if decision.delivery is not None:
            output["id"] = decision.delivery.id
        return output

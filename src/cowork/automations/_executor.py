"""Running a flow's steps in order: the core the server will wrap in a persisted run.

`run_flow` owns the rules — order, variables, fail fast, direct output, conditions, delays, parking, cancellation —
and nothing else: the effects are the `StepRunner`'s (tool calls through the policy, agent operations,
notifications), the record is the `RunRecorder`'s (the store, later), and time comes in as `sleep` and `clock`.
Every recorder call is awaited before the executor goes on, so what is recorded is never behind what was done.

Resuming: `start_at` and `outputs` continue a run after its last finished step without re-running the finished
ones. Which index that is after a crash (a started-but-unfinished side-effecting step) is the server's decision;
the core starts where it is told.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, assert_never

from ._expressions import ExpressionError
from ._model import Flow
from ._steps import (
    AgentStep,
    ConditionStep,
    DelayStep,
    McpToolCallStep,
    NotificationStep,
    Step,
    ToolCallStep,
    templated_values,
)
from ._variables import render, substitute

__all__ = [
    "RunContext",
    "RunRecorder",
    "RunResult",
    "RunStatus",
    "StepError",
    "StepFailed",
    "StepParked",
    "StepRunner",
    "resolve_step",
    "run_flow",
    "variables_of",
]


class RunStatus(StrEnum):
    """How a call of `run_flow` ended."""

    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    WAITING_FOR_HUMAN = "waiting_for_human"  # a step parked; resume with `start_at = resume_at`


@dataclass(frozen=True)
class StepError:
    """Why a step failed: a stable `code` for clients and a message for people."""

    code: str
    message: str


class StepFailed(Exception):
    """Raised by a runner for a failure it can name (a tool error, a rejected approval, a failed agent)."""

    def __init__(self, message: str, *, code: str = "step_failed") -> None:
        super().__init__(message)
        self.error = StepError(code, message)


class StepParked(Exception):
    """Raised by a runner when the step waits for a person (an approval): the run stops here, to be resumed."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class RunContext:
    """What a runner and a recorder know about the run a step belongs to."""

    flow: Flow
    inputs: Mapping[str, Any]
    trigger: Mapping[str, Any]
    run_id: str = ""


@dataclass(frozen=True)
class RunResult:
    """The end of one `run_flow` call.

    `result` is the flow's result when `done`: the output of the `directOutput` step that ended it, else the output
    of the last toolCall, mcpToolCall, agentStep or notification that ran (conditions and delays produce no
    result), else null. `step_id` names the step that ended the run (direct output, failure, parking, the one in
    progress when cancelled). `resume_at` is the index to pass as `start_at` to go on: the parked step (run again,
    its runner now finding the approval) or the step that was interrupted by cancellation.
    """

    status: RunStatus
    outputs: Mapping[str, Any]
    result: Any = None
    error: StepError | None = None
    step_id: str | None = None
    resume_at: int | None = None
    reason: str | None = None
    steps_run: list[str] = field(default_factory=list)


class StepRunner(Protocol):
    """The effects of steps, one method per step type that has any; each gets the step with variables resolved.

    Return the step's output (a JSON value). Raise `StepFailed` for a failure with a code, `StepParked` to wait for
    a person; any other exception fails the step too (code `internal`).
    """

    async def tool_call(self, run: RunContext, step: ToolCallStep) -> Any:
        """Call a Cowork tool through the approval policy."""
        ...

    async def mcp_tool_call(self, run: RunContext, step: McpToolCallStep) -> Any:
        """Call an MCP server's tool through the approval policy."""
        ...

    async def agent_step(self, run: RunContext, step: AgentStep) -> Any:
        """Run an agent operation on the prompt; its final answer is the output."""
        ...

    async def notification(self, run: RunContext, step: NotificationStep) -> Any:
        """Send the notification through the throttling gates."""
        ...


class RunRecorder(Protocol):
    """Where a run's progress is recorded (the store, later). Each call is awaited before the run goes on."""

    async def step_started(self, run: RunContext, step: Step, resolved_input: Mapping[str, Any]) -> None:
        """A step starts, with its templated fields resolved (a condition: its text and truth come at the end)."""
        ...

    async def step_finished(self, run: RunContext, step: Step, output: Any, duration: float) -> None:
        """A step finished with this output, after `duration` seconds."""
        ...

    async def step_failed(self, run: RunContext, step: Step, error: StepError, duration: float) -> None:
        """A step failed; no later step will start."""
        ...

    async def step_skipped(self, run: RunContext, step: Step, reason: str) -> None:
        """A condition skipped this step; it never started."""
        ...

    async def step_parked(self, run: RunContext, step: Step, reason: str) -> None:
        """A step waits for a person; the run stops and is resumed at this step."""
        ...

    async def run_finished(self, run: RunContext, result: RunResult) -> None:
        """The call ended, whatever the status (also when parked or cancelled)."""
        ...


def variables_of(run: RunContext, outputs: Mapping[str, Any]) -> dict[str, Any]:
    """The names references resolve against: each step's output variable, `input` and `trigger`."""
    # Output names may not be `input` or `trigger` (validated), so neither hides the other.
    return {**outputs, "input": dict(run.inputs), "trigger": dict(run.trigger)}


def resolve_step(step: Step, variables: Mapping[str, Any]) -> tuple[Step, dict[str, Any]]:
    """The step with variables substituted in its templated fields, and those fields (what `step_started` records).

    Text fields (a prompt, a title) always become text; `arguments` keep an exact reference's type.
    """
    resolved: dict[str, Any] = {}
    for name, value in templated_values(step).items():
        resolved[name] = render(value, variables) if isinstance(value, str) else substitute(value, variables)
    # model_copy does not validate: resolved arguments are JSON from earlier outputs, the runner's to judge.
    return step.model_copy(update=resolved), resolved


def _value_step(step: Step) -> bool:
    return not isinstance(step, ConditionStep | DelayStep)


def _last_result(flow: Flow, before: int, outputs: Mapping[str, Any]) -> Any:
    for step in reversed(flow.steps[:before]):
        if _value_step(step) and step.output_name in outputs:
            return outputs[step.output_name]
    return None


async def run_flow(
    flow: Flow,
    inputs: Mapping[str, Any],
    runner: StepRunner,
    *,
    record: RunRecorder,
    start_at: int = 0,
    outputs: Mapping[str, Any] | None = None,
    trigger: Mapping[str, Any] | None = None,
    run_id: str = "",
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> RunResult:
    """Run `flow` from step `start_at`, with `outputs` holding what earlier steps of this run produced.

    Raises:
        FlowInputError: `inputs` do not match the flow's declared inputs (before anything is recorded).
        ValueError: `start_at` is not a step of the flow.
        asyncio.CancelledError: the run was cancelled; it is recorded as `cancelled` first.
    """
    if not 0 <= start_at < len(flow.steps):
        raise ValueError(f"start_at {start_at} is not a step of {flow.name!r} (0..{len(flow.steps) - 1})")
    run = RunContext(flow, flow.resolve_inputs(inputs), dict(trigger or {}), run_id)
    progress = _Progress(start_at, dict(outputs or {}))
    try:
        result = await _run_steps(run, progress, runner, record, sleep, clock)
    except asyncio.CancelledError:
        # Recorded before it goes on up: whoever cancelled finds the run's record already final.
        cancelled = RunResult(
            RunStatus.CANCELLED,
            dict(progress.outputs),
            step_id=progress.step_id,
            resume_at=progress.index if progress.index < len(flow.steps) else None,
            steps_run=progress.ran,
        )
        await record.run_finished(run, cancelled)
        raise
    await record.run_finished(run, result)
    return result


@dataclass
class _Progress:
    """Where a run is, shared with `run_flow` so a cancellation can say where it stopped."""

    index: int
    outputs: dict[str, Any]
    ran: list[str] = field(default_factory=list)
    step_id: str | None = None


async def _run_steps(
    run: RunContext,
    progress: _Progress,
    runner: StepRunner,
    record: RunRecorder,
    sleep: Callable[[float], Awaitable[None]],
    clock: Callable[[], float],
) -> RunResult:
    steps = run.flow.steps
    state = progress.outputs
    while progress.index < len(steps):
        step = steps[progress.index]
        progress.step_id = step.id
        variables = variables_of(run, state)
        if isinstance(step, ConditionStep):
            resolved: Step = step
            await record.step_started(run, step, {"when": step.when})
        elif isinstance(step, DelayStep):
            # The length is recorded so that a server resuming after a crash can wait only what is left.
            resolved = step
            await record.step_started(run, step, {"seconds": step.seconds})
        else:
            resolved, resolved_input = resolve_step(step, variables)
            await record.step_started(run, step, resolved_input)
        started = clock()
        try:
            output = await _effect(resolved, variables, run, runner, sleep)
        except StepParked as parked:
            await record.step_parked(run, step, parked.reason)
            return RunResult(
                RunStatus.WAITING_FOR_HUMAN,
                dict(state),
                step_id=step.id,
                resume_at=progress.index,
                reason=parked.reason,
                steps_run=progress.ran,
            )
        except Exception as exc:  # fail fast: whatever went wrong ends the run with this step's error
            error = _step_error(exc)
            await record.step_failed(run, step, error, clock() - started)
            return RunResult(RunStatus.FAILED, dict(state), error=error, step_id=step.id, steps_run=progress.ran)
        duration = clock() - started
        state[step.output_name] = output
        progress.ran.append(step.id)
        following = progress.index + 1
        skipped = steps[following : following + step.skip] if isinstance(step, ConditionStep) and not output else []
        # From here a cancellation resumes after this step: it finished and must not run again.
        progress.index = len(steps) if step.direct_output else following + len(skipped)
        await record.step_finished(run, step, output, duration)
        if step.direct_output:
            return RunResult(RunStatus.DONE, dict(state), result=output, step_id=step.id, steps_run=progress.ran)
        for other in skipped:
            await record.step_skipped(run, other, f"condition {step.id!r} was false")
    return RunResult(
        RunStatus.DONE, dict(state), result=_last_result(run.flow, len(steps), state), steps_run=progress.ran
    )


async def _effect(
    step: Step,
    variables: Mapping[str, Any],
    run: RunContext,
    runner: StepRunner,
    sleep: Callable[[float], Awaitable[None]],
) -> Any:
    """Carry out one (resolved) step and return its output."""
    match step:
        case ConditionStep():
            return step.expression.holds(variables)
        case DelayStep():
            await sleep(step.seconds)
            return None
        case ToolCallStep():
            return await runner.tool_call(run, step)
        case McpToolCallStep():
            return await runner.mcp_tool_call(run, step)
        case AgentStep():
            return await runner.agent_step(run, step)
        case NotificationStep():
            return await runner.notification(run, step)
        case _:
            assert_never(step)


def _step_error(exc: Exception) -> StepError:
    if isinstance(exc, StepFailed):
        return exc.error
    if isinstance(exc, ExpressionError):
        return StepError("condition_error", str(exc))
    return StepError("internal", f"{type(exc).__name__}: {exc}")

"""`run_flow`: order, variables, fail fast, direct output, conditions, delays, parking and resuming, cancellation."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from cowork.automations import (
    AgentStep,
    Flow,
    FlowInputError,
    McpToolCallStep,
    NotificationStep,
    RunContext,
    RunResult,
    RunStatus,
    Step,
    StepError,
    StepFailed,
    StepParked,
    ToolCallStep,
    run_flow,
)

pytestmark = pytest.mark.anyio


class Clock:
    """Time that moves only when a step or a delay says so."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


Behaviour = Callable[[Any], Any]


class Runner:
    """Each step id answers with a value, or a callable of the resolved step (which may raise)."""

    def __init__(self, clock: Clock, answers: Mapping[str, Any] | None = None, took: float = 0.5) -> None:
        self.clock = clock
        self.answers = dict(answers or {})
        self.took = took
        self.calls: list[tuple[str, str, Any]] = []

    async def _answer(self, kind: str, step: Any, given: Any) -> Any:
        self.calls.append((kind, step.id, given))
        self.clock.now += self.took
        answer = self.answers.get(step.id, f"{step.id}-out")
        return answer(step) if callable(answer) else answer

    async def tool_call(self, run: RunContext, step: ToolCallStep) -> Any:
        return await self._answer("tool", step, step.arguments)

    async def mcp_tool_call(self, run: RunContext, step: McpToolCallStep) -> Any:
        return await self._answer("mcp", step, (step.server, step.tool, step.arguments))

    async def agent_step(self, run: RunContext, step: AgentStep) -> Any:
        return await self._answer("agent", step, step.prompt)

    async def notification(self, run: RunContext, step: NotificationStep) -> Any:
        return await self._answer("notify", step, (step.title, step.body, step.tier))


class Recorder:
    """Keeps every call as a plain tuple, so a test asserts a run's whole record at once."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.results: list[RunResult] = []

    async def step_started(self, run: RunContext, step: Step, resolved_input: Mapping[str, Any]) -> None:
        self.events.append(("started", step.id, dict(resolved_input)))

    async def step_finished(self, run: RunContext, step: Step, output: Any, duration: float) -> None:
        self.events.append(("finished", step.id, output, duration))

    async def step_failed(self, run: RunContext, step: Step, error: StepError, duration: float) -> None:
        self.events.append(("failed", step.id, error, duration))

    async def step_skipped(self, run: RunContext, step: Step, reason: str) -> None:
        self.events.append(("skipped", step.id, reason))

    async def step_parked(self, run: RunContext, step: Step, reason: str) -> None:
        self.events.append(("parked", step.id, reason))

    async def run_finished(self, run: RunContext, result: RunResult) -> None:
        self.events.append(("run", result.status.value, run.run_id))
        self.results.append(result)


def make(steps: list[dict[str, Any]], **extra: Any) -> Flow:
    return Flow.model_validate({"name": "test", "steps": steps, **extra})


def tool(id: str, **extra: Any) -> dict[str, Any]:
    return {"id": id, "type": "toolCall", "tool": "t", **extra}


async def run(
    flow: Flow, answers: Mapping[str, Any] | None = None, inputs: Mapping[str, Any] | None = None, **kwargs: Any
) -> tuple[RunResult, Runner, Recorder, Clock]:
    clock = Clock()
    runner = Runner(clock, answers)
    recorder = Recorder()
    result = await run_flow(flow, inputs or {}, runner, record=recorder, sleep=clock.sleep, clock=clock, **kwargs)
    assert recorder.results == [result]
    return result, runner, recorder, clock


async def test_steps_run_in_order_and_pass_outputs_on() -> None:
    flow = make(
        [
            {"id": "fetch", "type": "mcpToolCall", "server": "gh", "tool": "issue", "arguments": {"n": "${input.n}"}},
            tool("save", arguments={"body": "${fetch.data}", "title": "#${fetch.data.id}: ${fetch.data.tags[1]}"}),
            {
                "id": "ask",
                "type": "agentStep",
                "prompt": "Triage ${fetch.data} for ${trigger.who}",
                "output": "verdict",
            },
            {"id": "tell", "type": "notification", "title": "${verdict}", "body": "${save} ${missing.x}"},
        ],
        inputs={"n": {"type": "number"}},
    )
    data = {"id": 7, "tags": ["a", "b"]}
    result, runner, recorder, _ = await run(
        flow, {"fetch": {"data": data}, "ask": "urgent"}, {"n": 7}, trigger={"who": "Ada"}, run_id="r1"
    )
    assert runner.calls == [
        ("mcp", "fetch", ("gh", "issue", {"n": 7})),
        ("tool", "save", {"body": {"id": 7, "tags": ["a", "b"]}, "title": "#7: b"}),
        ("agent", "ask", 'Triage {"id": 7, "tags": ["a", "b"]} for Ada'),
        ("notify", "tell", ("urgent", "save-out ${missing.x}", "helpful")),
    ]
    assert recorder.events == [
        ("started", "fetch", {"arguments": {"n": 7}}),
        ("finished", "fetch", {"data": data}, 0.5),
        ("started", "save", {"arguments": {"body": data, "title": "#7: b"}}),
        ("finished", "save", "save-out", 0.5),
        ("started", "ask", {"prompt": 'Triage {"id": 7, "tags": ["a", "b"]} for Ada'}),
        ("finished", "ask", "urgent", 0.5),
        ("started", "tell", {"title": "urgent", "body": "save-out ${missing.x}"}),
        ("finished", "tell", "tell-out", 0.5),
        ("run", "done", "r1"),
    ]
    assert result == RunResult(
        RunStatus.DONE,
        {"fetch": {"data": data}, "save": "save-out", "verdict": "urgent", "tell": "tell-out"},
        result="tell-out",
        steps_run=["fetch", "save", "ask", "tell"],
    )


async def test_outputs_are_not_expanded_again() -> None:
    flow = make([tool("a"), tool("b", arguments={"x": "${a}", "y": "got ${a}"})], inputs={"secret": {"type": "string"}})
    _, runner, _, _ = await run(flow, {"a": "${input.secret}"}, {"secret": "hunter2"})
    assert runner.calls[1] == ("tool", "b", {"x": "${input.secret}", "y": "got ${input.secret}"})


async def test_the_template_is_not_changed_by_a_run() -> None:
    flow = make([tool("a", arguments={"x": "${input}"})])
    await run(flow)
    step = flow.steps[0]
    assert isinstance(step, ToolCallStep) and step.arguments == {"x": "${input}"}


async def test_inputs_get_defaults_and_are_checked_before_anything_runs() -> None:
    flow = make([tool("a", arguments={"n": "${input.n}"})], inputs={"n": {"type": "number", "default": 3}})
    _, runner, _, _ = await run(flow)
    assert runner.calls == [("tool", "a", {"n": 3})]
    recorder = Recorder()
    with pytest.raises(FlowInputError, match="input 'n' must be of type number"):
        await run_flow(flow, {"n": "3"}, Runner(Clock()), record=recorder)
    assert recorder.events == []


@pytest.mark.parametrize(
    ("raised", "error"),
    [
        (StepFailed("tool said no", code="tool_error"), StepError("tool_error", "tool said no")),
        (StepFailed("plain"), StepError("step_failed", "plain")),
        (RuntimeError("boom"), StepError("internal", "RuntimeError: boom")),
    ],
)
async def test_the_first_failure_ends_the_run(raised: Exception, error: StepError) -> None:
    def fail(step: Any) -> Any:
        raise raised

    flow = make([tool("a"), tool("b"), tool("c")])
    result, runner, recorder, _ = await run(flow, {"b": fail})
    assert [call[1] for call in runner.calls] == ["a", "b"]  # c never starts
    assert recorder.events[-3:] == [
        ("started", "b", {"arguments": {}}),
        ("failed", "b", error, 0.5),
        ("run", "failed", ""),
    ]
    assert result == RunResult(RunStatus.FAILED, {"a": "a-out"}, error=error, step_id="b", steps_run=["a"])


async def test_direct_output_ends_the_flow_with_that_output() -> None:
    flow = make([tool("a"), tool("b", directOutput=True, output="answer"), tool("c")])
    result, runner, recorder, _ = await run(flow, {"b": {"cached": True}})
    assert [call[1] for call in runner.calls] == ["a", "b"]
    assert result.status is RunStatus.DONE and result.result == {"cached": True} and result.step_id == "b"
    assert recorder.events[-1] == ("run", "done", "")
    assert "c" not in [event[1] for event in recorder.events]


async def test_a_run_without_direct_output_returns_its_last_result() -> None:
    flow = make([tool("a"), {"id": "wait", "type": "delay", "seconds": 1}])
    result, *_ = await run(flow)
    assert result.result == "a-out"  # a delay produces no result
    result, *_ = await run(make([{"id": "wait", "type": "delay", "seconds": 1}]))
    assert result.result is None and result.outputs == {"wait": None}


def condition_flow(when: str, skip: int = 1) -> Flow:
    return make(
        [
            tool("fetch"),
            {"id": "check", "type": "condition", "when": when, "skip": skip},
            tool("then1"),
            tool("then2"),
            tool("after", arguments={"c": "${check}", "t": "${then1}"}),
        ]
    )


async def test_a_true_condition_goes_on() -> None:
    result, runner, recorder, _ = await run(condition_flow("${fetch.count} > 0"), {"fetch": {"count": 2}})
    assert [call[1] for call in runner.calls] == ["fetch", "then1", "then2", "after"]
    assert ("started", "check", {"when": "${fetch.count} > 0"}) in recorder.events
    assert ("finished", "check", True, 0.0) in recorder.events
    assert runner.calls[-1][2] == {"c": True, "t": "then1-out"}
    assert result.outputs["check"] is True


async def test_a_false_condition_skips_the_next_steps() -> None:
    result, runner, recorder, _ = await run(condition_flow("${fetch.count} > 0", skip=2), {"fetch": {"count": 0}})
    assert [call[1] for call in runner.calls] == ["fetch", "after"]
    assert recorder.events[2:] == [
        ("started", "check", {"when": "${fetch.count} > 0"}),
        ("finished", "check", False, 0.0),
        ("skipped", "then1", "condition 'check' was false"),
        ("skipped", "then2", "condition 'check' was false"),
        ("started", "after", {"arguments": {"c": False, "t": "${then1}"}}),  # a skipped step's output stays literal
        ("finished", "after", "after-out", 0.5),
        ("run", "done", ""),
    ]
    assert result.steps_run == ["fetch", "check", "after"] and "then1" not in result.outputs


async def test_a_false_condition_that_skips_to_the_end_ends_the_flow() -> None:
    flow = make(
        [tool("a"), {"id": "check", "type": "condition", "when": "${a} == 'go'", "skip": 2}, tool("b"), tool("c")]
    )
    result, runner, _, _ = await run(flow)
    assert [call[1] for call in runner.calls] == ["a"]
    assert result.status is RunStatus.DONE and result.result == "a-out"


async def test_a_condition_that_cannot_be_evaluated_fails_the_run() -> None:
    result, runner, _, _ = await run(condition_flow("${fetch.count} > 0"), {"fetch": {"count": "many"}})
    assert result.status is RunStatus.FAILED and result.step_id == "check"
    assert result.error == StepError("condition_error", "cannot order string and number with >")
    assert [call[1] for call in runner.calls] == ["fetch"]


async def test_delays_use_the_injected_sleep() -> None:
    flow = make([tool("a"), {"id": "wait", "type": "delay", "seconds": 86400}, tool("b")])
    result, _, recorder, clock = await run(flow)
    assert clock.slept == [86400]
    assert ("started", "wait", {"seconds": 86400.0}) in recorder.events and (
        "finished",
        "wait",
        None,
        86400.0,
    ) in recorder.events
    assert result.status is RunStatus.DONE


async def test_a_parked_step_stops_the_run_and_a_resume_does_not_repeat_finished_steps() -> None:
    approved = False

    def needs_approval(step: Any) -> Any:
        if not approved:
            raise StepParked("approve writing notes.md")
        return "written"

    flow = make([tool("a"), tool("write", arguments={"text": "${a}"}), tool("c", arguments={"w": "${write}"})])
    clock = Clock()
    runner = Runner(clock, {"write": needs_approval})
    recorder = Recorder()
    first = await run_flow(flow, {}, runner, record=recorder, clock=clock, run_id="r")
    assert first == RunResult(
        RunStatus.WAITING_FOR_HUMAN,
        {"a": "a-out"},
        step_id="write",
        resume_at=1,
        reason="approve writing notes.md",
        steps_run=["a"],
    )
    assert recorder.events[-2:] == [("parked", "write", "approve writing notes.md"), ("run", "waiting_for_human", "r")]

    approved = True
    recorder.events.clear()
    second = await run_flow(
        flow, {}, runner, record=recorder, clock=clock, run_id="r", start_at=first.resume_at or 0, outputs=first.outputs
    )
    assert [call[1] for call in runner.calls] == ["a", "write", "write", "c"]  # a ran once
    assert runner.calls[-1] == ("tool", "c", {"w": "written"})
    assert [event[:2] for event in recorder.events] == [
        ("started", "write"),
        ("finished", "write"),
        ("started", "c"),
        ("finished", "c"),
        ("run", "done"),
    ]
    assert second.outputs == {"a": "a-out", "write": "written", "c": "c-out"} and second.result == "c-out"


async def test_resuming_after_earlier_steps_reads_their_outputs() -> None:
    flow = make([tool("a"), tool("b"), tool("c", arguments={"x": "${a.v}", "y": "${b}"})])
    result, runner, _, _ = await run(flow, start_at=2, outputs={"a": {"v": 1}, "b": "bee"})
    assert runner.calls == [("tool", "c", {"x": 1, "y": "bee"})]
    assert result.outputs == {"a": {"v": 1}, "b": "bee", "c": "c-out"}


async def test_resuming_into_a_flow_whose_last_result_came_earlier() -> None:
    flow = make([tool("a"), {"id": "check", "type": "condition", "when": "false"}, tool("b")])
    result, runner, _, _ = await run(flow, start_at=1, outputs={"a": "from before"})
    assert runner.calls == [] and result.result == "from before"


@pytest.mark.parametrize("start_at", [-1, 3])
async def test_start_at_must_be_a_step(start_at: int) -> None:
    with pytest.raises(ValueError, match=f"start_at {start_at} is not a step"):
        await run(make([tool("a"), tool("b"), tool("c")]), start_at=start_at)


async def test_cancellation_is_recorded_and_propagates() -> None:
    started = asyncio.Event()

    class Slow(Runner):
        async def tool_call(self, run: RunContext, step: ToolCallStep) -> Any:
            if step.id == "slow":
                started.set()
                await asyncio.Event().wait()
            return await super().tool_call(run, step)

    flow = make([tool("a"), tool("slow"), tool("c")])
    recorder = Recorder()
    runner = Slow(Clock())
    task = asyncio.create_task(run_flow(flow, {}, runner, record=recorder, run_id="r"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [event[:2] for event in recorder.events] == [
        ("started", "a"),
        ("finished", "a"),
        ("started", "slow"),
        ("run", "cancelled"),
    ]
    assert recorder.results == [
        RunResult(RunStatus.CANCELLED, {"a": "a-out"}, step_id="slow", resume_at=1, steps_run=["a"])
    ]
    assert [call[1] for call in runner.calls] == ["a"]


async def test_cancellation_during_a_delay() -> None:
    flow = make([{"id": "wait", "type": "delay", "seconds": 600}, tool("b")])
    recorder = Recorder()
    task = asyncio.create_task(run_flow(flow, {}, Runner(Clock()), record=recorder))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert recorder.results[0].status is RunStatus.CANCELLED and recorder.results[0].step_id == "wait"


async def test_the_run_context_carries_the_flow_inputs_and_trigger() -> None:
    seen: list[RunContext] = []

    class Seeing(Runner):
        async def tool_call(self, run: RunContext, step: ToolCallStep) -> Any:
            seen.append(run)
            return None

    flow = make([tool("a")], inputs={"x": {"type": "string", "default": "d"}})
    await run_flow(flow, {}, Seeing(Clock()), record=Recorder(), trigger={"path": "a.md"}, run_id="r9")
    assert seen == [RunContext(flow, {"x": "d"}, {"path": "a.md"}, "r9")]

"""Flow validation: clear errors that name the step and field, and the inputs as a JSON Schema."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from cowork.automations import (
    ConditionStep,
    CronTrigger,
    FileTrigger,
    Flow,
    FlowFileError,
    FlowInputError,
    ManualTrigger,
    McpNotificationTrigger,
    SessionEventTrigger,
    ToolCallStep,
    parse_flow,
)


def tool(id: str, **extra: Any) -> dict[str, Any]:
    return {"id": id, "type": "toolCall", "tool": "read", **extra}


def flow(steps: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"name": "f", "steps": steps, **extra}


def problems(data: dict[str, Any]) -> list[str]:
    with pytest.raises(FlowFileError) as caught:
        parse_flow(data)
    return caught.value.problems


def test_a_minimal_flow() -> None:
    parsed = parse_flow(flow([tool("a")]))
    assert parsed.trigger == ManualTrigger(type="manual")
    assert parsed.enabled and parsed.version == 1
    step = parsed.steps[0]
    assert isinstance(step, ToolCallStep) and step.output_name == "a" and step.arguments == {}


def test_every_step_and_trigger_type_parses() -> None:
    parsed = parse_flow(
        flow(
            [
                tool("a", arguments={"path": "${input.p}", "n": [1, None, {"x": True}]}),
                {"id": "b", "type": "mcpToolCall", "server": "github", "tool": "list_issues", "output": "issues"},
                {"id": "c", "type": "condition", "when": "${issues} != null", "skip": 2},
                {"id": "d", "type": "agentStep", "prompt": "Sum up ${issues}", "model": "fast", "tools": ["read"]},
                {"id": "e", "type": "delay", "seconds": 1.5},
                {"id": "f", "type": "notification", "title": "Done", "body": "${d}", "tier": "urgent"},
            ],
            inputs={"p": {"type": "string"}},
            trigger={"type": "file", "patterns": ["docs/**/*.md"], "events": ["created"]},
        )
    )
    assert [step.type for step in parsed.steps] == [
        "toolCall",
        "mcpToolCall",
        "condition",
        "agentStep",
        "delay",
        "notification",
    ]
    assert parsed.steps[1].output_name == "issues"
    assert parsed.trigger == FileTrigger(type="file", patterns=["docs/**/*.md"], events=["created"])
    assert parse_flow(flow([tool("a")], trigger={"type": "sessionEvent", "eventType": "tool_result"})).trigger == (
        SessionEventTrigger(type="sessionEvent", event_type="tool_result")
    )
    mcp = {"type": "mcpNotification", "server": "github", "method": "notifications/resources/updated"}
    assert isinstance(parse_flow(flow([tool("a")], trigger=mcp)).trigger, McpNotificationTrigger)


def test_python_code_may_use_field_names() -> None:
    step = ToolCallStep(id="a", type="toolCall", tool="read", direct_output=True)
    assert step.direct_output and step.model_dump()["directOutput"] is True


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (flow([]), ["steps: List should have at least 1 item after validation, not 0"]),
        (
            flow([tool(f"s{i}") for i in range(101)]),
            ["steps: List should have at most 100 items after validation, not 101"],
        ),
        (
            flow([tool("a")], name="Has Spaces"),
            ["name: flow name 'Has Spaces' must be lower-case letters and digits, words joined by single - or _"],
        ),
        (flow([tool("a")], name="x" * 59), ["name: String should have at most 58 characters"]),
        (flow([tool("a")], name=""), ["name: String should have at least 1 character"]),
        (flow([tool("a"), tool("a")]), ["steps[1] (a): the step id `a` is used twice"]),
        (
            flow([tool("a", output="x"), tool("b", output="x")]),
            ["steps[1] (b): the output variable `x` is already step `a`'s"],
        ),
        (flow([tool("a"), tool("b", output="a")]), ["steps[1] (b): the output variable `a` is already step `a`'s"]),
        (
            flow([tool("1a")]),
            ["steps[0] (1a).id: step id '1a' must be a letter or _ then letters, digits or _ (64 at most)"],
        ),
        (flow([tool("input")]), ["steps[0] (input).id: step id 'input' is reserved: ${input.…} names the run's input"]),
        (
            flow([tool("a", output="trigger")]),
            ["steps[0] (a).output: output variable 'trigger' is reserved: ${trigger.…} names the run's trigger"],
        ),
        (flow([{"id": "a", "type": "toolCall"}]), ["steps[0] (a).tool: Field required"]),
        (flow([tool("a", colour="red")]), ["steps[0] (a).colour: Extra inputs are not permitted"]),
        (
            flow([{"id": "a", "type": "shell"}]),
            [
                "steps[0] (a): Input tag 'shell' found using 'type' does not match any of the expected tags: 'toolCall', 'mcpToolCall', 'agentStep', 'condition', 'delay', 'notification'"
            ],
        ),
        (flow([tool("a", arguments={"n": {1, 2}})]), ["steps[0] (a).arguments.n: input was not a valid JSON value"]),
        (flow([tool("a", directOutput="yes")]), ["steps[0] (a).directOutput: Input should be a valid boolean"]),
        (flow([{"id": "d", "type": "delay", "seconds": 0}]), ["steps[0] (d).seconds: Input should be greater than 0"]),
        (
            flow([{"id": "d", "type": "delay", "seconds": 7 * 86400 + 1}]),
            ["steps[0] (d).seconds: Input should be less than or equal to 604800"],
        ),
        (
            flow([{"id": "d", "type": "delay", "seconds": "5"}]),
            ["steps[0] (d).seconds: Input should be a valid number"],
        ),
        (
            flow([{"id": "d", "type": "delay", "seconds": 1, "directOutput": True}]),
            ["steps[0] (d): a delay cannot be directOutput: it has no result to return"],
        ),
        (
            flow([{"id": "c", "type": "condition", "when": "true", "directOutput": True}, tool("a")]),
            ["steps[0] (c): a condition cannot be directOutput: it has no result to return"],
        ),
        (
            flow([{"id": "n", "type": "notification", "title": "t", "tier": "loud"}]),
            ["steps[0] (n).tier: Input should be 'urgent', 'helpful' or 'informational'"],
        ),
        (flow([tool("a")], extra_field=1), ["extra_field: Extra inputs are not permitted"]),
    ],
)
def test_validation_errors_name_the_step_and_field(data: dict[str, Any], expected: list[str]) -> None:
    assert problems(data) == expected


@pytest.mark.parametrize(
    ("when", "message"),
    [
        ("__import__('os').system('id')", "unknown name '__import__' at column 1"),
        ("${a}.__class__", "unexpected '.' at column 5"),
        ("(lambda: 1)()", "unknown name 'lambda'"),
        ("open('x')", "unknown name 'open'"),
        ("${a} > ", "expected a value"),
    ],
)
def test_hostile_conditions_are_refused_at_validation(when: str, message: str) -> None:
    [problem] = problems(flow([tool("a"), {"id": "c", "type": "condition", "when": when}, tool("b")]))
    assert problem.startswith(f"steps[1] (c).when: invalid condition {when!r}: ") and message in problem


def test_condition_skip_must_stay_within_the_flow() -> None:
    def steps(skip: int) -> dict[str, Any]:
        return flow([tool("a"), {"id": "c", "type": "condition", "when": "${a}", "skip": skip}, tool("b"), tool("d")])

    assert isinstance(parse_flow(steps(2)).steps[1], ConditionStep)
    assert problems(steps(3)) == ["steps[1] (c).skip: skips 3 steps but only 2 steps follow it"]
    assert problems(flow([tool("a"), {"id": "c", "type": "condition", "when": "true"}])) == [
        "steps[1] (c).skip: skips 1 steps but only 0 steps follow it"
    ]
    assert problems(steps(0)) == ["steps[1] (c).skip: Input should be greater than or equal to 1"]


def test_references_that_can_never_resolve_are_errors() -> None:
    data = flow(
        [
            tool("a", arguments={"x": "${b.value}", "y": ["${a}"], "z": "${input.nope}"}),
            {"id": "b", "type": "condition", "when": "${later} == 1"},
            tool("c", output="later", arguments={"ok": "${a} ${input.p} ${input} ${trigger.path} $${later}"}),
        ],
        inputs={"p": {"type": "string"}},
    )
    assert problems(data) == [
        "steps[0] (a).arguments['x']: ${b.value} reads step `b`'s output, which does not exist yet when this step runs",
        "steps[0] (a).arguments['y'][0]: ${a} reads this step's own output, which does not exist yet when this step runs",
        "steps[0] (a).arguments['z']: ${input.nope} reads an input the flow does not declare (`nope`)",
        "steps[1] (b).when: ${later} reads step `c`'s output, which does not exist yet when this step runs",
    ]


def test_unknown_names_are_warnings_not_errors() -> None:
    parsed = parse_flow(
        flow(
            [
                tool("fetch"),
                {"id": "c", "type": "condition", "when": "${fecth.ok}"},
                {"id": "run", "type": "toolCall", "tool": "bash", "arguments": {"command": "echo ${HOME} ${fetch}"}},
                {"id": "n", "type": "notification", "title": "${typo}", "body": "$${escaped}"},
            ]
        )
    )
    assert parsed.warnings() == [
        "steps[1] (c).when: ${fecth.ok} names no step output, input or trigger; it stays as written",
        "steps[2] (run).arguments['command']: ${HOME} names no step output, input or trigger; it stays as written",
        "steps[3] (n).title: ${typo} names no step output, input or trigger; it stays as written",
    ]


@pytest.mark.parametrize(
    ("trigger", "expected"),
    [
        (
            {"type": "cron", "expression": "61 * * * *"},
            "trigger.expression: '61 * * * *' is not a valid cron expression",
        ),
        ({"type": "cron", "expression": "* * *"}, "trigger.expression: cron expression '* * *' needs five fields"),
        ({"type": "cron", "expression": "*/5 * * * * *"}, "needs five fields"),  # no seconds field
        ({"type": "cron", "expression": "@sometimes"}, "needs five fields"),
        (
            {"type": "cron", "expression": "0 9 * * *", "timezone": "Mars/Olympus"},
            "trigger.timezone: unknown time zone 'Mars/Olympus'",
        ),
        (
            {"type": "cron", "expression": "0 9 * * *", "timezone": "../../etc/passwd"},
            "trigger.timezone: unknown time zone",
        ),
        (
            {"type": "cron", "expression": "0 9 * * *", "catchUp": "twice"},
            "trigger.catchUp: Input should be 'skip', 'once' or 'all'",
        ),
        ({"type": "file", "patterns": ["/etc/*"]}, "must be relative to the workspace"),
        ({"type": "file", "patterns": ["~/x"]}, "must be relative to the workspace"),
        ({"type": "file", "patterns": ["C:/x"]}, "must be relative to the workspace"),
        ({"type": "file", "patterns": ["a\\b"]}, "must be relative to the workspace"),
        ({"type": "file", "patterns": ["docs/../../x"]}, "must stay inside the workspace"),
        ({"type": "file", "patterns": []}, "trigger.patterns: List should have at least 1 item"),
        (
            {"type": "file", "patterns": ["x"], "events": ["renamed"]},
            "trigger.events[0]: Input should be 'created', 'modified' or 'deleted'",
        ),
        ({"type": "sessionEvent", "eventType": "nope"}, "trigger.eventType: unknown session event type 'nope'"),
        (
            {"type": "mcpNotification", "server": "", "method": "m"},
            "trigger.server: String should have at least 1 character",
        ),
        ({"type": "webhook"}, "trigger: Input tag 'webhook' found using 'type' does not match"),
    ],
)
def test_trigger_errors(trigger: dict[str, Any], expected: str) -> None:
    [problem] = problems(flow([tool("a")], trigger=trigger))
    assert expected in problem


def test_cron_schedules_in_their_time_zone() -> None:
    cron = CronTrigger(type="cron", expression="0  9 * * 1-5", timezone="Europe/Paris")
    assert cron.expression == "0 9 * * 1-5" and cron.catch_up == "once"
    friday_evening = datetime(2026, 3, 6, 18, 0, tzinfo=UTC)
    assert cron.next_after(friday_evening).isoformat() == "2026-03-09T09:00:00+01:00"
    assert CronTrigger(type="cron", expression="@Daily").expression == "@daily"
    with pytest.raises(ValueError, match="aware"):
        cron.next_after(datetime(2026, 1, 1))


def test_inputs_as_json_schema_and_their_checks() -> None:
    parsed = parse_flow(
        flow(
            [tool("a", arguments={"q": "${input.topic}"})],
            inputs={
                "topic": {"type": "string", "description": "What to look for"},
                "limit": {"type": "number", "default": 5},
                "labels": {"type": "array", "required": False},
                "dry_run": {"type": "boolean", "default": False},
                "extra": {"type": "object", "default": {"a": 1}},
            },
        )
    )
    assert parsed.input_schema() == {
        "type": "object",
        "properties": {
            "topic": {"type": "string", "description": "What to look for"},
            "limit": {"type": "number", "default": 5},
            "labels": {"type": "array"},
            "dry_run": {"type": "boolean", "default": False},
            "extra": {"type": "object", "default": {"a": 1}},
        },
        "required": ["topic"],
        "additionalProperties": False,
    }
    assert parsed.resolve_inputs({"topic": "x", "limit": 2}) == {
        "topic": "x",
        "limit": 2,
        "dry_run": False,
        "extra": {"a": 1},
    }
    with pytest.raises(FlowInputError) as caught:
        parsed.resolve_inputs({"limit": True, "labels": "a", "other": 1})
    assert caught.value.problems == [
        "unknown input 'other'",
        "input 'topic' is required",
        "input 'limit' must be of type number, not bool",
        "input 'labels' must be of type array, not str",
    ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"type": "integer"}, "inputs.x.type: Input should be 'string', 'number', 'boolean', 'object' or 'array'"),
        ({"type": "number", "default": "5"}, "inputs.x: the default '5' is not of type number"),
        ({"type": "string", "default": "a", "required": True}, "inputs.x: an input with a default is not required"),
    ],
)
def test_input_errors(spec: dict[str, Any], expected: str) -> None:
    [problem] = problems(flow([tool("a")], inputs={"x": spec}))
    assert problem.startswith(expected)


def test_input_names_are_identifiers() -> None:
    [problem] = problems(flow([tool("a")], inputs={"bad-name": {"type": "string"}}))
    assert problem == "inputs: input name 'bad-name' must be a letter or _ then letters, digits or _"


def test_flows_are_immutable_values() -> None:
    parsed = parse_flow(flow([tool("a")]))
    with pytest.raises(ValidationError, match="frozen"):
        parsed.enabled = False  # type: ignore[misc]
    assert parsed.step_index("a") == 0
    with pytest.raises(KeyError):
        parsed.step_index("b")


def test_strict_values_are_not_coerced() -> None:
    with pytest.raises(ValidationError, match="valid integer"):
        Flow.model_validate(flow([tool("a")], version="2"))

"""The step types of a flow, one class each, joined by a union tagged on `type`.

Each step names the variable its output is stored under (`output`, by default its `id`). The fields the executor
substitutes variables into are listed per class in `TEMPLATED`: the rest (tool and server names, models, the tool
list) stay as written, so a value produced at run time cannot change which tool runs.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, JsonValue, field_validator, model_validator

from ._base import IDENTIFIER, RESERVED_ROOTS, FlowValue
from ._expressions import Expression, ExpressionError, parse_expression

__all__ = [
    "MAX_DELAY_SECONDS",
    "AgentStep",
    "ConditionStep",
    "DelayStep",
    "McpToolCallStep",
    "NotificationStep",
    "Step",
    "ToolCallStep",
]

MAX_DELAY_SECONDS = 7 * 24 * 3600


def _check_identifier(value: str, what: str) -> str:
    if not IDENTIFIER.fullmatch(value):
        raise ValueError(f"{what} {value!r} must be a letter or _ then letters, digits or _ (64 at most)")
    if value in RESERVED_ROOTS:
        raise ValueError(f"{what} {value!r} is reserved: ${{{value}.…}} names the run's {value}")
    return value


class _Step(FlowValue):
    """What every step has."""

    id: str
    output: str | None = None
    direct_output: bool = False

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return _check_identifier(value, "step id")

    @field_validator("output")
    @classmethod
    def _output(cls, value: str | None) -> str | None:
        return None if value is None else _check_identifier(value, "output variable")

    @property
    def output_name(self) -> str:
        """The variable later steps read this step's output from."""
        return self.output or self.id


class ToolCallStep(_Step):
    """Call one of Cowork's tools (built-in, plugin or `mcp__server__tool`), through the same approval policy."""

    type: Literal["toolCall"]
    tool: str = Field(min_length=1, max_length=200)
    arguments: dict[str, JsonValue] = Field(default_factory=dict)


class McpToolCallStep(_Step):
    """Call a tool of a configured MCP server by server and tool name."""

    type: Literal["mcpToolCall"]
    server: str = Field(min_length=1, max_length=100)
    tool: str = Field(min_length=1, max_length=200)
    arguments: dict[str, JsonValue] = Field(default_factory=dict)


class AgentStep(_Step):
    """Give the agent a task; its final answer is the output. `model` and `tools` narrow what it may use."""

    type: Literal["agentStep"]
    prompt: str = Field(min_length=1, max_length=100_000)
    model: str | None = None
    tools: list[str] | None = None


class ConditionStep(_Step):
    """Go on when `when` holds; otherwise skip the next `skip` steps (reaching the end ends the flow).

    The output is the condition's truth (a boolean), so later steps and conditions can read it. `skip` may not run
    past the flow's last step; skipping exactly to the end is how a condition stops a flow.
    """

    type: Literal["condition"]
    when: str = Field(min_length=1)
    skip: int = Field(default=1, ge=1)

    @field_validator("when")
    @classmethod
    def _parses(cls, value: str) -> str:
        try:
            parse_expression(value)
        except ExpressionError as error:
            raise ValueError(f"invalid condition {value!r}: {error}") from None
        return value

    @model_validator(mode="after")
    def _no_direct_output(self) -> ConditionStep:
        if self.direct_output:
            raise ValueError("a condition cannot be directOutput: it has no result to return")
        return self

    @property
    def expression(self) -> Expression:
        """The parsed `when` (it parsed at validation, so this cannot fail)."""
        return parse_expression(self.when)


class DelayStep(_Step):
    """Wait before the next step (rate-limited services); at most seven days."""

    type: Literal["delay"]
    seconds: float = Field(gt=0, le=MAX_DELAY_SECONDS)

    @model_validator(mode="after")
    def _no_direct_output(self) -> DelayStep:
        if self.direct_output:
            raise ValueError("a delay cannot be directOutput: it has no result to return")
        return self


class NotificationStep(_Step):
    """Tell the user (a desktop or client notification) through the proactive engine's tiers."""

    type: Literal["notification"]
    title: str = Field(min_length=1, max_length=200)
    body: str = Field(default="", max_length=10_000)
    tier: Literal["urgent", "helpful", "informational"] = "helpful"


Step = Annotated[
    ToolCallStep | McpToolCallStep | AgentStep | ConditionStep | DelayStep | NotificationStep,
    Field(discriminator="type"),
]

# The fields whose strings may hold `${...}` references, per step type. Text fields always render to text;
# `arguments` keeps the type of an exact reference.
TEMPLATED: dict[str, tuple[str, ...]] = {
    "toolCall": ("arguments",),
    "mcpToolCall": ("arguments",),
    "agentStep": ("prompt",),
    "condition": (),  # read by the expression, as values
    "delay": (),
    "notification": ("title", "body"),
}


def templated_values(step: Any) -> dict[str, Any]:
    """The templated fields of a step, by field name."""
    return {name: getattr(step, name) for name in TEMPLATED[step.type]}

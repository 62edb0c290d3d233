"""A flow: its name, inputs, trigger and steps, validated as a whole (unique ids, references that can resolve).

Reference rules checked here, once, when a flow is loaded or saved:

- A reference to the output of the step itself or of a later step is an error: it can never resolve when the step
  runs, so it is a mistake, not a partial resolution.
- `${input.x}` for an input the flow does not declare is an error, for the same reason.
- A reference to any other unknown name is allowed (it stays literal at run time: `${HOME}` in a shell command is
  the shell's) and reported by `Flow.warnings()`, where a typo (`${fetc.data}`) shows up.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from pydantic import Field, JsonValue, field_validator, model_validator

from ._base import IDENTIFIER, RESERVED_ROOTS, FlowValue
from ._steps import ConditionStep, Step, templated_values
from ._triggers import ManualTrigger, Trigger
from ._variables import Reference, references_in

__all__ = ["MAX_STEPS", "Flow", "FlowInput", "FlowInputError"]

MAX_STEPS = 100
MAX_NAME = 58
"""A flow is also a tool, `flow_<name>`, and tool names stop at 64 characters for every provider."""
# Lower-case words joined by single - or _: usable in a file name, a URL and a tool name.
_NAME = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*")

InputType = Literal["string", "number", "boolean", "object", "array"]


def _json_type_matches(kind: InputType, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "object":
        return isinstance(value, dict)
    return isinstance(value, list)


class FlowInputError(ValueError):
    """The values given to a run do not match the flow's declared inputs; `problems` lists each one."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class FlowInput(FlowValue):
    """One named input: a parameter of the flow when it is called as a tool, read as `${input.name}`.

    An input with a `default` is optional; one without is required unless `required = false` (it is then absent
    when not given, and `${input.name}` stays literal).
    """

    type: InputType
    description: str = Field(default="", max_length=1000)
    required: bool | None = None
    default: JsonValue = None

    @model_validator(mode="after")
    def _consistent(self) -> FlowInput:
        if self.default is not None:
            if self.required:
                raise ValueError("an input with a default is not required: drop `required` or the default")
            if not _json_type_matches(self.type, self.default):
                raise ValueError(f"the default {self.default!r} is not of type {self.type}")
        return self

    @property
    def is_required(self) -> bool:
        """Whether a run must be given this input."""
        return self.default is None if self.required is None else self.required

    def json_schema(self) -> dict[str, Any]:
        """This input as a JSON Schema property."""
        schema: dict[str, Any] = {"type": self.type}
        if self.description:
            schema["description"] = self.description
        if self.default is not None:
            schema["default"] = self.default
        return schema


class Flow(FlowValue):
    """A saved automation: when its trigger fires (or it is called), its steps run in order.

    `version` is the definition's revision: the store bumps it on every edit and a run records the one it ran.
    """

    name: str = Field(min_length=1, max_length=MAX_NAME)
    description: str = Field(default="", max_length=2000)
    inputs: dict[str, FlowInput] = Field(default_factory=dict)
    trigger: Trigger = Field(default_factory=lambda: ManualTrigger(type="manual"))
    steps: list[Step] = Field(min_length=1, max_length=MAX_STEPS)
    enabled: bool = True
    version: int = Field(default=1, ge=1)

    @field_validator("name")
    @classmethod
    def _slug(cls, value: str) -> str:
        if not _NAME.fullmatch(value):
            raise ValueError(
                f"flow name {value!r} must be lower-case letters and digits, words joined by single - or _"
            )
        return value

    @field_validator("inputs")
    @classmethod
    def _input_names(cls, inputs: dict[str, FlowInput]) -> dict[str, FlowInput]:
        for name in inputs:
            if not IDENTIFIER.fullmatch(name):
                raise ValueError(f"input name {name!r} must be a letter or _ then letters, digits or _")
        return inputs

    @model_validator(mode="after")
    def _consistent_steps(self) -> Flow:
        problems = list(self._step_problems())
        if problems:
            # One line per problem; each names its step already (flow files list them separately).
            raise ValueError("\n".join(problems))
        return self

    def _step_problems(self) -> Iterator[str]:
        seen_ids: set[str] = set()
        outputs: dict[str, int] = {}
        for index, step in enumerate(self.steps):
            label = f"steps[{index}] ({step.id})"
            if step.id in seen_ids:
                yield f"{label}: the step id `{step.id}` is used twice"
            elif step.output_name in outputs:
                other = self.steps[outputs[step.output_name]].id
                yield f"{label}: the output variable `{step.output_name}` is already step `{other}`'s"
            seen_ids.add(step.id)
            outputs.setdefault(step.output_name, index)
            if isinstance(step, ConditionStep) and index + step.skip > len(self.steps) - 1:
                yield (f"{label}.skip: skips {step.skip} steps but only {len(self.steps) - index - 1} steps follow it")
        for index, step in enumerate(self.steps):
            for where, reference in self._references(step):
                problem = self._reference_problem(index, reference, outputs)
                if problem:
                    yield f"steps[{index}] ({step.id}).{where}: {reference.text} {problem}"

    def _reference_problem(self, index: int, reference: Reference, outputs: Mapping[str, int]) -> str | None:
        if reference.root == "input":
            if reference.path and reference.path[0] not in self.inputs:
                return f"reads an input the flow does not declare (`{reference.path[0]}`)"
            return None
        later = outputs.get(reference.root)
        if later is not None and later >= index:
            whose = "this step's own output" if later == index else f"step `{self.steps[later].id}`'s output"
            return f"reads {whose}, which does not exist yet when this step runs"
        return None

    @staticmethod
    def _references(step: Step) -> Iterator[tuple[str, Reference]]:
        if isinstance(step, ConditionStep):
            for reference in step.expression.references():
                yield "when", reference
            return
        for field, value in templated_values(step).items():
            for where, reference in references_in(value):
                yield field + "".join(f"[{part!r}]" for part in where), reference

    def warnings(self) -> list[str]:
        """References to names that are neither a step output, `input` nor `trigger`: they stay literal at run time.

        Not errors, because `${HOME}` in a shell command is meant for the shell; but a typo shows up here.
        """
        known = {step.output_name for step in self.steps} | RESERVED_ROOTS
        return [
            f"steps[{index}] ({step.id}).{where}: {reference.text} names no step output, input or trigger; "
            "it stays as written"
            for index, step in enumerate(self.steps)
            for where, reference in self._references(step)
            if reference.root not in known
        ]

    def step_index(self, step_id: str) -> int:
        """The position of a step, by id (`KeyError` when there is none)."""
        for index, step in enumerate(self.steps):
            if step.id == step_id:
                return index
        raise KeyError(step_id)

    def input_schema(self) -> dict[str, Any]:
        """The inputs as a JSON Schema object: the parameters of the flow when the agent calls it as a tool."""
        return {
            "type": "object",
            "properties": {name: spec.json_schema() for name, spec in self.inputs.items()},
            "required": [name for name, spec in self.inputs.items() if spec.is_required],
            "additionalProperties": False,
        }

    def resolve_inputs(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The run's `input` variable: the given values checked against the declared inputs, defaults filled in.

        Raises:
            FlowInputError: unknown names, missing required inputs or values of the wrong type (all of them).
        """
        problems = [f"unknown input {name!r}" for name in given if name not in self.inputs]
        resolved: dict[str, Any] = {}
        for name, spec in self.inputs.items():
            if name in given:
                value = given[name]
                if not _json_type_matches(spec.type, value):
                    problems.append(f"input {name!r} must be of type {spec.type}, not {type(value).__name__}")
                resolved[name] = value
            elif spec.default is not None:
                resolved[name] = spec.default
            elif spec.is_required:
                problems.append(f"input {name!r} is required")
        if problems:
            raise FlowInputError(problems)
        return resolved

"""Flows as readable files: written as YAML, read from YAML or TOML.

YAML is the written format because it is already a dependency (skill front matter) and holds every JSON value a
step's arguments may contain — TOML has no null. TOML is read too (stdlib `tomllib`), for people who prefer it.
Multi-line text (prompts, notification bodies) is written as a `|` block so a file reads like what it says.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from ._model import Flow

__all__ = ["FlowFileError", "dump_flow", "load_flow", "parse_flow", "read_flow", "write_flow"]

FileFormat = Literal["yaml", "toml"]


class FlowFileError(ValueError):
    """A flow file that does not parse or does not describe a valid flow; `problems` lists what, where."""

    def __init__(self, problems: list[str], source: str = "") -> None:
        prefix = f"{source}: " if source else ""
        super().__init__(prefix + "; ".join(problems))
        self.problems = problems


@functools.cache
def _dumper() -> type[Any]:
    """Safe YAML, with multi-line strings as literal blocks (made on first use: the server starts without yaml)."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, represent_str)
    return Dumper


def _location(flow_data: Any, loc: tuple[int | str, ...]) -> str:
    """A pydantic error location as a reader finds it: `steps[2] (notify).title`, union tags left out."""
    parts: list[str] = []
    node = flow_data
    for index, part in enumerate(loc):
        if isinstance(part, int):
            label = f"[{part}]"
            node = node[part] if isinstance(node, list) and 0 <= part < len(node) else None
            if index == 1 and loc[0] == "steps" and isinstance(node, dict) and isinstance(node.get("id"), str):
                label += f" ({node['id']})"
            parts.append(label)
            continue
        tag_position = {"steps": 2, "trigger": 1}.get(str(loc[0]))
        if index == tag_position and isinstance(node, dict) and node.get("type") == part:
            continue  # the discriminated union's tag (`toolCall`) in the location, not a key of the file
        node = node.get(part) if isinstance(node, dict) else None
        parts.append(("." if parts else "") + part)
    return "".join(parts) or "flow"


def _message(item: Any) -> str:
    return str(item["msg"]).removeprefix("Value error, ")


def parse_flow(data: Any, source: str = "") -> Flow:
    """A flow from parsed file data.

    Raises:
        FlowFileError: with one line per problem, each naming the step (by index and id) and field.
    """
    try:
        return Flow.model_validate(data)
    except ValidationError as error:
        problems = []
        for item in error.errors():
            if item["loc"]:
                problems.append(f"{_location(data, item['loc'])}: {_message(item)}")
            else:  # the whole-flow checks, one step per line
                problems += _message(item).splitlines()
        raise FlowFileError(problems, source) from None


def load_flow(text: str, format: FileFormat = "yaml", source: str = "") -> Flow:
    """A flow from the text of a YAML or TOML file.

    Raises:
        FlowFileError: the text does not parse, or does not describe a valid flow.
    """
    import yaml

    try:
        data = tomllib.loads(text) if format == "toml" else yaml.safe_load(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as error:
        raise FlowFileError([f"not valid {format.upper()}: {error}"], source) from None
    return parse_flow(data, source)


def dump_flow(flow: Flow) -> str:
    """The flow as YAML, fields at their defaults left out; `load_flow` reads it back equal."""
    data = flow.model_dump(mode="json", exclude_defaults=True)
    # id and type first: a step reads as "what it is" before its settings.
    data["steps"] = [{"id": step.pop("id"), "type": step.pop("type"), **step} for step in data["steps"]]
    import yaml

    text: str = yaml.dump(data, Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=100)
    return text


def read_flow(path: Path) -> Flow:
    """A flow from a `.yaml`/`.yml` or `.toml` file."""
    format: FileFormat = "toml" if path.suffix.lower() == ".toml" else "yaml"
    return load_flow(path.read_text(encoding="utf-8"), format, source=str(path))


def write_flow(path: Path, flow: Flow) -> None:
    """Write the flow as YAML."""
    path.write_text(dump_flow(flow), encoding="utf-8")

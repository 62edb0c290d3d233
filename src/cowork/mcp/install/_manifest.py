"""The install manifest: what a server needs, how to start it, and the configuration it asks for.

jsonschema is imported where a schema is checked, not with this module (which the install service loads at
start-up).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from cowork.protocol import ErrorCode, ErrorSource, ProtocolError

__all__ = [
    "DependencySpec",
    "Manifest",
    "config_problems",
    "credential_name",
    "load_manifest",
    "render",
    "secret_fields",
]

NAME_PATTERN = r"^[a-z0-9_-]{1,40}$"
_TEMPLATE = re.compile(r"\$\{config\.([A-Za-z_][A-Za-z0-9_-]*)\}")
MAX_MANIFEST_BYTES = 256 * 1024


class DependencySpec(BaseModel):
    """A program the server needs: `{"name": "node", "version": ">=18"}`; `install` overrides the built-in
    instructions per platform (`linux`, `macos`, `windows`)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.+-]+$")
    version: str | None = Field(default=None, max_length=50, pattern=r"^\s*(>=|<=|==|>|<|=)?\s*v?\d+(\.\d+)*\s*$")
    install: dict[Literal["linux", "macos", "windows"], str] = Field(default_factory=dict)


class Manifest(BaseModel):
    """A server's install manifest (a manual entry or a manifest file)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str = Field(pattern=NAME_PATTERN)
    description: str = Field(default="", max_length=2000)
    transport: Literal["stdio", "http", "sse"] = "stdio"
    command: str | None = Field(default=None, min_length=1, max_length=4096)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = Field(default=None, min_length=1, max_length=4096)
    headers: dict[str, str] = Field(default_factory=dict)
    dependencies: list[DependencySpec] = Field(default_factory=list)
    config: dict[str, Any] | None = Field(default=None, description="A JSON schema of the configuration form.")

    @field_validator("config")
    @classmethod
    def _schema_is_valid(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return None
        from jsonschema import Draft202012Validator, SchemaError
        from jsonschema.validators import validator_for

        try:
            validator_for(value, default=Draft202012Validator).check_schema(value)
        except SchemaError as exc:
            raise ValueError(f"config is not a valid JSON schema: {exc.message}") from None
        if value.get("type", "object") != "object":
            raise ValueError("config must be a JSON schema of an object (type: object)")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Manifest:
        if self.transport == "stdio" and self.command is None:
            raise ValueError("a stdio server needs a command")
        if self.transport != "stdio" and self.url is None:
            raise ValueError(f"an {self.transport} server needs a url")
        known = set((self.config or {}).get("properties", {}))
        for text in self._templated():
            for key in _TEMPLATE.findall(text):
                if key not in known:
                    raise ValueError(f"${{config.{key}}} is used but config has no property {key!r}")
        return self

    def _templated(self) -> list[str]:
        return [
            *([self.command] if self.command else []),
            *self.args,
            *self.env.values(),
            *([self.url] if self.url else []),
            *self.headers.values(),
        ]


def load_manifest(manifest: dict[str, Any] | None, path: str | None) -> Manifest:
    """Parse a manifest given inline or as a file path.

    Raises:
        ProtocolError: `invalid_params`, naming what is wrong; nothing has been stored.
    """
    if path is not None:
        file = Path(path).expanduser()
        try:
            if file.stat().st_size > MAX_MANIFEST_BYTES:
                raise _bad(f"Manifest file {file} is larger than {MAX_MANIFEST_BYTES} bytes.")
            manifest = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise _bad(f"Manifest file {file} does not exist.") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise _bad(f"Cannot read manifest file {file}: {exc}") from None
        except json.JSONDecodeError as exc:
            raise _bad(f"Manifest file {file} is not valid JSON: {exc}") from None
        if not isinstance(manifest, dict):
            raise _bad(f"Manifest file {file} must hold a JSON object.")
    assert manifest is not None
    try:
        return Manifest.model_validate(manifest)
    except ValidationError as exc:
        problems = [
            {"field": ".".join(str(p) for p in e["loc"]) or "(manifest)", "problem": e["msg"]} for e in exc.errors()
        ]
        summary = "; ".join(f"{p['field']}: {p['problem']}" for p in problems)
        raise ProtocolError(
            ErrorCode.INVALID_PARAMS,
            f"Invalid manifest: {summary}",
            source=ErrorSource.PROTOCOL,
            details={"errors": problems},
        ) from None


def _bad(message: str) -> ProtocolError:
    return ProtocolError(ErrorCode.INVALID_PARAMS, message, source=ErrorSource.PROTOCOL)


def secret_fields(schema: dict[str, Any] | None) -> list[str]:
    """The top-level properties marked `x-secret: true`."""
    props: dict[str, Any] = (schema or {}).get("properties", {})
    return sorted(k for k, v in props.items() if isinstance(v, dict) and v.get("x-secret") is True)


def credential_name(server: str, field: str) -> str:
    """Where a secret configuration value lives in the credential store."""
    return f"mcp/{server}/{field}"


def config_problems(schema: dict[str, Any] | None, values: dict[str, Any]) -> list[dict[str, str]]:
    """What is wrong with `values` under `schema` (empty when they are valid)."""
    if schema is None:
        return []
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for

    validator = validator_for(schema, default=Draft202012Validator)(schema)
    problems = []
    for error in sorted(validator.iter_errors(values), key=lambda e: list(e.absolute_path)):
        where = ".".join(str(p) for p in error.absolute_path) or "(values)"
        message = error.message
        if where != "(values)" and where.split(".")[0] in secret_fields(schema):
            message = f"invalid value ({error.validator} {error.validator_value!r})"  # never echo a secret
        problems.append({"field": where, "problem": message})
    return problems


def render(text: str, values: dict[str, Any]) -> str:
    """Replace each `${config.key}` with the value (a string, or JSON for other types; missing → empty)."""

    def value(match: re.Match[str]) -> str:
        found = values.get(match.group(1))
        if found is None:
            return ""
        return found if isinstance(found, str) else json.dumps(found)

    return _TEMPLATE.sub(value, text)

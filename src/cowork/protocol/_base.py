"""The base of every wire model: camelCase on the wire, snake_case in Python."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

__all__ = ["MAX_INT64", "Count", "OsText", "Params", "WireModel"]

MAX_INT64 = 2**63 - 1
"""The largest integer the stores (SQLite, PostgreSQL `bigint`) hold."""


def _no_nul(value: str) -> str:
    if "\0" in value:
        raise ValueError("must not contain a NUL byte (no file name, argument or variable can hold one)")
    return value


OsText = Annotated[str, AfterValidator(_no_nul)]
"""Text that reaches the operating system (a path, a command, an argument, an environment variable)."""

Count = Annotated[int, Field(ge=0, le=MAX_INT64)]
"""A non-negative integer that reaches the store (a sequence number, an offset)."""


class WireModel(BaseModel):
    """A value that crosses the wire. Unknown fields are ignored so older clients read newer servers."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
        frozen=True,
        ser_json_inf_nan="null",
        # Each model's validator is built on its first use, not at import: building all of them would make every
        # process (server, CLI) pay for the whole protocol before its first request.
        defer_build=True,
    )

    def wire(self) -> dict[str, Any]:
        """Return the JSON-ready dict exactly as it goes on the wire."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class Params(WireModel):
    """Parameters of a request. Unknown fields are refused, so a typo gets a clear error instead of being ignored."""

    model_config = ConfigDict(extra="forbid")

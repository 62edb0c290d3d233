"""The base of every wire model: camelCase on the wire, snake_case in Python."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["Params", "WireModel"]


class WireModel(BaseModel):
    """A value that crosses the wire. Unknown fields are ignored so older clients read newer servers."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
        frozen=True,
        ser_json_inf_nan="null",
    )

    def wire(self) -> dict[str, Any]:
        """Return the JSON-ready dict exactly as it goes on the wire."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class Params(WireModel):
    """Parameters of a request. Unknown fields are refused, so a typo gets a clear error instead of being ignored."""

    model_config = ConfigDict(extra="forbid")

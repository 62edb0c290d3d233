"""The one pydantic configuration every flow value shares."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["IDENTIFIER", "RESERVED_ROOTS", "FlowValue"]

# Step ids, output variables and input names: they appear in `${...}` references and as tool parameter names.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
# The variable roots the executor provides besides step outputs (see the package docstring).
RESERVED_ROOTS = frozenset({"input", "trigger"})


class FlowValue(BaseModel):
    """A part of a flow definition: strict (no coercion of "3" to 3), unknown fields refused, immutable.

    Files use camelCase (`directOutput`, `catchUp`), like the protocol; Python code may use the field names too.
    """

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )

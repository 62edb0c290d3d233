"""The server's health on the wire: each subsystem ready, degraded or disabled, and why (`health`)."""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import Field

from ._base import WireModel

__all__ = ["HealthResult", "HealthStatus", "SubsystemHealth", "SubsystemStatus"]

SubsystemStatus: TypeAlias = Literal["ready", "degraded", "disabled"]
"""`ready`: working; `degraded`: meant to work and does not (fully), `reason` says why and what to do; `disabled`:
off on purpose (by configuration, or not built yet), `reason` says which."""

HealthStatus: TypeAlias = Literal["ready", "degraded"]


class SubsystemHealth(WireModel):
    """One part of the server and how it stands now."""

    name: str = Field(
        description="`store`, `providers`, `mcp`, `sandbox`, `checkpoints`, `tracing`, `embedder`, `scheduler`."
    )
    status: SubsystemStatus = Field(
        description="`ready`: working; `degraded`: meant to work and does not (fully); `disabled`: off on purpose "
        "(by configuration, or not built yet)."
    )
    reason: str | None = Field(default=None, description="Why it is degraded or disabled (left out when ready).")


class HealthResult(WireModel):
    status: HealthStatus = Field(description="`degraded` when any subsystem is, else `ready`.")
    subsystems: list[SubsystemHealth]

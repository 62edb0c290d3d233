"""The throttling knobs, with the defaults of seed 002 (its "Proactive Notifications" section)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import timedelta

from ._tiers import Tier

__all__ = ["GateSettings"]


@dataclass(frozen=True, slots=True)
class GateSettings:
    """How much the gates let through. Every duration is a `timedelta`; every cap counts deliveries, not candidates."""

    urgent_per_hour: int = 10
    """At most this many urgent deliveries in any sliding hour."""
    helpful_per_hour: int = 4
    """At most this many helpful deliveries in any sliding hour."""
    informational_per_hour: int = 2
    """At most this many informational deliveries in any sliding hour (0 turns the tier off)."""
    bundle_window: timedelta = timedelta(seconds=30)
    """How long a helpful or informational candidate waits for related ones (same `key`) to go out as one."""
    cooldown: timedelta = timedelta(minutes=30)
    """After the user dismisses a delivery, its kinds are suppressed for this long."""
    dismissals_to_lower: int = 3
    """A kind dismissed this many times within `dismissal_lookback`, and never accepted there, drops one tier."""
    dismissal_lookback: timedelta = timedelta(days=7)
    """How far back dismissals and accepts count."""
    max_held: int = 50
    """At most this many candidates wait out one deep-work session; later ones are dropped."""
    held_expiry: timedelta = timedelta(hours=2)
    """A candidate held this long is stale by the time deep work ends, and is dropped instead of released."""
    snooze: timedelta = timedelta(minutes=10)
    """How long a snoozed delivery waits before it is offered again, unless the response says otherwise."""
    answerable_for: timedelta = timedelta(days=1)
    """How long a delivery can be answered; older ones are forgotten, so memory stays bounded."""

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, timedelta) and value <= timedelta(0):
                raise ValueError(f"GateSettings.{field.name} must be positive, got {value}")
            if isinstance(value, int) and value < (1 if field.name in {"dismissals_to_lower", "max_held"} else 0):
                raise ValueError(f"GateSettings.{field.name} is too small: {value}")

    def hourly_cap(self, tier: Tier) -> int:
        """The cap of `tier`'s sliding hour."""
        caps: dict[Tier, int] = {
            "urgent": self.urgent_per_hour,
            "helpful": self.helpful_per_hour,
            "informational": self.informational_per_hour,
        }
        return caps[tier]

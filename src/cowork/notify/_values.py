"""The values the throttle takes and gives: candidates in, deliveries and explained decisions out.

Plain frozen values with no ids of storage and no clock of their own: every time in them was handed in by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from ._tiers import Tier, check_tier

__all__ = [
    "Candidate",
    "Decision",
    "Delivery",
    "Gate",
    "Outcome",
    "Response",
    "UnknownDelivery",
    "Verdict",
    "require_aware",
    "span",
]


class Gate(StrEnum):
    """The six gates, in the order a candidate meets them (seed 002)."""

    TIER = "tier"
    HOURLY_CAP = "hourly_cap"
    DEEP_WORK = "deep_work"
    DISMISSALS = "dismissals"
    BUNDLING = "bundling"
    COOLDOWN = "cooldown"


class Outcome(StrEnum):
    """What became of a candidate."""

    DELIVERED = "delivered"
    HELD = "held"
    """Waiting out deep work."""
    BUNDLED = "bundled"
    """Waiting the bundling window for related candidates."""
    DROPPED = "dropped"
    """No room: a cap, a full hold queue, or held too long."""
    SUPPRESSED = "suppressed"
    """The user's own answers say not now: a cooldown, or a kind they keep dismissing."""


class Response(StrEnum):
    """How the user answered a delivery."""

    ACCEPT = "accept"
    DISMISS = "dismiss"
    SNOOZE = "snooze"
    EXPAND = "expand"


class UnknownDelivery(LookupError):
    """A response named a delivery the throttle does not have waiting for one."""


def require_aware(value: datetime, name: str = "now") -> datetime:
    """`value`, checked to carry a time zone (a naive time would compare wrongly with the stored ones).

    Raises:
        ValueError: `value` is naive.
    """
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be a timezone-aware datetime, got naive {value.isoformat()}")
    return value


def span(delta: timedelta) -> str:
    """A duration as people say it in a reason: "30 s", "5 min", "2 h", "1 h 30 min", "7 days"."""
    seconds = int(delta.total_seconds())
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 86400:
        hours, minutes = divmod(seconds // 60, 60)
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    days = seconds // 86400
    return f"{days} day" + ("s" if days != 1 else "")


@dataclass(frozen=True, kw_only=True, slots=True)
class Candidate:
    """Something a trigger thinks is worth telling the user; the gates decide whether, when and with what."""

    kind: str
    """The trigger type, e.g. "meeting_soon" or "mcp:github:pr_review"; dismissals and cooldowns are per kind."""
    tier: Tier
    title: str
    body: str
    created_at: datetime
    key: str = ""
    """What makes candidates related, so they are bundled into one delivery; empty means the kind."""
    payload: dict[str, object] = field(default_factory=dict, hash=False)
    """Whatever the trigger wants back when the user accepts (a ticket id, a meeting link)."""

    def __post_init__(self) -> None:
        check_tier(self.tier)
        require_aware(self.created_at, "created_at")
        if not self.kind:
            raise ValueError("a candidate needs a kind")
        if not self.key:
            object.__setattr__(self, "key", self.kind)


@dataclass(frozen=True, kw_only=True, slots=True)
class Delivery:
    """What reaches a client or the desktop: one or more related candidates as one notification."""

    id: str
    tier: Tier
    """The most important tier among its candidates, after any lowering for dismissals."""
    kind: str
    """The kind of its lead candidate (the first of the highest tier)."""
    key: str
    title: str
    body: str
    candidates: tuple[Candidate, ...]
    """In the order they were offered; at least one."""
    delivered_at: datetime


@dataclass(frozen=True, slots=True)
class Verdict:
    """A gate's answer when it stops a candidate (a gate that lets it through answers None)."""

    outcome: Outcome
    gate: Gate
    reason: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    """What the throttle did with some candidates and why, in words a client can show."""

    outcome: Outcome
    reason: str
    """E.g. "hourly cap for helpful reached (4/h)", "held: deep work in Code since 14:02"."""
    candidates: tuple[Candidate, ...]
    at: datetime
    gate: Gate | None = None
    """The gate that decided; None when delivered (every gate let it through)."""
    tier: Tier | None = None
    """The tier it went through the gates as, when one was settled."""
    delivery: Delivery | None = None
    """Set when the outcome is delivered."""

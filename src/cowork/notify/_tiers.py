"""Priority tiers: their order, and what each asks of the later gates.

One table (`TIER_RULES`) says which tiers wait out deep work and which wait for related notifications, so no gate
branches on a tier's name. Tiers are listed most important first; a tier "drops" to the next one down.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, cast

__all__ = ["TIERS", "TIER_RULES", "Tier", "TierRule", "check_tier", "highest", "lower"]

Tier = Literal["urgent", "helpful", "informational"]

TIERS: tuple[Tier, ...] = ("urgent", "helpful", "informational")
"""Most important first."""


@dataclass(frozen=True, slots=True)
class TierRule:
    """What the gates ask of one tier."""

    waits_out_deep_work: bool
    """Held while the user is in deep work, released at the next context switch."""
    bundles: bool
    """Waits the bundling window for related candidates; otherwise delivered at once."""


TIER_RULES: Mapping[Tier, TierRule] = {
    # Urgent things (a meeting in five minutes, an automation waiting for approval) lose their point if they wait.
    "urgent": TierRule(waits_out_deep_work=False, bundles=False),
    "helpful": TierRule(waits_out_deep_work=True, bundles=True),
    "informational": TierRule(waits_out_deep_work=True, bundles=True),
}


def check_tier(value: str) -> Tier:
    """The tier named by `value`.

    Raises:
        ValueError: `value` is not a tier.
    """
    if value not in TIER_RULES:
        raise ValueError(f"unknown tier {value!r}: expected one of {', '.join(TIERS)}")
    return cast(Tier, value)


def lower(tier: Tier) -> Tier | None:
    """The tier one step less important, or None below the last."""
    index = TIERS.index(tier) + 1
    return TIERS[index] if index < len(TIERS) else None


def highest(tiers: Iterable[Tier]) -> Tier:
    """The most important of `tiers` (at least one)."""
    return min(tiers, key=TIERS.index)

"""Budget caps and the two decisions made with them: refuse a call before it is made, warn when spend crosses
a share of a cap."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

from cowork.config import BudgetsConfig

__all__ = ["CAPS", "Budgets", "Cap", "Crossing", "Refusal", "Spend", "check", "crossings"]

Cap: TypeAlias = Literal["interaction", "daily", "weekly", "monthly"]
CAPS: tuple[Cap, ...] = ("interaction", "daily", "weekly", "monthly")
_LABELS: dict[Cap, str] = {
    "interaction": "per-request",
    "daily": "daily",
    "weekly": "weekly",
    "monthly": "monthly",
}


@dataclass(frozen=True, slots=True)
class Budgets:
    """USD caps (None: no cap) and the share of a cap at which to warn."""

    limits: Mapping[Cap, float | None]
    warn_at: float

    @classmethod
    def from_config(cls, config: BudgetsConfig, stored: Mapping[str, Any] | None = None) -> Budgets:
        """The configured caps, with what a client changed at run time (`budget/set`) on top."""
        limits: dict[Cap, float | None] = {
            "interaction": config.per_interaction_usd,
            "daily": config.daily_usd,
            "weekly": config.weekly_usd,
            "monthly": config.monthly_usd,
        }
        warn_at = config.warn_at
        for key, value in (stored or {}).items():
            if key == "warn_at" and isinstance(value, int | float):
                warn_at = float(value)
            elif key in limits and (value is None or isinstance(value, int | float)):
                limits[key] = None if value is None else float(value)
        return cls(limits, warn_at)

    def with_changes(self, changes: Mapping[str, float | None]) -> Budgets:
        limits = dict(self.limits)
        warn_at = self.warn_at
        for key, value in changes.items():
            if key == "warn_at":
                if value is not None:
                    warn_at = value
            else:
                limits[key] = value  # type: ignore[index]
        return replace(self, limits=limits, warn_at=warn_at)


@dataclass(frozen=True, slots=True)
class Spend:
    """What has been spent in each window, and by the current request."""

    by_cap: Mapping[Cap, float] = field(default_factory=dict)

    def __getitem__(self, cap: Cap) -> float:
        return self.by_cap.get(cap, 0.0)

    def plus(self, usd: float) -> Spend:
        return Spend({cap: self[cap] + usd for cap in CAPS})


@dataclass(frozen=True, slots=True)
class Refusal:
    """A call that would take spend over a cap: it is not made."""

    cap: Cap
    limit_usd: float
    spent_usd: float
    estimate_usd: float

    def message(self) -> str:
        return (
            f"This would go over the {_LABELS[self.cap]} budget: ${self.spent_usd:.2f} of ${self.limit_usd:.2f} "
            f"spent, and the next model call is estimated at ${self.estimate_usd:.2f}. Continue once (this request "
            "only), or stop? You can also raise the cap (/budget, budget/set) and resume."
        )

    def details(self) -> dict[str, Any]:
        return {
            "cap": self.cap,
            "limitUsd": round(self.limit_usd, 6),
            "spentUsd": round(self.spent_usd, 6),
            "estimateUsd": round(self.estimate_usd, 6),
        }


@dataclass(frozen=True, slots=True)
class Crossing:
    """Spend crossed the warning share of a cap."""

    cap: Cap
    limit_usd: float
    spent_usd: float
    fraction: float


def check(
    budgets: Budgets, spend: Spend, estimate_usd: float, *, allowed: frozenset[Cap] = frozenset()
) -> Refusal | None:
    """The first cap this call would take spend over (spent + estimate > cap), unless the user allowed it."""
    for cap in CAPS:
        limit = budgets.limits.get(cap)
        if limit is None or cap in allowed:
            continue
        if spend[cap] + estimate_usd > limit:
            return Refusal(cap, limit, spend[cap], estimate_usd)
    return None


def crossings(budgets: Budgets, before: Spend, after: Spend) -> list[Crossing]:
    """Caps whose warning share was reached by the spend between `before` and `after`."""
    found = []
    for cap in CAPS:
        limit = budgets.limits.get(cap)
        if not limit:
            continue
        threshold = limit * budgets.warn_at
        if before[cap] < threshold <= after[cap]:
            found.append(Crossing(cap, limit, after[cap], after[cap] / limit))
    return found

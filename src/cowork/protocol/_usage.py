"""Usage, cost and budgets on the wire."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, TypeAlias

from pydantic import Field

from ._base import Params, WireModel

__all__ = [
    "AskUsage",
    "BudgetCap",
    "BudgetSetParams",
    "BudgetSetResult",
    "BudgetStatus",
    "DayUsage",
    "ModelUsage",
    "OperationUsage",
    "SessionUsageParams",
    "SessionUsageResult",
    "UsageSummaryParams",
    "UsageSummaryResult",
    "UsageTotals",
]

BudgetCap: TypeAlias = Literal["interaction", "daily", "weekly", "monthly"]


class UsageTotals(WireModel):
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    unknown_cost_calls: int = Field(default=0, description="Calls to models without a known price (counted as 0).")


class ModelUsage(WireModel):
    provider: str
    model: str
    totals: UsageTotals


class OperationUsage(WireModel):
    """One user request (its turn and sub-agents)."""

    operation_id: str
    ask_id: str | None = None
    tier: str | None = None
    provider: str | None = None
    model: str | None = None
    status: str
    created_at: datetime
    totals: UsageTotals


class AskUsage(WireModel):
    """A retry group: a turn and its "try harder" retries."""

    ask_id: str
    operation_ids: list[str]
    cost_usd: float


class SessionUsageParams(Params):
    session_id: str = Field(min_length=1, max_length=200)


class SessionUsageResult(WireModel):
    session_id: str
    totals: UsageTotals
    by_model: list[ModelUsage]
    operations: list[OperationUsage]
    asks: list[AskUsage]


class BudgetStatus(WireModel):
    cap: BudgetCap
    limit_usd: float | None = Field(default=None, description="null: no cap.")
    spent_usd: float = Field(description="For `interaction`: the most expensive request today.")
    remaining_usd: float | None = None
    resets_at: datetime | None = Field(default=None, description="When the window starts again (not interaction).")


class DayUsage(WireModel):
    date: str = Field(description="The local calendar day, YYYY-MM-DD.")
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float


class UsageSummaryParams(Params):
    days: int = Field(default=30, ge=1, le=366, description="How many days back `days` and `byModel` cover.")


class UsageSummaryResult(WireModel):
    today: UsageTotals
    week: UsageTotals
    month: UsageTotals
    days: list[DayUsage] = Field(description="One entry per day with usage, oldest first.")
    by_model: list[ModelUsage]
    budgets: list[BudgetStatus]
    warn_at: float
    timezone: str


class BudgetSetParams(Params):
    """Change caps at run time (kept across restarts). Leave a field out to keep it; `null` (or naming the cap in
    `remove`) removes that cap."""

    per_interaction_usd: float | None = Field(default=None, ge=0, le=1_000_000)
    daily_usd: float | None = Field(default=None, ge=0, le=1_000_000)
    weekly_usd: float | None = Field(default=None, ge=0, le=1_000_000)
    monthly_usd: float | None = Field(default=None, ge=0, le=1_000_000)
    warn_at: float | None = Field(default=None, gt=0, lt=1)
    remove: list[BudgetCap] = Field(default_factory=list, max_length=4, description="Caps to remove (no cap).")
    reset: bool = Field(default=False, description="Go back to the configured caps first.")


class BudgetSetResult(WireModel):
    budgets: list[BudgetStatus]
    warn_at: float

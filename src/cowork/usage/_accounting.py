"""Budget accounting for one model call: refuse it before it is made if it would take spend over a cap, and record
what it cost (usage ledger, operation totals, `usage` and `budget_warning` events) once it was made."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, cast

from cowork.config import PriceOverride
from cowork.models import cost_of
from cowork.protocol import BudgetWarning, EventPayload, Usage
from cowork.store import Connection, UsageRow, repos

from ._budgets import Cap, Refusal, Spend, check, crossings
from ._service import UsageService

if TYPE_CHECKING:
    from pydantic_ai.usage import RequestUsage

__all__ = ["Charge", "ModelCall", "admit", "charge"]


@dataclass(frozen=True)
class ModelCall:
    """Who made a model call, and on which model."""

    session_id: str
    operation_id: str
    root_operation_id: str
    step: int
    provider: str
    model: str


@dataclass(frozen=True)
class Charge:
    """What one call cost: its price, the store change to commit with its events, and those events."""

    cost_usd: float
    mutate: Callable[[Connection], None]
    events: list[EventPayload]
    cost_known: bool = True
    """False when the price table does not know the model (`cost_usd` is then 0)."""


def admit(
    usage: UsageService, spend: Spend, *, provider: str, model: str, input_tokens: int, allowed: frozenset[str]
) -> Refusal | None:
    """The cap a call of about `input_tokens` would take spend over (None: it may be made).

    Args:
        usage: the service holding the caps and the price table.
        spend: what was spent so far in each window and by the request.
        provider: the call's provider.
        model: the call's model.
        input_tokens: the request's estimated size.
        allowed: caps the user said to go past for this request ("continue once").

    Returns:
        The refusal, or None when the call fits every cap.
    """
    estimate = usage.estimate(provider, model, input_tokens=input_tokens)
    return check(usage.budgets, spend, estimate.usd, allowed=cast(frozenset[Cap], allowed))


def charge(
    usage: UsageService,
    call: ModelCall,
    request: RequestUsage,
    spend: Spend,
    now: datetime,
    *,
    prices: Mapping[str, PriceOverride] | None = None,
) -> Charge:
    """One model call's usage and cost: the store changes (usage ledger, operation totals) and the events (`usage`,
    and `budget_warning` for each cap whose warning share it crossed).

    Args:
        usage: the service holding the caps.
        call: who made the call.
        request: the tokens the provider reported.
        spend: what was spent before this call.
        now: when it was made.
        prices: price overrides from the configuration.
    """
    reasoning_tokens = max(request.output_reasoning_tokens, int(request.details.get("reasoning_tokens", 0)))
    cost = cost_of(
        call.provider,
        call.model,
        input_tokens=request.input_tokens,
        output_tokens=request.output_tokens,
        cached_tokens=request.cache_read_tokens,
        overrides=prices,
    )
    row = UsageRow(
        session_id=call.session_id,
        operation_id=call.operation_id,
        root_operation_id=call.root_operation_id,
        step=call.step,
        provider=call.provider,
        model=call.model,
        input_tokens=request.input_tokens,
        output_tokens=request.output_tokens,
        cached_tokens=request.cache_read_tokens,
        reasoning_tokens=reasoning_tokens,
        cost_usd=cost.usd,
        cost_known=cost.known,
        created_at=now,
    )
    record = usage.record(row)

    def mutate(conn: Connection) -> None:
        record(conn)
        repos.operations.add_usage(
            conn,
            call.operation_id,
            step_count=call.step,
            now=now,
            input_tokens=row.input_tokens,
            output_tokens=row.output_tokens,
            cached_tokens=row.cached_tokens,
            reasoning_tokens=row.reasoning_tokens,
            cost_usd=row.cost_usd,
        )

    after = spend.plus(cost.usd)
    events: list[EventPayload] = [
        Usage(
            operation_id=call.operation_id,
            step=call.step,
            provider=call.provider,
            model=call.model,
            input_tokens=row.input_tokens,
            output_tokens=row.output_tokens,
            cached_tokens=row.cached_tokens,
            reasoning_tokens=row.reasoning_tokens,
            cost_usd=cost.usd,
            cost_known=cost.known,
            interaction_cost_usd=round(after["interaction"], 6),
            day_cost_usd=round(after["daily"], 6),
        )
    ]
    events += [
        BudgetWarning(
            operation_id=call.operation_id,
            cap=crossing.cap,
            limit_usd=crossing.limit_usd,
            spent_usd=round(crossing.spent_usd, 6),
            fraction=round(crossing.fraction, 4),
        )
        for crossing in crossings(usage.budgets, spend, after)
    ]
    return Charge(cost.usd, mutate, events, cost_known=cost.known)

"""The usage service: records every model call's tokens and cost, answers what was spent where, and keeps the
budget caps (configured, then changed at run time with `budget/set`)."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from cowork.config import CoworkConfig
from cowork.models import Cost, estimate_cost
from cowork.protocol import (
    AskUsage,
    BudgetSetParams,
    BudgetSetResult,
    BudgetStatus,
    DayUsage,
    ModelUsage,
    OperationUsage,
    SessionUsageResult,
    UsageSummaryResult,
    UsageTotals,
)
from cowork.store import Connection, Database, UsageRow, repos
from cowork.store.repos.usage import Totals

from ._budgets import CAPS, Budgets, Cap, Spend
from ._tally import Noted, Tally
from ._windows import local_day, local_midnight, windows_at

__all__ = ["UsageService"]

_SETTINGS_KEY = "budgets"
_FIELDS: dict[str, str] = {
    "per_interaction_usd": "interaction",
    "daily_usd": "daily",
    "weekly_usd": "weekly",
    "monthly_usd": "monthly",
    "warn_at": "warn_at",
}


def _wire(totals: Totals) -> UsageTotals:
    return UsageTotals(
        calls=totals.calls,
        input_tokens=totals.input_tokens,
        output_tokens=totals.output_tokens,
        cached_tokens=totals.cached_tokens,
        reasoning_tokens=totals.reasoning_tokens,
        cost_usd=round(totals.cost_usd, 6),
        unknown_cost_calls=totals.unknown_cost_calls,
    )


class UsageService:
    """Spend per call, request, session and day; budgets."""

    def __init__(
        self,
        db: Database,
        config: CoworkConfig,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        tz: tzinfo | None = None,
        tally: Tally | None = None,
    ) -> None:
        self._db = db
        self._config = config
        self._clock = clock
        self._tz = tz
        self._lock = asyncio.Lock()
        self._tally = tally or Tally()
        self.budgets = Budgets.from_config(config.budgets)

    async def load(self) -> None:
        """Read the caps a client changed in an earlier run."""
        stored = await self._db.read(lambda conn: repos.settings.get(conn, _SETTINGS_KEY))
        self.budgets = Budgets.from_config(self._config.budgets, stored if isinstance(stored, dict) else None)

    # -- the runtime's side -------------------------------------------------------------------------------------

    async def spend(self, root_operation_id: str | None) -> Spend:
        """Spend today, this week, this month and (given its id) by one request: from memory, reading the ledger
        when a window started, every few seconds, and on a request's first call (see `Tally`)."""
        starts = dict(windows_at(self._clock(), self._tz).starts())
        tally = self._tally
        if tally.stale(starts):
            values = await self._db.read(
                lambda conn: repos.usage.spend_since(conn, starts, root_operation_id=root_operation_id)
            )
            requests = {root_operation_id: values["interaction"]} if root_operation_id is not None else {}
            tally.reset(starts, {name: values[name] for name in starts}, int(values["last_id"]), requests)
        elif root_operation_id is not None and not tally.knows(root_operation_id):
            up_to = tally.up_to()
            spent = await self._db.read(lambda conn: repos.usage.request_spend(conn, root_operation_id, up_to_id=up_to))
            tally.add_request(root_operation_id, spent, up_to)
            if not tally.knows(root_operation_id):  # the sums were read again meanwhile: read them once more
                return await self.spend(root_operation_id)
        values = tally.spent(root_operation_id)
        return Spend({cap: values.get(cap, 0.0) for cap in CAPS})

    def estimate(self, provider: str, model: str, *, input_tokens: int) -> Cost:
        return estimate_cost(
            provider,
            model,
            input_tokens=input_tokens,
            output_tokens=self._config.budgets.estimated_output_tokens,
            overrides=self._config.prices,
        )

    def record(self, row: UsageRow) -> Callable[[Connection], None]:
        """The store change that records one call (run it in the journal's transaction with its event); it also
        adds the call to the spend kept in memory."""
        tally = self._tally

        def write(conn: Connection) -> None:
            row_id = repos.usage.insert_returning_id(conn, row)
            tally.note(Noted(row_id, row.created_at, row.root_operation_id, row.cost_usd))

        return write

    # -- budgets ------------------------------------------------------------------------------------------------

    async def set_budgets(self, params: BudgetSetParams) -> BudgetSetResult:
        """Apply `budget/set`: fields given change (null removes a cap), others stay."""
        changes: dict[str, float | None] = {
            _FIELDS[name]: getattr(params, name) for name in params.model_fields_set if name in _FIELDS
        }
        if "warn_at" in changes and changes["warn_at"] is None:
            del changes["warn_at"]  # there is always a warning share
        for cap in params.remove:
            changes[cap] = None
        async with self._lock:
            stored: dict[str, Any] = {} if params.reset else dict(await self._stored())
            stored.update(changes)
            now = datetime.now(UTC)

            def write(conn: Connection) -> None:
                if stored:
                    repos.settings.put(conn, _SETTINGS_KEY, stored, now=now)
                else:
                    repos.settings.delete(conn, _SETTINGS_KEY)

            await self._db.write(write)
            self.budgets = Budgets.from_config(self._config.budgets, stored)
        return BudgetSetResult(budgets=await self.budget_statuses(), warn_at=self.budgets.warn_at)

    async def _stored(self) -> dict[str, Any]:
        stored = await self._db.read(lambda conn: repos.settings.get(conn, _SETTINGS_KEY))
        return stored if isinstance(stored, dict) else {}

    async def budget_statuses(self) -> list[BudgetStatus]:
        now = self._clock()
        windows = windows_at(now, self._tz)
        spend = await self.spend(None)
        costliest = await self._db.read(lambda conn: repos.usage.costliest_request_since(conn, windows.day))
        resets = windows.resets()
        statuses = []
        for cap in CAPS:
            limit = self.budgets.limits.get(cap)
            spent = costliest if cap == "interaction" else spend[cap]
            statuses.append(
                BudgetStatus(
                    cap=cap,
                    limit_usd=limit,
                    spent_usd=round(spent, 6),
                    remaining_usd=None if limit is None else round(max(0.0, limit - spent), 6),
                    resets_at=None if cap == "interaction" else resets[cap],
                )
            )
        return statuses

    # -- reports ------------------------------------------------------------------------------------------------

    async def session_usage(self, session_id: str) -> SessionUsageResult:
        def read(conn: Connection) -> tuple[Any, ...]:
            return (
                repos.usage.totals(conn, session_id=session_id),
                repos.usage.by_model(conn, session_id=session_id),
                repos.usage.by_operation(conn, session_id),
                {op.id: op for op in repos.operations.for_session(conn, session_id) if op.parent_operation_id is None},
            )

        totals, models, operations, ops = await self._db.read(read)
        per_operation = []
        asks: defaultdict[str, list[tuple[str, float]]] = defaultdict(list)
        for op_id, op_totals in operations:
            op = ops.get(op_id)
            if op is None:
                continue
            per_operation.append(
                OperationUsage(
                    operation_id=op_id,
                    ask_id=op.ask_id,
                    tier=op.tier,
                    provider=op.provider,
                    model=op.model,
                    status=op.status,
                    created_at=op.created_at,
                    totals=_wire(op_totals),
                )
            )
            asks[op.ask_id or op_id].append((op_id, op_totals.cost_usd))
        return SessionUsageResult(
            session_id=session_id,
            totals=_wire(totals),
            by_model=[ModelUsage(provider=p, model=m, totals=_wire(t)) for p, m, t in models],
            operations=per_operation,
            asks=[
                AskUsage(
                    ask_id=ask, operation_ids=[o for o, _ in members], cost_usd=round(sum(c for _, c in members), 6)
                )
                for ask, members in asks.items()
                if len(members) > 1
            ],
        )

    async def summary(self, days: int) -> UsageSummaryResult:
        now = self._clock()
        windows = windows_at(now, self._tz)
        since = local_midnight(local_day(now, self._tz) - timedelta(days=days - 1), self._tz)

        def read(conn: Connection) -> tuple[Any, ...]:
            return (
                repos.usage.totals(conn, since=windows.day),
                repos.usage.totals(conn, since=windows.week),
                repos.usage.totals(conn, since=windows.month),
                repos.usage.by_day(conn, since=since, until=windows.next_day),
                repos.usage.by_model(conn, since=since),
            )

        today, week, month, calls, models = await self._db.read(read)
        per_day: dict[str, list[float]] = {}
        for moment, cost, inp, out in calls:
            bucket = per_day.setdefault(local_day(moment, self._tz).isoformat(), [0, 0, 0, 0.0])
            bucket[0] += 1
            bucket[1] += inp
            bucket[2] += out
            bucket[3] += cost
        local_now = now.astimezone(self._tz) if self._tz is not None else now.astimezone()
        return UsageSummaryResult(
            today=_wire(today),
            week=_wire(week),
            month=_wire(month),
            days=[
                DayUsage(
                    date=day, calls=int(b[0]), input_tokens=int(b[1]), output_tokens=int(b[2]), cost_usd=round(b[3], 6)
                )
                for day, b in sorted(per_day.items())
            ],
            by_model=[ModelUsage(provider=p, model=m, totals=_wire(t)) for p, m, t in models],
            budgets=await self.budget_statuses(),
            warn_at=self.budgets.warn_at,
            timezone=local_now.tzname() or "local",
        )

    def limit(self, cap: Cap) -> float | None:
        return self.budgets.limits.get(cap)

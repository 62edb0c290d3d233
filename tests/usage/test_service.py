"""The usage service against a real SQLite store: spend per window and request, reports, and run-time caps."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from cowork.config import CoworkConfig
from cowork.protocol import (
    AskUsage,
    BudgetSetParams,
    BudgetStatus,
    DayUsage,
    ModelUsage,
    OperationUsage,
    SessionUsageResult,
    UsageTotals,
)
from cowork.store import Database, OperationRow, SessionRow, UsageRow, repos
from cowork.usage import Budgets, Spend, Tally, UsageService
from cowork.usage._tally import Noted

pytestmark = pytest.mark.anyio

TOKYO = ZoneInfo("Asia/Tokyo")  # UTC+9, no daylight saving time
NOW = datetime(2026, 11, 18, 12, 0, tzinfo=TOKYO)  # a Wednesday


def local(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=TOKYO)  # type: ignore[arg-type,misc]  # mypy cannot split *parts into year, month…


def service(db: Database, config: CoworkConfig | None = None, now: datetime = NOW) -> UsageService:
    return UsageService(db, config or CoworkConfig(), clock=lambda: now, tz=TOKYO)


def usage(
    cost: float,
    when: datetime,
    *,
    session: str = "s1",
    op: str = "op1",
    root: str | None = None,
    model: str = "gpt-x",
    provider: str = "openai",
    tokens: tuple[int, int] = (100, 10),
    known: bool = True,
) -> UsageRow:
    return UsageRow(
        session_id=session,
        operation_id=op,
        root_operation_id=root or op,
        step=1,
        provider=provider,
        model=model,
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        cached_tokens=0,
        reasoning_tokens=0,
        cost_usd=cost,
        cost_known=known,
        created_at=when,
    )


def insert(db: Database, *rows: UsageRow) -> None:
    def write(conn: object) -> None:
        for row in rows:
            repos.usage.insert(conn, row)  # type: ignore[arg-type]

    db.write_sync(write)


# -- spend per window and per request -------------------------------------------------------------------------


async def test_spend_counts_each_window_from_its_local_start(db: Database) -> None:
    insert(
        db,
        usage(0.01, local(2026, 11, 18, 0, 0)),  # today, at the first instant
        usage(0.02, local(2026, 11, 18, 11, 59)),  # today
        usage(0.10, local(2026, 11, 17, 23, 59, 59)),  # yesterday, this week
        usage(0.20, local(2026, 11, 16, 0, 0)),  # Monday, the week's first instant
        usage(1.00, local(2026, 11, 15, 23, 59, 59)),  # last Sunday: last week, this month
        usage(2.00, local(2026, 11, 1, 0, 0)),  # the month's first instant
        usage(4.00, local(2026, 10, 31, 23, 59, 59)),  # last month
    )
    spend = await service(db).spend(None)
    assert isinstance(spend, Spend)
    assert dict(spend.by_cap) == pytest.approx({"interaction": 0.0, "daily": 0.03, "weekly": 0.33, "monthly": 3.33})


async def test_a_day_boundary_in_the_users_zone_not_utc(db: Database) -> None:
    # 23:30 UTC on the 17th is 08:30 on the 18th in Tokyo: today there, yesterday in UTC.
    insert(db, usage(0.5, datetime(2026, 11, 17, 23, 30, tzinfo=UTC)))
    assert (await service(db).spend(None))["daily"] == pytest.approx(0.5)
    utc = UsageService(db, CoworkConfig(), clock=lambda: NOW, tz=UTC)
    assert (await utc.spend(None))["daily"] == 0.0


async def test_yesterdays_and_last_weeks_spend_is_gone_after_the_reset(db: Database) -> None:
    insert(db, usage(1.0, local(2026, 11, 22, 23, 0)))  # Sunday evening
    sunday = await service(db, now=local(2026, 11, 22, 23, 59)).spend(None)
    monday = await service(db, now=local(2026, 11, 23, 0, 1)).spend(None)
    assert (sunday["daily"], sunday["weekly"], sunday["monthly"]) == (1.0, 1.0, 1.0)
    assert (monday["daily"], monday["weekly"], monday["monthly"]) == (0.0, 0.0, 1.0)
    december = await service(db, now=local(2026, 12, 1, 0, 0)).spend(None)
    assert december == Spend({"interaction": 0.0, "daily": 0.0, "weekly": 0.0, "monthly": 0.0})


async def test_interaction_spend_is_the_requests_calls_and_its_sub_agents(db: Database) -> None:
    insert(
        db,
        usage(0.10, local(2026, 11, 18, 11, 0), op="turn"),
        usage(0.20, local(2026, 11, 18, 11, 1), op="child", root="turn"),  # a sub-agent working for it
        usage(0.40, local(2026, 11, 18, 11, 2), op="grandchild", root="turn"),
        usage(0.80, local(2026, 11, 18, 11, 3), op="other"),  # another request
        usage(1.60, local(2026, 10, 30, 23, 0), op="old", root="turn"),  # last month, still this request
    )
    spend = await service(db).spend("turn")
    assert spend["interaction"] == pytest.approx(2.3)
    assert spend["daily"] == pytest.approx(1.5) and spend["monthly"] == pytest.approx(1.5)
    assert (await service(db).spend("nobody"))["interaction"] == 0.0
    assert (await service(db).spend(None))["interaction"] == 0.0


async def test_estimate_prices_the_input_and_the_assumed_output(db: Database) -> None:
    config = CoworkConfig.model_validate(
        {
            "prices": {"openai:gpt-x": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}},
            "budgets": {"estimated_output_tokens": 2000},
        }
    )
    cost = service(db, config).estimate("openai", "gpt-x", input_tokens=10_000)
    assert cost.known and cost.usd == pytest.approx(0.03 + 0.03)
    unknown = service(db).estimate("openai", "no-such-model-anywhere", input_tokens=10_000)
    assert not unknown.known and unknown.usd == 0.0


# -- reports --------------------------------------------------------------------------------------------------


def session_row(session_id: str) -> SessionRow:
    return SessionRow(
        id=session_id, title="t", workspace="/w", provider=None, model=None, created_at=NOW, updated_at=NOW
    )


def operation(
    op_id: str,
    when: datetime,
    *,
    parent: str | None = None,
    ask_id: str | None = None,
    status: str = "done",
    session: str = "s1",
) -> OperationRow:
    return OperationRow(
        id=op_id,
        session_id=session,
        client_message_id=None,
        origin="sub_agent" if parent else "chat",
        status=status,
        provider="openai",
        model="gpt-x",
        created_at=when,
        updated_at=when,
        parent_operation_id=parent,
        ask_id=ask_id,
        tier="fast" if ask_id == "first" else None,
    )


def totals(calls: int, inp: int, out: int, cost: float, unknown: int = 0) -> UsageTotals:
    return UsageTotals(calls=calls, input_tokens=inp, output_tokens=out, cost_usd=cost, unknown_cost_calls=unknown)


async def test_session_usage_by_model_by_request_and_by_retry_group(db: Database) -> None:
    t0 = local(2026, 11, 18, 9, 0)

    def setup(conn: object) -> None:
        for sid in ("s1", "s2"):
            repos.sessions.insert(conn, session_row(sid))  # type: ignore[arg-type]
        for row in (
            operation("a", t0, ask_id="first"),
            operation("sub", t0 + timedelta(minutes=1), parent="a"),
            operation("b", t0 + timedelta(minutes=2), ask_id="first", status="error"),  # a "try harder" retry
            operation("c", t0 + timedelta(minutes=3)),
            operation("elsewhere", t0, session="s2"),
        ):
            repos.operations.insert(conn, row)  # type: ignore[arg-type]

    db.write_sync(setup)
    insert(
        db,
        usage(0.25, t0, op="a", tokens=(1000, 100)),
        usage(0.5, t0 + timedelta(minutes=1), op="sub", root="a", model="gpt-mini", tokens=(2000, 200)),
        usage(1.0, t0 + timedelta(minutes=2), op="b", tokens=(4000, 400)),
        usage(0.0, t0 + timedelta(minutes=3), op="c", model="local-x", provider="ollama", tokens=(10, 1), known=False),
        usage(8.0, t0, session="s2", op="elsewhere"),
    )
    result = await service(db).session_usage("s1")
    assert result == SessionUsageResult(
        session_id="s1",
        totals=totals(4, 7010, 701, 1.75, unknown=1),
        by_model=[
            ModelUsage(provider="ollama", model="local-x", totals=totals(1, 10, 1, 0.0, unknown=1)),
            ModelUsage(provider="openai", model="gpt-mini", totals=totals(1, 2000, 200, 0.5)),
            ModelUsage(provider="openai", model="gpt-x", totals=totals(2, 5000, 500, 1.25)),
        ],
        operations=[
            OperationUsage(
                operation_id="a",
                ask_id="first",
                tier="fast",
                provider="openai",
                model="gpt-x",
                status="done",
                created_at=t0,
                totals=totals(2, 3000, 300, 0.75),  # with its sub-agent's call
            ),
            OperationUsage(
                operation_id="b",
                ask_id="first",
                tier="fast",
                provider="openai",
                model="gpt-x",
                status="error",
                created_at=t0 + timedelta(minutes=2),
                totals=totals(1, 4000, 400, 1.0),
            ),
            OperationUsage(
                operation_id="c",
                provider="openai",
                model="gpt-x",
                status="done",
                created_at=t0 + timedelta(minutes=3),
                totals=totals(1, 10, 1, 0.0, unknown=1),
            ),
        ],
        asks=[AskUsage(ask_id="first", operation_ids=["a", "b"], cost_usd=1.75)],
    )
    empty = await service(db).session_usage("nothing-here")
    assert empty.totals == UsageTotals() and empty.by_model == [] and empty.operations == [] and empty.asks == []


async def test_summary_buckets_calls_by_local_day(db: Database) -> None:
    insert(
        db,
        usage(0.5, datetime(2026, 11, 17, 15, 0, tzinfo=UTC), tokens=(10, 1)),  # 00:00 on the 18th in Tokyo
        usage(0.25, datetime(2026, 11, 17, 14, 59, 59, tzinfo=UTC), tokens=(20, 2)),  # 23:59:59 on the 17th
        usage(0.125, local(2026, 11, 17, 8, 0), tokens=(40, 4), model="gpt-mini"),
        usage(1.0, local(2026, 11, 12, 0, 0), tokens=(80, 8)),  # the first day of a 7-day summary
        usage(2.0, local(2026, 11, 11, 23, 59), tokens=(160, 16)),  # one day too early
        usage(4.0, local(2026, 10, 31, 12, 0), tokens=(320, 32)),  # last month
    )
    summary = await service(db).summary(7)
    assert summary.days == [
        DayUsage(date="2026-11-12", calls=1, input_tokens=80, output_tokens=8, cost_usd=1.0),
        DayUsage(date="2026-11-17", calls=2, input_tokens=60, output_tokens=6, cost_usd=0.375),
        DayUsage(date="2026-11-18", calls=1, input_tokens=10, output_tokens=1, cost_usd=0.5),
    ]
    assert summary.by_model == [
        ModelUsage(provider="openai", model="gpt-mini", totals=totals(1, 40, 4, 0.125)),
        ModelUsage(provider="openai", model="gpt-x", totals=totals(3, 110, 11, 1.75)),
    ]
    assert summary.today == totals(1, 10, 1, 0.5)
    assert summary.week == totals(3, 70, 7, 0.875)
    assert summary.month == totals(5, 310, 31, 3.875)
    assert summary.timezone == "JST" and summary.warn_at == 0.8
    assert [d.date for d in (await service(db).summary(1)).days] == ["2026-11-18"]
    everything = await service(db).summary(366)
    assert [d.date for d in everything.days] == ["2026-10-31", "2026-11-11", "2026-11-12", "2026-11-17", "2026-11-18"]


async def test_budget_statuses_show_spend_remaining_and_resets(db: Database) -> None:
    insert(
        db,
        usage(0.3, local(2026, 11, 18, 9, 0), op="a"),
        usage(0.1, local(2026, 11, 18, 9, 1), op="sub", root="a"),
        usage(0.2, local(2026, 11, 18, 10, 0), op="b"),
        usage(0.9, local(2026, 11, 17, 10, 0), op="yesterday"),  # costlier, but not today
        usage(20.0, local(2026, 11, 2, 10, 0), op="early"),
    )
    config = CoworkConfig.model_validate({"budgets": {"weekly_usd": None}})
    assert await service(db, config).budget_statuses() == [
        BudgetStatus(cap="interaction", limit_usd=0.5, spent_usd=0.4, remaining_usd=0.1, resets_at=None),
        BudgetStatus(cap="daily", limit_usd=10.0, spent_usd=0.6, remaining_usd=9.4, resets_at=local(2026, 11, 19)),
        BudgetStatus(cap="weekly", limit_usd=None, spent_usd=1.5, remaining_usd=None, resets_at=local(2026, 11, 23)),
        BudgetStatus(cap="monthly", limit_usd=200.0, spent_usd=21.5, remaining_usd=178.5, resets_at=local(2026, 12, 1)),
    ]


@pytest.fixture
def new_york_machine(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The machine's own time zone (what the server uses: no `tz`) set to New York for one test."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("new_york_machine")
async def test_the_machine_zone_across_a_daylight_saving_change(db: Database) -> None:
    # Summer time ended on 1 November: the 31st and the 1st began at 04:00 UTC, the 3rd at 05:00 UTC.
    insert(
        db,
        usage(1.0, datetime(2026, 10, 31, 4, 30, tzinfo=UTC)),  # 00:30 on the 31st
        usage(2.0, datetime(2026, 11, 1, 4, 30, tzinfo=UTC)),  # 00:30 on the 1st
    )
    svc = UsageService(db, CoworkConfig(), clock=lambda: datetime(2026, 11, 3, 15, tzinfo=UTC))
    assert (await svc.spend(None))["monthly"] == 2.0
    assert [(d.date, d.cost_usd) for d in (await svc.summary(4)).days] == [("2026-10-31", 1.0), ("2026-11-01", 2.0)]


# -- budgets changed at run time ------------------------------------------------------------------------------


def limits(svc: UsageService) -> dict[str, float | None]:
    return {str(cap): limit for cap, limit in svc.budgets.limits.items()}


async def test_set_budgets_changes_only_the_fields_given_and_survives_a_restart(db: Database) -> None:
    svc = service(db)
    result = await svc.set_budgets(BudgetSetParams(daily_usd=2.5, warn_at=0.5))
    assert result.warn_at == 0.5
    assert [(s.cap, s.limit_usd) for s in result.budgets] == [
        ("interaction", 0.5),
        ("daily", 2.5),
        ("weekly", 50.0),
        ("monthly", 200.0),
    ]
    await svc.set_budgets(BudgetSetParams.model_validate({"monthlyUsd": 300}))  # the wire's field names
    assert limits(svc) == {"interaction": 0.5, "daily": 2.5, "weekly": 50.0, "monthly": 300.0}

    again = service(db)  # a new process on the same store
    assert again.budgets == Budgets.from_config(CoworkConfig().budgets)  # until it loads
    await again.load()
    assert (
        again.budgets
        == svc.budgets
        == Budgets({"interaction": 0.5, "daily": 2.5, "weekly": 50.0, "monthly": 300.0}, 0.5)
    )


async def test_null_removes_a_cap_and_reset_goes_back_to_the_config(db: Database) -> None:
    svc = service(db)
    await svc.set_budgets(BudgetSetParams.model_validate({"perInteractionUsd": None, "weeklyUsd": 1, "warnAt": None}))
    assert limits(svc) == {"interaction": None, "daily": 10.0, "weekly": 1.0, "monthly": 200.0}
    assert svc.budgets.warn_at == 0.8  # a null warning share keeps the current one
    statuses = {s.cap: s for s in await svc.budget_statuses()}
    assert statuses["interaction"].limit_usd is None and statuses["interaction"].remaining_usd is None

    reloaded = service(db)
    await reloaded.load()
    assert limits(reloaded)["interaction"] is None  # "no cap" is kept, not mistaken for "not set"

    await svc.set_budgets(BudgetSetParams(reset=True, daily_usd=3.0))  # reset, then apply the change
    assert limits(svc) == {"interaction": 0.5, "daily": 3.0, "weekly": 50.0, "monthly": 200.0}
    await svc.set_budgets(BudgetSetParams(reset=True))
    assert svc.budgets == Budgets.from_config(CoworkConfig().budgets)
    assert db.read_sync(lambda conn: repos.settings.get(conn, "budgets")) is None
    fresh = service(db)
    await fresh.load()
    assert fresh.budgets == svc.budgets


async def test_set_budgets_starts_from_the_configured_caps(db: Database) -> None:
    config = CoworkConfig.model_validate({"budgets": {"daily_usd": 1.0, "warn_at": 0.9}})
    svc = service(db, config)
    await svc.set_budgets(BudgetSetParams(weekly_usd=7.0))
    assert svc.budgets == Budgets({"interaction": 0.5, "daily": 1.0, "weekly": 7.0, "monthly": 200.0}, 0.9)


@pytest.mark.parametrize(
    "params",
    [
        {"dailyUsd": -0.01},
        {"weeklyUsd": 1_000_001},
        {"monthlyUsd": "lots"},
        {"perInteractionUsd": float("nan")},
        {"dailyUsd": float("inf")},
        {"warnAt": 0},
        {"warnAt": 1},
        {"warnAt": 1.5},
        {"daily": 5},  # not a field
        {"reset": "yes please"},
    ],
)
def test_bad_values_are_refused_by_the_params(params: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        BudgetSetParams.model_validate(params)


def test_zero_is_a_cap() -> None:
    assert BudgetSetParams.model_validate({"dailyUsd": 0}).daily_usd == 0.0


# -- spend kept in memory between reads of the ledger ----------------------------------------------------------


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def record(db: Database, svc: UsageService, row: UsageRow) -> None:
    db.write_sync(svc.record(row))


async def test_spend_adds_the_calls_this_process_records_without_reading_again(db: Database) -> None:
    clock = Clock()
    svc = UsageService(db, CoworkConfig(), clock=lambda: NOW, tz=TOKYO, tally=Tally(refresh_seconds=5, monotonic=clock))
    insert(db, usage(1.0, local(2026, 11, 18, 9, 0), op="turn"))
    assert (await svc.spend("turn"))["daily"] == 1.0  # read from the ledger
    record(db, svc, usage(0.25, local(2026, 11, 18, 11, 0), op="turn"))
    insert(db, usage(4.0, local(2026, 11, 18, 11, 1), op="elsewhere"))  # another process's call: not seen yet
    spend = await svc.spend("turn")
    assert (spend["interaction"], spend["daily"], spend["monthly"]) == (1.25, 1.25, 1.25)
    clock.now = 6.0  # read again: the other process's call is seen, this one's is not counted twice
    spend = await svc.spend("turn")
    assert (spend["interaction"], spend["daily"], spend["monthly"]) == (1.25, 5.25, 5.25)


async def test_a_requests_spend_is_read_on_its_first_call_then_kept(db: Database) -> None:
    svc = service(db)
    insert(db, usage(0.5, local(2026, 11, 18, 9, 0), op="resumed"))  # a request from before (say, a restart)
    assert (await svc.spend(None))["daily"] == 0.5
    record(db, svc, usage(0.1, local(2026, 11, 18, 11, 0), op="resumed"))
    assert (await svc.spend("resumed"))["interaction"] == pytest.approx(0.6)
    record(db, svc, usage(0.2, local(2026, 11, 18, 11, 1), op="child", root="resumed"))
    assert (await svc.spend("resumed"))["interaction"] == pytest.approx(0.8)
    assert (await svc.spend("another"))["interaction"] == 0.0


async def test_a_new_day_reads_the_ledger_again(db: Database) -> None:
    now = [local(2026, 11, 18, 23, 59)]
    svc = UsageService(db, CoworkConfig(), clock=lambda: now[0], tz=TOKYO)
    record(db, svc, usage(1.0, local(2026, 11, 18, 23, 0)))
    assert (await svc.spend(None))["daily"] == 1.0
    now[0] = local(2026, 11, 19, 0, 1)
    spend = await svc.spend(None)
    assert (spend["daily"], spend["weekly"]) == (0.0, 1.0)


def test_a_row_noted_and_read_is_counted_once() -> None:
    tally = Tally()
    starts = {"daily": local(2026, 11, 18, 0, 0)}
    tally.reset(starts, {"daily": 1.0}, up_to=3, requests={})
    tally.note(Noted(4, local(2026, 11, 18, 10, 0), "r", 0.5))
    tally.note(Noted(4, local(2026, 11, 18, 10, 0), "r", 0.5))  # the same write tried again
    assert tally.spent("r") == {"daily": 1.5, "interaction": 0.5}
    tally.reset(starts, {"daily": 1.5}, up_to=4, requests={"r": 0.5})  # a read that already holds row 4
    assert tally.spent("r") == {"daily": 1.5, "interaction": 0.5}


def test_a_row_noted_before_the_first_read_is_counted_unless_the_read_holds_it() -> None:
    starts = {"daily": local(2026, 11, 18, 0, 0)}
    early = Noted(7, local(2026, 11, 18, 10, 0), "r", 0.5)
    missed, held = Tally(), Tally()
    for tally in (missed, held):
        tally.note(early)
    missed.reset(starts, {"daily": 1.0}, up_to=6, requests={"r": 0.0})  # read before row 7 was committed
    held.reset(starts, {"daily": 1.5}, up_to=7, requests={"r": 0.5})
    assert missed.spent("r") == held.spent("r") == {"daily": 1.5, "interaction": 0.5}

"""Cron automations on a controlled clock: on-time fires, catch-up after downtime (skip, once, all), no double runs
across ticks, restarts and two schedulers racing on one store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cowork.automations import CronTrigger, parse_definition, plan_fires
from cowork.core import Core
from cowork.store import repos
from cowork.testing.core import CoreHarness

pytestmark = pytest.mark.anyio

NINE = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)  # a Monday


def cron(expression: str = "0 9 * * *", catch_up: str = "once", timezone: str = "UTC") -> CronTrigger:
    return CronTrigger.model_validate({"type": "cron", "expression": expression, "timezone": timezone,
                                       "catchUp": catch_up})  # fmt: skip


def test_nothing_is_due_before_the_next_fire_time() -> None:
    plan = plan_fires(cron(), NINE, NINE - timedelta(seconds=1))
    assert plan.fires == [] and plan.next_at == NINE


def test_an_on_time_fire_runs_once_and_moves_to_the_next_day() -> None:
    plan = plan_fires(cron(), NINE, NINE + timedelta(seconds=5))
    assert [f.at for f in plan.fires] == [NINE] and plan.fires[0].missed == 0
    assert plan.next_at == NINE + timedelta(days=1)


@pytest.mark.parametrize(
    ("policy", "fires", "missed", "skipped"),
    [("skip", [], 0, 3), ("once", [NINE + timedelta(days=2)], 2, 0),
     ("all", [NINE, NINE + timedelta(days=1), NINE + timedelta(days=2)], 0, 0)],
)  # fmt: skip
def test_catch_up_after_downtime(policy: str, fires: list[datetime], missed: int, skipped: int) -> None:
    now = NINE + timedelta(days=2, hours=5)  # down from before Monday 9:00 until Wednesday 14:00
    plan = plan_fires(cron(catch_up=policy), NINE, now)
    assert [f.at for f in plan.fires] == fires
    assert sum(f.missed for f in plan.fires) == missed and plan.skipped == skipped
    assert plan.next_at == NINE + timedelta(days=3)


def test_skip_still_runs_a_fire_that_is_on_time() -> None:
    now = NINE + timedelta(days=2, minutes=1)
    plan = plan_fires(cron(catch_up="skip"), NINE, now)
    assert [f.at for f in plan.fires] == [NINE + timedelta(days=2)] and plan.skipped == 2


def test_the_time_zone_is_the_triggers() -> None:
    paris = cron("30 8 * * 1-5", timezone="Europe/Paris")
    after = paris.next_after(datetime(2026, 11, 27, 12, 0, tzinfo=UTC))  # a Friday, 13:00 in Paris
    assert after.astimezone(UTC) == datetime(2026, 11, 30, 7, 30, tzinfo=UTC)  # Monday 8:30 CET


def test_a_schedule_down_for_years_does_not_walk_every_minute() -> None:
    plan = plan_fires(cron("* * * * *", catch_up="all"), NINE, NINE + timedelta(days=30))
    assert len(plan.fires) == 100 and plan.next_at > NINE + timedelta(days=30)


FLOW = """
name: daily
trigger: {{type: cron, expression: "0 9 * * *", catchUp: {policy}}}
steps:
  - id: note
    type: toolCall
    tool: mark
    arguments: {{label: "${{trigger.scheduledFor}}"}}
"""


def before() -> datetime:
    """The cores' clock: before the first fire time, so only the test's own ticks fire anything."""
    return NINE - timedelta(hours=1)


async def scheduled(core: Core, policy: str = "once") -> str:
    info = await core.automations.create(parse_definition(None, FLOW.format(policy=policy)))
    await core.db.write(lambda conn: repos.automations.set_next_fire(conn, info.id, NINE))
    return info.id


async def runs_of(core: Core, automation_id: str) -> list[dict[str, object]]:
    runs = await core.automations.runs(automation_id)
    for run in runs:
        await core.automations.wait(run.id)
    return [dict(run.trigger) for run in await core.automations.runs(automation_id)]


async def test_a_cron_flow_runs_on_schedule_with_a_controlled_clock(harness: CoreHarness, tmp_path: Path) -> None:
    core = await harness.core(env={"COWORK_TEST_MARKS": str(tmp_path / "marks.txt")}, clock=before)
    automation = await scheduled(core)
    assert await core.automations.tick(NINE - timedelta(seconds=1)) == []
    started = await core.automations.tick(NINE + timedelta(seconds=2))
    assert len(started) == 1
    assert await core.automations.tick(NINE + timedelta(seconds=3)) == []  # the same fire time never twice
    triggers = await runs_of(core, automation)
    assert triggers == [{"type": "cron", "scheduledFor": NINE.isoformat(), "missed": 0}]
    info = await core.automations.get("daily")
    assert info.next_run_at == NINE + timedelta(days=1)
    [run] = await core.automations.runs(automation)
    assert run.status == "done" and run.steps[0].input == {"arguments": {"label": NINE.isoformat()}}


@pytest.mark.parametrize(("policy", "count"), [("skip", 0), ("once", 1), ("all", 3)])
async def test_catch_up_policies_after_a_simulated_downtime(
    harness: CoreHarness, tmp_path: Path, policy: str, count: int
) -> None:
    env = {"COWORK_TEST_MARKS": str(tmp_path / "marks.txt")}
    core = await harness.core(env=env, clock=before)
    automation = await scheduled(core, policy)
    await core.stop()
    harness.cores.remove(core)
    # Down from before Monday 9:00 until Wednesday 14:00; the restarted server's first tick catches up.
    core = await harness.core(env=env, clock=before)
    started = await core.automations.tick(NINE + timedelta(days=2, hours=5))
    assert len(started) == count
    triggers = await runs_of(core, automation)
    if policy == "once":
        assert triggers == [{"type": "cron", "scheduledFor": (NINE + timedelta(days=2)).isoformat(), "missed": 2}]
    assert (await core.automations.get(automation)).next_run_at == NINE + timedelta(days=3)
    assert await core.automations.tick(NINE + timedelta(days=2, hours=5)) == []


async def test_two_schedulers_on_one_store_fire_once(harness: CoreHarness, tmp_path: Path) -> None:
    core = await harness.core(env={"COWORK_TEST_MARKS": str(tmp_path / "marks.txt")}, clock=before)
    automation = await scheduled(core)
    # Another ticker read the same due row: its run for the same fire time is refused by the fire key.
    row = await core.db.read(lambda conn: repos.automations.get(conn, automation))
    assert row is not None
    first = await core.automations.tick(NINE + timedelta(seconds=1))
    await core.db.write(lambda conn: repos.automations.set_next_fire(conn, automation, NINE))  # the stale view
    second = await core.automations.tick(NINE + timedelta(seconds=1))
    assert len(first) == 1 and second == []
    assert len(await runs_of(core, automation)) == 1

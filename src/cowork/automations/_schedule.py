"""When a cron automation fires: the times due at a tick, and what the catch-up policy makes of missed ones.

Pure and clocked from outside. The service stores each cron automation's next fire time; at a tick it asks
`plan_fires` what is due and records the runs and the new next time in one transaction, each run keyed by its fire
time (`fire_key`, unique per automation), so a restart between the two, or two ticks racing, never fires twice.

A fire time is *on time* when the tick comes within `GRACE` of it (ticks are seconds apart; the loop sleeps until the
next fire time). Anything older was missed while Cowork was down, and the trigger's `catch_up` decides: `skip` drops
the missed times, `once` runs once for all of them (the newest), `all` runs each, oldest first, up to `MAX_CATCH_UP`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from ._triggers import CronTrigger

__all__ = ["GRACE", "MAX_CATCH_UP", "Fire", "FirePlan", "plan_fires"]

GRACE = timedelta(minutes=2)
MAX_CATCH_UP = 100


@dataclass(frozen=True)
class Fire:
    """One run to record: the fire time it stands for, and how many missed times it covers."""

    at: datetime
    missed: int = 0
    """Besides `at`, how many earlier fire times this run stands in for (`once` after downtime)."""

    @property
    def key(self) -> str:
        return "cron:" + self.at.isoformat()


@dataclass(frozen=True)
class FirePlan:
    fires: list[Fire]
    next_at: datetime
    skipped: int = 0
    """Missed fire times dropped (by `skip`, or past `MAX_CATCH_UP` with `all`)."""


def plan_fires(trigger: CronTrigger, next_at: datetime, now: datetime) -> FirePlan:
    """What fires at `now` for a trigger whose stored next fire time is `next_at` (aware datetimes)."""
    if next_at > now:
        return FirePlan([], next_at)
    due: list[datetime] = []
    at = next_at
    dropped = 0
    while at <= now:
        if len(due) < MAX_CATCH_UP:
            due.append(at)
        else:
            dropped += 1
            if dropped > 10_000:  # an every-minute schedule down for a week: jump instead of walking
                at = trigger.next_after(now)
                break
        at = trigger.next_after(at)
    following = at
    on_time = [t for t in due if now - t <= GRACE]
    missed = [t for t in due if now - t > GRACE]
    if not missed:
        return FirePlan([Fire(t) for t in on_time], following)
    policy = trigger.catch_up
    if policy == "skip":
        return FirePlan([Fire(t) for t in on_time], following, skipped=len(missed) + dropped)
    if policy == "once":
        newest = due[-1]
        return FirePlan([Fire(newest, missed=len(due) - 1 + dropped)], following)
    return FirePlan([Fire(t) for t in due], following, skipped=dropped)

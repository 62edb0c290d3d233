"""Budget windows in a fixed time zone: where today, this week (from Monday) and this month start and reset."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from cowork.usage import Windows, local_day, windows_at

TOKYO = timezone(timedelta(hours=9))  # no daylight saving time
NEW_YORK = ZoneInfo("America/New_York")


def at(tz: timezone | ZoneInfo, *parts: int) -> datetime:
    return datetime(*parts, tzinfo=tz)  # type: ignore[arg-type,misc]  # mypy cannot split *parts into year, month…


def test_windows_in_utc_midweek() -> None:
    now = datetime(2026, 11, 19, 15, 30, tzinfo=UTC)  # a Thursday
    assert windows_at(now, UTC) == Windows(
        day=at(UTC, 2026, 11, 19),
        week=at(UTC, 2026, 11, 16),
        month=at(UTC, 2026, 11, 1),
        next_day=at(UTC, 2026, 11, 20),
        next_week=at(UTC, 2026, 11, 23),
        next_month=at(UTC, 2026, 12, 1),
    )


def test_a_monday_starts_its_own_week_and_a_sunday_belongs_to_the_week_before() -> None:
    monday = windows_at(at(UTC, 2026, 11, 16, 0, 0), UTC)
    assert monday.week == monday.day == at(UTC, 2026, 11, 16)
    sunday = windows_at(at(UTC, 2026, 11, 22, 23, 59, 59), UTC)
    assert sunday.week == at(UTC, 2026, 11, 16) and sunday.next_week == sunday.next_day == at(UTC, 2026, 11, 23)


def test_the_last_moment_of_the_year_and_the_first_of_the_next() -> None:
    last = windows_at(at(UTC, 2026, 12, 31, 23, 59, 59, 999999), UTC)
    assert (last.day, last.month) == (at(UTC, 2026, 12, 31), at(UTC, 2026, 12, 1))
    assert last.next_day == last.next_month == at(UTC, 2027, 1, 1)
    assert last.week == at(UTC, 2026, 12, 28) and last.next_week == at(UTC, 2027, 1, 4)  # a week across the year
    first = windows_at(at(UTC, 2027, 1, 1), UTC)
    assert (first.day, first.week, first.month) == (at(UTC, 2027, 1, 1), at(UTC, 2026, 12, 28), at(UTC, 2027, 1, 1))
    assert first.next_month == at(UTC, 2027, 2, 1)


@pytest.mark.parametrize(
    ("now", "month", "next_month"),
    [
        (at(UTC, 2026, 1, 31, 12), at(UTC, 2026, 1, 1), at(UTC, 2026, 2, 1)),
        (at(UTC, 2026, 2, 28, 12), at(UTC, 2026, 2, 1), at(UTC, 2026, 3, 1)),
        (at(UTC, 2028, 2, 29, 12), at(UTC, 2028, 2, 1), at(UTC, 2028, 3, 1)),  # leap year
        (at(UTC, 2026, 4, 30, 12), at(UTC, 2026, 4, 1), at(UTC, 2026, 5, 1)),
        (at(UTC, 2026, 3, 1), at(UTC, 2026, 3, 1), at(UTC, 2026, 4, 1)),
    ],
)
def test_months_of_every_length(now: datetime, month: datetime, next_month: datetime) -> None:
    windows = windows_at(now, UTC)
    assert (windows.month, windows.next_month) == (month, next_month)
    assert windows.next_day == windows.day + timedelta(days=1)


def test_a_zone_with_an_offset_keeps_its_own_calendar() -> None:
    # 20:00 UTC on Sunday 31 May is already Monday 1 June in Tokyo: a new day, week and month there.
    now = at(UTC, 2026, 5, 31, 20)
    tokyo = windows_at(now, TOKYO)
    assert tokyo.day == tokyo.week == tokyo.month == at(TOKYO, 2026, 6, 1)
    assert tokyo.day.astimezone(UTC) == at(UTC, 2026, 5, 31, 15)
    assert (tokyo.next_day, tokyo.next_week, tokyo.next_month) == (
        at(TOKYO, 2026, 6, 2),
        at(TOKYO, 2026, 6, 8),
        at(TOKYO, 2026, 7, 1),
    )
    utc = windows_at(now, UTC)
    assert (utc.day, utc.week, utc.month) == (at(UTC, 2026, 5, 31), at(UTC, 2026, 5, 25), at(UTC, 2026, 5, 1))
    assert local_day(now, TOKYO) == date(2026, 6, 1) and local_day(now, UTC) == date(2026, 5, 31)


def test_a_zone_behind_utc_at_the_year_end() -> None:
    # 03:00 UTC on 1 January is still 31 December in New York (UTC-5 in winter).
    windows = windows_at(at(UTC, 2027, 1, 1, 3), NEW_YORK)
    assert windows.day == at(NEW_YORK, 2026, 12, 31) and windows.month == at(NEW_YORK, 2026, 12, 1)
    assert windows.next_month == windows.next_day == at(NEW_YORK, 2027, 1, 1)
    assert windows.next_day.astimezone(UTC) == at(UTC, 2027, 1, 1, 5)


def test_windows_across_a_daylight_saving_change_start_at_local_midnight() -> None:
    # New York moves from EDT (UTC-4) to EST (UTC-5) on Sunday 1 November 2026.
    windows = windows_at(at(UTC, 2026, 11, 3, 15), NEW_YORK)
    assert windows.month.astimezone(UTC) == at(UTC, 2026, 11, 1, 4)  # midnight EDT
    assert windows.week.astimezone(UTC) == at(UTC, 2026, 11, 2, 5)  # midnight EST
    assert windows.day.astimezone(UTC) == at(UTC, 2026, 11, 3, 5)


def test_every_window_contains_now_and_starts_are_ordered() -> None:
    for hours in range(0, 24 * 40, 7):
        now = at(UTC, 2026, 12, 10) + timedelta(hours=hours)
        for tz in (UTC, TOKYO, NEW_YORK):
            w = windows_at(now, tz)
            assert w.month <= w.day <= now < w.next_day and w.week <= w.day
            assert w.next_day <= w.next_week and w.next_day <= w.next_month
            assert w.starts() == {"daily": w.day, "weekly": w.week, "monthly": w.month}
            assert w.resets() == {"daily": w.next_day, "weekly": w.next_week, "monthly": w.next_month}


@pytest.fixture
def new_york_machine(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The machine's own time zone (what the server uses) set to New York for one test."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("new_york_machine")
def test_the_machine_zone_by_default_with_each_midnight_at_its_own_offset() -> None:
    # Today is in EST; the month began in EDT. A single offset for all of them would be an hour off for one.
    windows = windows_at(at(UTC, 2026, 11, 3, 15))
    assert windows.day.astimezone(UTC) == at(UTC, 2026, 11, 3, 5)
    assert windows.week.astimezone(UTC) == at(UTC, 2026, 11, 2, 5)
    assert windows.month.astimezone(UTC) == at(UTC, 2026, 11, 1, 4)
    before = windows_at(at(UTC, 2026, 10, 31, 15))  # Saturday, EDT: the week and month reset after the change
    assert before.next_day.astimezone(UTC) == before.next_month.astimezone(UTC) == at(UTC, 2026, 11, 1, 4)
    assert before.next_week.astimezone(UTC) == at(UTC, 2026, 11, 2, 5)
    assert local_day(at(UTC, 2026, 11, 1, 3, 59)) == date(2026, 10, 31)

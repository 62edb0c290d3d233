"""Budget windows in the user's local time: today, this week (from Monday), this month."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo

__all__ = ["Windows", "local_day", "local_midnight", "windows_at"]


@dataclass(frozen=True, slots=True)
class Windows:
    """Where the current day, week and month started, and where they end (all timezone-aware)."""

    day: datetime
    week: datetime
    month: datetime
    next_day: datetime
    next_week: datetime
    next_month: datetime

    def starts(self) -> dict[str, datetime]:
        return {"daily": self.day, "weekly": self.week, "monthly": self.month}

    def resets(self) -> dict[str, datetime]:
        return {"daily": self.next_day, "weekly": self.next_week, "monthly": self.next_month}


def local_midnight(day: date, tz: tzinfo | None = None) -> datetime:
    """The instant `day` starts in `tz` (default: the machine's local time zone)."""
    if tz is None:
        # `now.astimezone()` gives a fixed offset (today's), which is an hour off for a midnight on the other side
        # of a daylight saving change; a naive local time converted on its own gets the offset of that day.
        return datetime(day.year, day.month, day.day).astimezone()
    return datetime(day.year, day.month, day.day, tzinfo=tz)


def windows_at(now: datetime, tz: tzinfo | None = None) -> Windows:
    """The windows containing `now`, in `tz` (default: the machine's local time zone)."""
    today = local_day(now, tz)
    monday = today - timedelta(days=today.weekday())
    first = today.replace(day=1)
    next_month = (first + timedelta(days=32)).replace(day=1)
    return Windows(
        day=local_midnight(today, tz),
        week=local_midnight(monday, tz),
        month=local_midnight(first, tz),
        next_day=local_midnight(today + timedelta(days=1), tz),
        next_week=local_midnight(monday + timedelta(days=7), tz),
        next_month=local_midnight(next_month, tz),
    )


def local_day(moment: datetime, tz: tzinfo | None = None) -> date:
    return (moment.astimezone(tz) if tz is not None else moment.astimezone()).date()

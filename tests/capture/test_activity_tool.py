"""The `activity` tool's reading of times (the user's local time) and its refusals."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from cowork.tools import ToolError
from cowork.tools._activity import parse_moment

NOW = datetime(2026, 11, 27, 15, 30, tzinfo=timezone(timedelta(hours=1))).astimezone()


def test_words_dates_and_times_in_local_time() -> None:
    local = NOW.astimezone()
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    assert parse_moment("today", end=False, now=NOW) == midnight
    assert parse_moment("Yesterday", end=False, now=NOW) == midnight - timedelta(days=1)
    assert parse_moment("yesterday", end=True, now=NOW) == midnight
    assert parse_moment("2026-11-24", end=False, now=NOW) == datetime(2026, 11, 24, tzinfo=local.tzinfo)
    assert parse_moment("2026-11-24", end=True, now=NOW) == datetime(2026, 11, 25, tzinfo=local.tzinfo)  # its end
    assert parse_moment("2026-11-24T14:00", end=True, now=NOW) == datetime(2026, 11, 24, 14, tzinfo=local.tzinfo)
    given = parse_moment("2026-11-24T14:00+05:30", end=False, now=NOW)
    assert given.utcoffset() == timedelta(hours=5, minutes=30)


@pytest.mark.parametrize("text", ["last tuesday", "14h", "2026-13-01", ""])
def test_what_it_cannot_read_is_a_tool_error_naming_the_forms(text: str) -> None:
    with pytest.raises(ToolError, match="give today, yesterday"):
        parse_moment(text, end=False, now=NOW)

"""Reading lines back: JSON records, older plain-text lines and their tracebacks, and the filters."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from cowork.logs import LogEntry, LogFilter, parse_line, parse_since, render_line

RECORD = {
    "ts": "2025-06-01T09:30:12.345Z",
    "level": "WARNING",
    "logger": "cowork.mcp",
    "msg": "time: crashed",
    "pid": 7,
}


def entry(**fields: object) -> LogEntry:
    return parse_line(json.dumps({**RECORD, **fields}))


def test_a_json_line_becomes_an_entry() -> None:
    line = json.dumps({**RECORD, "server": "time"})
    assert parse_line(line) == LogEntry(
        raw=line,
        fields={**RECORD, "server": "time"},
        level="WARNING",
        logger="cowork.mcp",
        msg="time: crashed",
        ts=datetime(2025, 6, 1, 9, 30, 12, 345000, tzinfo=UTC),
        extras={"server": "time"},
    )


def test_an_old_plain_text_line_and_its_traceback() -> None:
    header = parse_line("2025-06-01 09:30:12,345 ERROR cowork.core: warm-up failed")
    assert (header.fields, header.level, header.logger, header.msg) == (None, "ERROR", "cowork.core", "warm-up failed")
    assert header.ts == datetime(2025, 6, 1, 9, 30, 12, 345000).astimezone()
    follow = parse_line("Traceback (most recent call last):", header)
    assert (follow.level, follow.logger, follow.ts, follow.msg) == ("ERROR", "cowork.core", header.ts, follow.raw)
    assert parse_line("not json {", None) == LogEntry(raw="not json {", msg="not json {")
    assert parse_line("[1, 2]").fields is None  # JSON, but not a record


def test_the_level_filter_is_a_minimum_and_drops_lines_without_a_level() -> None:
    keep = LogFilter(min_level="WARNING")
    assert [keep.accepts(entry(level=level)) for level in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")] == [
        False,
        False,
        True,
        True,
        True,
    ]
    assert not keep.accepts(parse_line("some plain line"))
    assert LogFilter().accepts(parse_line("some plain line"))


def test_grep_is_case_insensitive_over_message_and_logger() -> None:
    assert LogFilter(grep="CRASHED").accepts(entry())
    assert LogFilter(grep="cowork.MCP").accepts(entry())
    assert not LogFilter(grep="WARNING").accepts(entry())  # the level is not searched
    assert not LogFilter(grep="pid").accepts(entry())


def test_since() -> None:
    now = datetime(2025, 6, 1, 10, 0, tzinfo=UTC)
    assert parse_since("30m", now) == now - timedelta(minutes=30)
    assert parse_since("1.5h", now) == now - timedelta(minutes=90)
    assert parse_since("2025-06-01T09:00:00Z", now) == datetime(2025, 6, 1, 9, tzinfo=UTC)
    with pytest.raises(ValueError, match="expected a duration"):
        parse_since("yesterday", now)
    keep = LogFilter(since=parse_since("45m", now))  # from 09:15
    assert keep.accepts(entry(ts="2025-06-01T09:30:12.345Z"))
    assert not keep.accepts(entry(ts="2025-06-01T09:10:00.000Z"))
    assert not keep.accepts(parse_line("no time here"))


def test_render_line_reads_well() -> None:
    assert render_line(entry(ts="2025-06-01T09:30:12.345+00:00")).endswith(".345 WARNING cowork.mcp: time: crashed")
    with_exc = entry(exc="Traceback (most recent call last):\nValueError: x", server="time", attempt=2)
    assert render_line(with_exc).split(" ", 1)[1] == (
        "WARNING cowork.mcp: time: crashed server=time attempt=2\nTraceback (most recent call last):\nValueError: x"
    )
    assert render_line(parse_line("2025-06-01 09:30:12,345 INFO a: b")) == "2025-06-01 09:30:12,345 INFO a: b"

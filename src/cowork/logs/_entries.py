"""Reading log lines back: a JSON record or an older plain-text line, and the filters `cowork logs` applies.

Pure: no files, no clock (`parse_since` is given the time). A line that is not a JSON object (an older Cowork wrote
`2025-06-01 09:30:12,345 INFO cowork.core: message`, and tracebacks on the lines after it) is kept as it was
written; its level, logger and time are read from that old layout when it has them, and a traceback's lines take
those of the line they follow, so `--level error` still finds an old error with its traceback.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

__all__ = ["LEVELS", "LogEntry", "LogFilter", "parse_line", "parse_since"]

LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}

_OLD_LAYOUT = re.compile(
    r"(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) (?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<logger>\S+): "
    r"(?P<msg>.*)"
)
"""`logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")`, what Cowork wrote before JSON lines."""

_DURATION = re.compile(r"(?P<amount>\d+(?:\.\d+)?)\s*(?P<unit>s|m|h|d)")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class LogEntry:
    """One line of the log as `cowork logs` sees it."""

    raw: str
    """The line as written, without its newline."""
    fields: dict[str, Any] | None = None
    """The JSON record; None for a plain-text line."""
    level: str | None = None
    logger: str = ""
    msg: str = ""
    ts: datetime | None = None
    """When it was logged (timezone-aware), if the line says."""
    extras: dict[str, Any] = field(default_factory=dict)
    """The record's fields beyond the standard ones (its `extra=`), for display."""


_STANDARD = frozenset({"ts", "level", "logger", "msg", "exc", "stack", "pid", "trace_id", "span_id"})


def _parse_ts(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.astimezone()


def _from_json(raw: str, record: dict[str, Any]) -> LogEntry:
    level = record.get("level")
    return LogEntry(
        raw=raw,
        fields=record,
        level=level.upper() if isinstance(level, str) else None,
        logger=str(record.get("logger", "")),
        msg=str(record.get("msg", "")),
        ts=_parse_ts(record.get("ts")),
        extras={k: v for k, v in record.items() if k not in _STANDARD},
    )


def _from_text(raw: str, previous: LogEntry | None) -> LogEntry:
    match = _OLD_LAYOUT.fullmatch(raw)
    if match is not None:
        ts = datetime.strptime(match.group("ts"), "%Y-%m-%d %H:%M:%S,%f").astimezone()  # written in local time
        return LogEntry(
            raw=raw, level=match.group("level"), logger=match.group("logger"), msg=match.group("msg"), ts=ts
        )
    if previous is None:
        return LogEntry(raw=raw, msg=raw)
    # A traceback's or a multi-line message's continuation: it belongs to the record above.
    return LogEntry(raw=raw, level=previous.level, logger=previous.logger, msg=raw, ts=previous.ts)


def parse_line(raw: str, previous: LogEntry | None = None) -> LogEntry:
    """The entry for one line (without its newline); `previous` is the line before, for old multi-line records."""
    if raw.startswith("{"):
        try:
            record = json.loads(raw)
        except ValueError:
            record = None
        if isinstance(record, dict):
            return _from_json(raw, record)
    return _from_text(raw, previous)


def parse_since(text: str, now: datetime) -> datetime:
    """`--since`: a duration back from `now` (`90s`, `10m`, `2h`, `1d`) or a time (`2025-06-01T09:30`, local unless
    it says otherwise).

    Raises:
        ValueError: with a message for the user, when it is neither.
    """
    match = _DURATION.fullmatch(text.strip())
    if match is not None:
        return now - timedelta(seconds=float(match.group("amount")) * _UNITS[match.group("unit")])
    moment = _parse_ts(text.strip())
    if moment is None:
        raise ValueError(
            f"--since {text!r}: expected a duration like 30s, 10m, 2h, 1d, or a time like 2025-06-01T09:30"
        )
    return moment


@dataclass(frozen=True)
class LogFilter:
    """What `cowork logs` keeps: a minimum level, a case-insensitive text, a start time. None keeps everything."""

    min_level: str | None = None
    grep: str | None = None
    since: datetime | None = None

    def accepts(self, entry: LogEntry) -> bool:
        """Whether to show `entry`. A line that does not say its level (or time) is left out by `--level`
        (`--since`): it cannot be shown to pass."""
        if self.min_level is not None:
            if entry.level is None or LEVELS.get(entry.level, 0) < LEVELS[self.min_level]:
                return False
        if self.since is not None and (entry.ts is None or entry.ts < self.since):
            return False
        if self.grep is not None:
            needle = self.grep.lower()
            return needle in entry.msg.lower() or needle in entry.logger.lower()
        return True

"""Log records as text: one JSON object per line for the file, a readable line for stderr, both redacted."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

from ._redact import redact, redact_value

__all__ = ["JsonFormatter", "TextFormatter", "current_trace_ids"]

_RECORD_ATTRIBUTES = frozenset(
    {*logging.LogRecord("", 0, "", 0, "", (), None).__dict__, "message", "asctime", "taskName"}
)
"""What every LogRecord carries; anything else on a record came from `extra=`."""

FIELDS = ("ts", "level", "logger", "msg", "exc", "stack", "pid", "trace_id", "span_id")
"""The keys the formatter writes itself. An `extra=` field with one of these names is written as `extra_<name>`."""


def current_trace_ids() -> tuple[str, str] | None:
    """The current OpenTelemetry span's trace and span ids (32 and 16 lowercase hex digits), if one is recording.

    OpenTelemetry is looked at only once something has imported it: until then no span can be current, and the
    server does not pay for importing it to log its start-up.
    """
    if "opentelemetry.trace" not in sys.modules:
        return None
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"


def _timestamp(record: logging.LogRecord) -> str:
    """ISO 8601 in UTC with milliseconds: `2025-06-01T09:30:12.345Z`."""
    moment = datetime.fromtimestamp(record.created, UTC)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{int(record.msecs):03d}Z"


def _json_safe(value: Any) -> Any:
    """`value` itself when it serialises as JSON, else its `str` (a path, an exception, an object)."""
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value


class JsonFormatter(logging.Formatter):
    """One JSON object per line: `ts`, `level`, `logger`, `msg`, `exc`, `pid`, `trace_id`, `span_id`, the extras.

    Secrets are redacted from the message, the traceback and string extras (`cowork.logs.redact`). Non-ASCII text
    is written as it is (UTF-8); newlines inside a message or traceback are escaped, so a record is always one line.
    """

    def format(self, record: logging.LogRecord) -> str:
        return json.dumps(self.fields(record), ensure_ascii=False, default=str)

    def fields(self, record: logging.LogRecord) -> dict[str, Any]:
        """The record as the object written for it, before JSON encoding."""
        out: dict[str, Any] = {
            "ts": _timestamp(record),
            "level": record.levelname,
            "logger": record.name,
            "msg": redact(record.getMessage()),
        }
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)  # cached as logging.Formatter does
        if record.exc_text:
            out["exc"] = redact(record.exc_text)
        if record.stack_info:
            out["stack"] = redact(self.formatStack(record.stack_info))
        out["pid"] = record.process
        ids = current_trace_ids()
        if ids is not None:
            out["trace_id"], out["span_id"] = ids
        for key, value in record.__dict__.items():
            if key not in _RECORD_ATTRIBUTES and not key.startswith("_"):
                out[f"extra_{key}" if key in FIELDS else key] = redact_value(_json_safe(value))
        return out


class TextFormatter(logging.Formatter):
    """Plain text for a person watching stderr (by default the message alone, as before), redacted like the file."""

    def __init__(self, fmt: str = "%(message)s") -> None:
        super().__init__(fmt)

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))

"""The JSON formatter: one object per line with the standard fields, the extras, the current trace, no secrets."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider

from cowork.logs import JsonFormatter, TextFormatter

CREATED = 1748770212.345  # 2025-06-01T09:30:12.345Z


def record(msg: str = "hello %s", args: tuple[Any, ...] = ("world",), **attributes: Any) -> logging.LogRecord:
    base = logging.makeLogRecord(
        {"name": "cowork.demo", "msg": msg, "args": args, "levelno": logging.INFO, "levelname": "INFO"}
    )
    base.created, base.msecs, base.process = CREATED, 345.0, 4242
    base.__dict__.update(attributes)
    return base


def formatted(rec: logging.LogRecord) -> dict[str, Any]:
    line = JsonFormatter().format(rec)
    assert "\n" not in line
    result: dict[str, Any] = json.loads(line)
    return result


def test_a_record_is_one_json_object_with_the_standard_fields() -> None:
    assert formatted(record()) == {
        "ts": "2025-06-01T09:30:12.345Z",
        "level": "INFO",
        "logger": "cowork.demo",
        "msg": "hello world",
        "pid": 4242,
    }


def test_extras_keep_their_json_values_and_others_become_strings() -> None:
    fields = formatted(
        record(session_id="ses_1", attempt=2, ratio=0.5, tags=["a", "b"], folder=Path("/tmp/x"), missing=None)
    )
    assert {k: fields[k] for k in ("session_id", "attempt", "ratio", "tags", "folder", "missing")} == {
        "session_id": "ses_1",
        "attempt": 2,
        "ratio": 0.5,
        "tags": ["a", "b"],
        "folder": "/tmp/x",
        "missing": None,
    }


def test_an_extra_cannot_overwrite_a_standard_field() -> None:
    fields = formatted(record(ts="not a time", pid="nope"))
    assert (fields["ts"], fields["pid"]) == ("2025-06-01T09:30:12.345Z", 4242)
    assert (fields["extra_ts"], fields["extra_pid"]) == ("not a time", "nope")


def test_messages_tracebacks_and_string_extras_are_redacted() -> None:
    key = "sk-abcdefghij0123456789ABCDEF"
    try:
        raise RuntimeError(f"provider refused {key}")
    except RuntimeError:
        rec = record("calling with %s", (key,), exc_info=sys.exc_info(), url=f"https://x/?api_key={key}")
    line = JsonFormatter().format(rec)
    assert key not in line
    fields = json.loads(line)
    assert fields["msg"] == "calling with sk-…[redacted]"
    assert fields["exc"].startswith("Traceback (most recent call last):")
    assert fields["exc"].endswith("RuntimeError: provider refused sk-…[redacted]")
    assert fields["url"] == "https://x/?api_key=[redacted]"


def test_multi_line_and_non_ascii_messages_stay_on_one_line() -> None:
    line = JsonFormatter().format(record("first\nsecond — ünïcode", ()))
    assert line.count("\n") == 0 and "ünïcode" in line
    assert json.loads(line)["msg"] == "first\nsecond — ünïcode"


def test_trace_and_span_ids_inside_a_span() -> None:
    tracer = TracerProvider().get_tracer("tests.logs")
    with tracer.start_as_current_span("turn") as span:
        fields = formatted(record())
        context = span.get_span_context()
    assert fields["trace_id"] == f"{context.trace_id:032x}" and fields["span_id"] == f"{context.span_id:016x}"
    assert len(fields["trace_id"]) == 32 and len(fields["span_id"]) == 16
    assert fields["trace_id"] == fields["trace_id"].lower()


def test_no_trace_ids_outside_a_span() -> None:
    TracerProvider().get_tracer("tests.logs")  # OpenTelemetry loaded, but no span current
    fields = formatted(record())
    assert "trace_id" not in fields and "span_id" not in fields


def test_the_stderr_text_is_the_message_redacted() -> None:
    text = TextFormatter().format(record("saved token=%s", ("abc123",)))
    assert text == "saved token=[redacted]"

"""What needs the OpenTelemetry SDK (loaded with the first operation, not at start-up): trace ids a root span is
given, the exporter that stores finished spans in the database, and the watch over an OTLP exporter's results."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.trace import SpanKind, StatusCode

from cowork.config import TracingConfig
from cowork.store import Database, SpanRow, repos

__all__ = ["FORCED_TRACE_ID", "Ids", "StoreExporter", "Watched", "to_row"]

log = logging.getLogger(__name__)

FORCED_TRACE_ID: ContextVar[int | None] = ContextVar("cowork_forced_trace_id", default=None)
"""Set while a root span is started: the trace id it gets (see `trace_id_for`)."""

_PRUNE_EVERY_SECONDS = 300.0
_WRITE_TIMEOUT_SECONDS = 30.0
_KINDS = {
    SpanKind.INTERNAL: "internal",
    SpanKind.CLIENT: "client",
    SpanKind.SERVER: "server",
    SpanKind.PRODUCER: "producer",
    SpanKind.CONSUMER: "consumer",
}
_STATUS = {StatusCode.ERROR: "error"}
"""Stored status: `error`, else `ok` (spans that end normally leave their status unset, which OpenTelemetry reads
as success; setting it on each would cost a call per span)."""


class Ids(RandomIdGenerator):
    """Random ids, except a root span's trace id while `FORCED_TRACE_ID` holds one."""

    def generate_trace_id(self) -> int:
        forced = FORCED_TRACE_ID.get()
        return forced if forced is not None else super().generate_trace_id()


def _value(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _micros(nanos: int | None) -> int:
    return (nanos or 0) // 1000


def to_row(span: ReadableSpan) -> SpanRow:
    """A finished span as a `spans` row: session, operation, cost and tokens copied out of its attributes."""
    context = span.get_span_context()
    assert context is not None
    attributes = {key: _value(value) for key, value in (span.attributes or {}).items()}
    events = [
        {
            "name": e.name,
            "time_us": _micros(e.timestamp),
            "attributes": {k: _value(v) for k, v in (e.attributes or {}).items()},
        }
        for e in span.events
    ]

    def number(key: str) -> Any:
        value = attributes.get(key)
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None

    model_call = attributes.get("gen_ai.operation.name") == "chat"  # only model calls are summed into a trace's
    cost = number("cowork.cost_usd") if model_call else None
    tokens_in = number("gen_ai.usage.input_tokens") if model_call else None
    tokens_out = number("gen_ai.usage.output_tokens") if model_call else None
    session = attributes.get("cowork.session.id")
    operation = attributes.get("cowork.operation.id")
    return SpanRow(
        trace_id=format(context.trace_id, "032x"),
        span_id=format(context.span_id, "016x"),
        parent_span_id=format(span.parent.span_id, "016x") if span.parent is not None else None,
        name=span.name[:300],
        kind=_KINDS.get(span.kind, "internal"),
        start_us=_micros(span.start_time),
        end_us=max(_micros(span.end_time), _micros(span.start_time)),
        status=_STATUS.get(span.status.status_code, "ok"),
        status_message=span.status.description,
        session_id=session if isinstance(session, str) else None,
        operation_id=operation if isinstance(operation, str) else None,
        cost_usd=float(cost) if cost is not None else None,
        input_tokens=int(tokens_in) if tokens_in is not None else None,
        output_tokens=int(tokens_out) if tokens_out is not None else None,
        attributes=json.dumps(attributes, default=str),
        events=json.dumps(events, default=str) if events else None,
    )


class StoreExporter(SpanExporter):
    """Writes finished spans to the database in the batch processor's thread (never on the event loop), and
    prunes them by age and count every few minutes."""

    def __init__(self, db: Database, config: TracingConfig) -> None:
        self._db = db
        self._config = config
        self._pruned_at = 0.0
        self._closed = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._closed:
            return SpanExportResult.FAILURE
        rows = [to_row(span) for span in spans]
        try:
            self._db.write_from_thread(lambda conn: repos.spans.insert_many(conn, rows), _WRITE_TIMEOUT_SECONDS)
            if time.monotonic() - self._pruned_at >= _PRUNE_EVERY_SECONDS:
                self.prune()
        except Exception:
            log.warning("could not store %d spans", len(rows), exc_info=True)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def prune(self) -> int:
        """Delete spans past `keep_days`, then the oldest past `max_spans`; how many went."""
        self._pruned_at = time.monotonic()
        older_than = int((time.time() - self._config.keep_days * 86_400) * 1_000_000)
        keep = self._config.max_spans
        return self._db.write_from_thread(
            lambda conn: repos.spans.prune(conn, older_than_us=older_than, keep=keep), _WRITE_TIMEOUT_SECONDS
        )

    def shutdown(self) -> None:
        self._closed = True

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class Watched(SpanExporter):
    """An exporter whose last result is kept, for `health` (an OTLP collector that is down degrades tracing)."""

    def __init__(self, inner: SpanExporter, endpoint: str) -> None:
        self.inner = inner
        self.endpoint = endpoint
        self.failure: str | None = None
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            result = self.inner.export(spans)
        except Exception as exc:
            result = SpanExportResult.FAILURE
            log.warning("OTLP export to %s failed: %s", self.endpoint, exc)
        with self._lock:
            self.failure = None if result == SpanExportResult.SUCCESS else f"sending spans to {self.endpoint} failed"
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)

"""Opening spans without holding the SDK: the current tracer in a context variable, child spans for code that has
no tracer of its own (MCP calls), and the trace id a root operation's spans share."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

__all__ = ["child_span", "current_tracer", "mark_failed", "short", "trace_id_for", "use_tracer"]

_TRACER: ContextVar[Tracer | None] = ContextVar("cowork_tracer", default=None)


def trace_id_for(root_operation_id: str) -> str:
    """The trace id (32 hex digits) of a root operation: derived from its id, so a turn resumed after a restart
    (or its sub-agents, anywhere) lands in the same trace without storing the id anywhere."""
    return hashlib.sha256(root_operation_id.encode()).hexdigest()[:32]


def use_tracer(tracer: Tracer) -> None:
    """Make `tracer` the current one for this task and the tasks it starts (tool calls, sub-agents)."""
    _TRACER.set(tracer)


def current_tracer() -> Tracer | None:
    return _TRACER.get()


def short(text: str, limit: int = 300) -> str:
    """A status message or attribute cut to `limit` characters, on one line."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def mark_failed(span: Span, message: str, *, error_type: str | None = None) -> None:
    """End `span` as failed (when it ends) with a short `message`."""
    from opentelemetry.trace import Status, StatusCode

    span.set_status(Status(StatusCode.ERROR, short(message)))
    if error_type:
        span.set_attribute("error.type", error_type)


@contextlib.contextmanager
def child_span(
    name: str, attributes: Mapping[str, Any] | None = None, *, kind: str = "internal"
) -> Iterator[Span | None]:
    """A span under the current one, when a runner's tracer is current (else nothing happens: yields None). An
    exception leaving the block marks the span failed, with a short message, and goes on."""
    tracer = _TRACER.get()
    if tracer is None:
        yield None
        return
    from opentelemetry.trace import SpanKind

    span_kind = SpanKind.CLIENT if kind == "client" else SpanKind.INTERNAL
    with tracer.start_as_current_span(
        name, kind=span_kind, attributes=dict(attributes or {}), record_exception=False, set_status_on_exception=False
    ) as span:
        try:
            yield span
        except BaseException as exc:
            mark_failed(span, f"{type(exc).__name__}: {str(exc) or type(exc).__name__}", error_type=type(exc).__name__)
            raise

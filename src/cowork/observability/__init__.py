"""Tracing: OpenTelemetry spans for every turn, step, model call, tool call, approval wait and MCP call, stored in
the database by an exporter of ours (and sent to an OTLP/HTTP collector when the user configures one), queried by
`trace/list` and `trace/get`.

The OpenTelemetry SDK loads with the first operation (or the warm-up), not at start-up: `Tracing.tracer()` builds
it on first use. Code outside the runtime (MCP calls) opens spans with `child_span`, which does nothing unless a
runner's tracer is current (`use_tracer`), so it needs no tracer passed in.
"""

from ._query import TraceQueries
from ._spans import child_span, current_tracer, mark_failed, short, trace_id_for, use_tracer
from ._tracing import Tracing

__all__ = [
    "TraceQueries",
    "Tracing",
    "child_span",
    "current_tracer",
    "mark_failed",
    "short",
    "trace_id_for",
    "use_tracer",
]

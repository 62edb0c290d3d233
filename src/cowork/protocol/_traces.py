"""Traces on the wire: what each turn did, as OpenTelemetry spans (`trace/list`, `trace/get`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, model_validator

from ._base import Params, WireModel

__all__ = [
    "SpanEventInfo",
    "SpanInfo",
    "TraceGetParams",
    "TraceGetResult",
    "TraceListParams",
    "TraceListResult",
    "TraceSummary",
]

_HEX32 = r"^[0-9a-f]{32}$"


class TraceListParams(Params):
    session_id: str | None = Field(default=None, max_length=200, description="Only this session's traces.")
    since: datetime | None = Field(default=None, description="Only traces that started at or after this time.")
    until: datetime | None = Field(default=None, description="Only traces that started before this time.")
    min_duration_ms: float | None = Field(default=None, ge=0, description="Only traces at least this long (slow).")
    failed: bool | None = Field(default=None, description="true: only traces with a failed span; false: none failed.")
    min_cost_usd: float | None = Field(default=None, ge=0, description="Only traces that cost at least this much.")
    limit: int = Field(default=50, ge=1, le=500)


class TraceSummary(WireModel):
    trace_id: str
    name: str | None = Field(default=None, description="The root span's name, e.g. `invoke_agent cowork`.")
    session_id: str | None = None
    operation_id: str | None = Field(default=None, description="The turn's operation.")
    started_at: datetime
    duration_ms: float
    span_count: int
    failed: bool = Field(description="A span in it ended with an error.")
    cost_usd: float = Field(description="Summed over its model calls.")
    input_tokens: int
    output_tokens: int


class TraceListResult(WireModel):
    traces: list[TraceSummary]


class TraceGetParams(Params):
    trace_id: str | None = Field(default=None, pattern=_HEX32, description="The trace (32 lowercase hex digits).")
    operation_id: str | None = Field(default=None, max_length=200, description="Or the operation whose trace it is.")
    session_id: str | None = Field(
        default=None, max_length=200, description="Or the session: its latest trace (what `/trace` shows)."
    )

    @model_validator(mode="after")
    def _one(self) -> TraceGetParams:
        given = [x for x in (self.trace_id, self.operation_id, self.session_id) if x is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of traceId, operationId, sessionId")
        return self


class SpanEventInfo(WireModel):
    name: str
    time: datetime
    attributes: dict[str, Any] = Field(default_factory=dict)


class SpanInfo(WireModel):
    """One span: a turn (`invoke_agent …`), a step, a model call (`chat <model>`, GenAI attributes), a tool call
    (`execute_tool <name>`), an approval wait (`approval <tool>`), an MCP call (`tools/call <tool>`)."""

    span_id: str
    parent_span_id: str | None = Field(default=None, description="None for the trace's root span.")
    name: str
    kind: Literal["internal", "client", "server", "producer", "consumer"]
    start: datetime
    end: datetime
    duration_ms: float
    offset_ms: float = Field(description="Start, in milliseconds after the trace's first span started.")
    status: Literal["ok", "error", "unset"]
    status_message: str | None = None
    attributes: dict[str, Any] = Field(
        description="OpenTelemetry attributes: `gen_ai.*` (provider, model, tokens, finish reasons), `cowork.*` "
        "(cost, time to first token, outcome, approval wait), `mcp.*`."
    )
    events: list[SpanEventInfo] = Field(default_factory=list)


class TraceGetResult(WireModel):
    trace_id: str
    session_id: str | None = None
    started_at: datetime
    duration_ms: float
    cost_usd: float
    input_tokens: int
    output_tokens: int
    spans: list[SpanInfo] = Field(description="In start order; a span's parent is listed before it when stored.")
    truncated: bool = Field(default=False, description="More spans than the 5,000 returned.")

"""The spans of one operation's runner: the operation (`invoke_agent …`), its steps, model calls (GenAI semantic
conventions), tool calls and approval waits. Loaded with the executors (it imports the OpenTelemetry API).

A span stays open while the operation waits for a person; an operation resumed after a restart opens a new one in
the same trace (its id comes from the root operation's, see `cowork.observability.trace_id_for`)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from cowork.models import ModelTarget
from cowork.observability import Tracing, short, trace_id_for, use_tracer
from cowork.protocol import OperationStatus

from ._state import LedgerEntry, OperationState

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelResponse

__all__ = ["ModelCallSpan", "OperationTrace"]

S = OperationStatus


class ModelCallSpan:
    """What a model call's span learns as the stream goes: when the first token came, how many retries."""

    def __init__(self, span: Span | None) -> None:
        self.span = span
        self._started = time.perf_counter()
        self._first: float | None = None
        self.retries = 0

    def first_token(self) -> None:
        if self._first is None:
            self._first = time.perf_counter()
            if self.span is not None:
                self.span.set_attribute("cowork.time_to_first_token_ms", round((self._first - self._started) * 1000, 3))

    def finished(self, response: ModelResponse, cost_usd: float | None) -> None:
        span = self.span
        if span is None:
            return
        usage = response.usage
        reasoning = max(usage.output_reasoning_tokens, int(usage.details.get("reasoning_tokens", 0)))
        attributes: dict[str, Any] = {
            "gen_ai.usage.input_tokens": usage.input_tokens,
            "gen_ai.usage.output_tokens": usage.output_tokens,
            "cowork.usage.reasoning_tokens": reasoning,
            "cowork.usage.cache_read_tokens": usage.cache_read_tokens,
            "cowork.retries": self.retries,
        }
        if response.model_name:
            attributes["gen_ai.response.model"] = response.model_name
        if response.provider_response_id:
            attributes["gen_ai.response.id"] = response.provider_response_id
        if response.finish_reason:
            attributes["gen_ai.response.finish_reasons"] = [response.finish_reason]
        if cost_usd is not None:
            attributes["cowork.cost_usd"] = cost_usd
        else:
            attributes["cowork.price_unknown"] = True  # no cost rather than a cost of 0
        span.set_attributes(attributes)  # (a span's status is set only when it fails: stored, unset reads as ok)


class OperationTrace:
    """Opens and closes one operation's spans (does nothing when tracing is off)."""

    def __init__(self, tracing: Tracing | None, state: OperationState, target: ModelTarget) -> None:
        self._tracing = tracing if tracing is not None and tracing.enabled else None
        self._state = state
        self._target = target
        self._root: Span | None = None
        self._step: Span | None = None
        self._approvals: dict[str, tuple[Span, float]] = {}
        self._trace_id = trace_id_for(state.root)
        self._ids_attributes = {"cowork.session.id": state.session_id, "cowork.operation.id": state.id}
        self.waited: dict[str, float] = {}
        """Per tool call: seconds it waited for approval (set on its span when it runs)."""

    @property
    def on(self) -> bool:
        """Tracing is on: the operation's events name its trace."""
        return self._tracing is not None

    @property
    def trace_id(self) -> str:
        return self._trace_id

    def _ids(self) -> dict[str, Any]:
        """The session and operation, on the operation's span only: the spans under it are found through their
        trace (each attribute costs the SDK a validation per span)."""
        return self._ids_attributes

    def _under(self, parent: Span | None) -> Any:
        return trace.set_span_in_context(parent) if parent is not None else None

    def begin(self) -> None:
        """At each run: the operation's span (once), and the tracer current for the tasks the run starts."""
        if self._tracing is None:
            return
        tracer = self._tracing.tracer()
        if tracer is None:
            return
        use_tracer(tracer)
        if self._root is not None:
            return
        state = self._state
        agent = state.agent_type or "cowork"
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
            "gen_ai.conversation.id": state.session_id,
            "gen_ai.provider.name": self._target.provider,
            "gen_ai.request.model": self._target.model,
            "cowork.origin": state.origin,
            **self._ids(),
        }
        if state.parent_id is not None:
            attributes["cowork.parent_operation.id"] = state.parent_id
        self._root = self._tracing.start_root(f"invoke_agent {agent}", self.trace_id, attributes)

    def note_context(self, passages: int, backfilled: int) -> None:
        """The document passages context assembly gave this turn (on the operation's span)."""
        if self._root is not None:
            self._root.set_attribute("cowork.context.passages", passages)
            self._root.set_attribute("cowork.context.backfilled", backfilled)

    def _tracer(self) -> trace.Tracer | None:
        return self._tracing.tracer() if self._tracing is not None else None

    def start_step(self, step: int) -> None:
        """A new step: the last one's span ends, this one's starts (under the operation's)."""
        tracer = self._tracer()
        if tracer is None:
            return
        if self._step is not None:
            self._step.end()
        self._step = tracer.start_span(
            f"step {step}", context=self._under(self._root), attributes={"cowork.step": step}
        )

    @contextlib.contextmanager
    def model_call(self, step: int) -> Iterator[ModelCallSpan]:
        """A model request's span (`chat <model>`), failed with the error's message if the request fails."""
        tracer = self._tracer()
        if tracer is None:
            yield ModelCallSpan(None)
            return
        target = self._target
        span = tracer.start_span(
            f"chat {target.model}",
            context=self._under(self._step or self._root),
            kind=SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": target.provider,
                "gen_ai.request.model": target.model,
                "cowork.step": step,
            },
        )
        call = ModelCallSpan(span)
        # Current while the request runs, so what is logged meanwhile (the HTTP client's lines, a provider's error)
        # carries its trace and span ids.
        with trace.use_span(span, end_on_exit=True, record_exception=False, set_status_on_exception=False):
            try:
                yield call
            except BaseException as exc:
                _failed(span, exc)
                raise

    @contextlib.contextmanager
    def tool_call(self, entry: LedgerEntry) -> Iterator[Span | None]:
        """A tool call's span (`execute_tool <name>`), current while it runs (an MCP call's span goes under it);
        the time it waited for approval is an attribute, not part of it."""
        tracer = self._tracer()
        if tracer is None:
            yield None
            return
        use_tracer(tracer)  # a call approved while others run starts from the answer's task
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": entry.name,
            "gen_ai.tool.call.id": entry.tool_call_id,
            "gen_ai.tool.type": "extension" if entry.name.startswith("mcp__") else "function",
            "cowork.tool.side_effects": entry.side_effects,
            "cowork.step": entry.step,
        }
        waited = self.waited.pop(entry.tool_call_id, None)
        if waited is not None:
            attributes["cowork.approval.wait_ms"] = round(waited * 1000, 3)
        span = tracer.start_span(
            f"execute_tool {entry.name}", context=self._under(self._step or self._root), attributes=attributes
        )
        with trace.use_span(span, end_on_exit=True, record_exception=False, set_status_on_exception=False):
            try:
                yield span
            except BaseException as exc:
                _failed(span, exc)
                span.set_attribute("cowork.tool.outcome", "cancelled" if _cancelled(exc) else "error")
                raise

    def tool_result(self, span: Span | None, content: str, is_error: bool) -> None:
        if span is None:
            return
        span.set_attributes(
            {"cowork.tool.outcome": "error" if is_error else "ok", "cowork.tool.result_chars": len(content)}
        )
        if is_error:
            span.set_status(Status(StatusCode.ERROR, short(content)))

    def approval_started(self, entry: LedgerEntry, dangerous: bool) -> None:
        """A call waits for the user's approval: its wait is a span of its own (`approval <tool>`)."""
        tracer = self._tracer()
        if tracer is None or entry.tool_call_id in self._approvals:
            return
        span = tracer.start_span(
            f"approval {entry.name}",
            context=self._under(self._step or self._root),
            attributes={
                "gen_ai.tool.name": entry.name,
                "gen_ai.tool.call.id": entry.tool_call_id,
                "cowork.approval.dangerous": dangerous,
            },
        )
        self._approvals[entry.tool_call_id] = (span, time.perf_counter())

    def approval_ended(self, tool_call_id: str, decision: str) -> None:
        """The user answered (`approved`, `approved_for_session`, `rejected`), or the operation ended first."""
        found = self._approvals.pop(tool_call_id, None)
        if found is None:
            return
        span, started = found
        if decision.startswith("approved"):
            self.waited[tool_call_id] = time.perf_counter() - started
        span.set_attribute("cowork.approval.decision", decision)
        span.end()

    def end(self, status: OperationStatus, reason: str | None) -> None:
        """The operation stopped (done, failed, cancelled, interrupted): every span of it still open ends."""
        for call_id in list(self._approvals):
            self.approval_ended(call_id, "unanswered")
        if self._step is not None:
            self._step.end()
            self._step = None
        root, self._root = self._root, None
        if root is None:
            return
        root.set_attribute("cowork.status", str(status))
        root.set_attribute("cowork.steps", self._state.step)
        if status == S.ERROR:
            root.set_status(Status(StatusCode.ERROR, short(reason or "failed")))
        elif reason:
            root.set_attribute("cowork.reason", short(reason))
        root.end()


def _cancelled(exc: BaseException) -> bool:
    return isinstance(exc, asyncio.CancelledError)


def _failed(span: Span, exc: BaseException) -> None:
    if _cancelled(exc):
        span.set_attribute("cowork.cancelled", True)
        return
    message = str(exc) or type(exc).__name__
    span.set_status(Status(StatusCode.ERROR, short(f"{type(exc).__name__}: {message}")))
    span.set_attribute("error.type", type(exc).__name__)

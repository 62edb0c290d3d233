"""`/trace` in both terminal clients: a `trace/get` result as lines of text, the spans as a tree with a waterfall.

Pure: data in, rich `Text` lines out (Textual renders rich text too), so the REPL and the TUI show the same and the
tests need no terminal. Asking the server and where the lines go stay with each client.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from rich.text import Text

from cowork.protocol import SpanInfo, TraceGetParams, TraceGetResult

from .format import clean, cost, money, shorten

__all__ = ["NO_TRACE_YET", "duration", "trace_lines", "trace_params", "trace_text"]

NO_TRACE_YET = "No trace yet: send a message first."

_NAME_WIDTH = 34
_DURATION_WIDTH = 8
_DETAILS_WIDTH = 56
"""Room a model call's details need (tokens, cost, time to first token) before the bar takes more."""
_TRACE_ID = re.compile(r"[0-9a-fA-F]{32}")
_DECISION = {
    "approved": ("approved", "green"),
    "approved_for_session": ("approved for the session", "green"),
    "rejected": ("rejected", "red"),
    "unanswered": ("unanswered", "yellow"),
}
_NOTABLE_FINISH = ("length", "content_filter", "error")
"""Finish reasons worth a word: the answer was cut or refused (`stop` and `tool_call` are the usual ones)."""


def trace_params(arg: str, session_id: str | None) -> TraceGetParams | None:
    """What `/trace [ID]` asks for: ID as a trace id (32 hex digits) or else an operation id; without ID the
    session's latest trace; None when there is neither (no session yet)."""
    wanted = arg.strip()
    if _TRACE_ID.fullmatch(wanted):
        return TraceGetParams(trace_id=wanted.lower())
    if wanted:
        return TraceGetParams(operation_id=wanted)
    return TraceGetParams(session_id=session_id) if session_id is not None else None


def duration(ms: float) -> str:
    """`812 ms` below a second, `2.31 s` from one."""
    if ms < 1000:
        return "<1 ms" if ms < 0.5 else f"{ms:.0f} ms"
    return f"{ms / 1000:.2f} s"


def trace_text(trace: TraceGetResult, width: int = 110) -> Text:
    """`trace_lines` as one text (a TUI `Static`)."""
    return Text("\n").join(trace_lines(trace, width))


def trace_lines(trace: TraceGetResult, width: int = 110) -> list[Text]:
    """The header (duration, tokens, cost), then one line per span: indented by depth, siblings in start order, its
    duration, a bar placed by its start and length in the trace (`░` for a wait for approval), then what it did
    (tokens, cost and time to first token for a model call; the decision for an approval; ✗ and why for a failure).

    `width` is the terminal's: the bar takes what the name, duration and details leave (10 to 40 columns); a long
    line wraps rather than being cut.
    """
    bar_width = max(10, min(40, width - _NAME_WIDTH - _DURATION_WIDTH - 4 - _DETAILS_WIDTH))
    lines = [_header(trace)]
    total = max(trace.duration_ms, 1e-9)
    waits = False
    for span, depth in _tree(trace.spans):
        waits = waits or _is_approval(span)
        lines.append(_span_line(span, depth, total, bar_width))
    if not trace.spans:
        lines.append(Text("  (no spans stored)", style="dim"))
    if trace.truncated:
        lines.append(Text(f"  … more spans than the {len(trace.spans):,} shown", style="dim italic"))
    if waits:
        lines.append(Text("  ━ working   ░ waiting for your approval", style="dim"))
    return lines


def _header(trace: TraceGetResult) -> Text:
    chats = [s for s in trace.spans if _is_model_call(s)]
    known = all("cowork.cost_usd" in s.attributes for s in chats)
    failed = sum(1 for s in trace.spans if s.status == "error")
    header = Text(duration(trace.duration_ms), style="bold")
    header.append(f" · {trace.input_tokens:,} tokens in · {trace.output_tokens:,} out · ")
    header.append(cost(trace.cost_usd, known))
    header.append(f" · {len(chats)} model call{'s' if len(chats) != 1 else ''}")
    if failed:
        header.append(f" · {failed} failed", style="bold red")
    header.append(f"   trace {trace.trace_id}", style="dim")  # whole: `/trace ID` and a collector take it
    return header


def _tree(spans: list[SpanInfo]) -> Iterator[tuple[SpanInfo, int]]:
    """Each span with its depth, parents first, siblings in start order. A span whose parent is not in the list (a
    truncated trace, a turn resumed after a restart) starts a tree of its own; each span shows once."""
    ids = {s.span_id for s in spans}
    children: dict[str | None, list[SpanInfo]] = {}
    for span in spans:
        parent = span.parent_span_id if span.parent_span_id in ids else None
        children.setdefault(parent, []).append(span)
    for siblings in children.values():
        siblings.sort(key=lambda s: (s.offset_ms, s.start))
    seen: set[str] = set()
    stack: list[tuple[SpanInfo, int]] = [(s, 0) for s in reversed(children.get(None, []))]
    while stack:
        span, depth = stack.pop()
        if span.span_id in seen:
            continue
        seen.add(span.span_id)
        yield span, depth
        stack.extend((child, depth + 1) for child in reversed(children.get(span.span_id, [])))


def _span_line(span: SpanInfo, depth: int, total_ms: float, bar_width: int) -> Text:
    failed = span.status == "error"
    room = max(12, _NAME_WIDTH - 2 * depth)  # deep sub-agents push the columns right rather than hide names
    name = clean(" ".join(span.name.split()))
    name = name if len(name) < room else name[: room - 2] + "…"
    line = Text("  " * depth)
    line.append(name.ljust(room), style="bold red" if failed else _name_style(span))
    line.append(duration(span.duration_ms).rjust(_DURATION_WIDTH), style="dim")
    line.append("  ")
    line.append_text(_bar(span, total_ms, bar_width))
    details = _details(span)
    if details.plain:
        line.append("  ")
        line.append_text(details)
    line.rstrip()
    return line


def _bar(span: SpanInfo, total_ms: float, width: int) -> Text:
    """The span's place in the trace: where it starts and how long it lasts, at least one column."""
    start = min(width - 1, max(0, math.floor(span.offset_ms / total_ms * width)))
    end = min(width, max(start + 1, math.ceil((span.offset_ms + span.duration_ms) / total_ms * width)))
    approval = _is_approval(span)
    style = "red" if span.status == "error" else "yellow" if approval else _bar_style(span)
    return Text.assemble(" " * start, ("░" if approval else "━") * (end - start), " " * (width - end), style=style)


def _details(span: SpanInfo) -> Text:
    a = span.attributes
    text = Text()
    if _is_model_call(span):
        text.append(_model_call(a), style="dim")
    elif _is_approval(span):
        label, style = _DECISION.get(str(a.get("cowork.approval.decision")), ("no answer recorded", "yellow"))
        text.append(label, style=style)
    elif a.get("cowork.tool.outcome") == "cancelled" or a.get("cowork.cancelled"):
        text.append("cancelled", style="yellow")
    elif span.name.startswith("invoke_agent") and a.get("cowork.status") not in (None, "done", "error"):
        reason = a.get("cowork.reason")
        said = f"{a['cowork.status']}" + (f": {reason}" if reason else "")
        text.append(shorten(clean(said), 60), style="yellow")
    if span.status == "error":
        if text.plain:
            text.append(" ")
        text.append("✗ " + shorten(clean(span.status_message or "failed"), 60), style="bold red")
    return text


def _model_call(a: dict[str, Any]) -> str:
    tokens_in = a.get("gen_ai.usage.input_tokens")
    tokens_out = a.get("gen_ai.usage.output_tokens")
    parts = []
    if tokens_in is not None or tokens_out is not None:
        parts.append(f"{int(tokens_in or 0):,} in · {int(tokens_out or 0):,} out")
        spent = a.get("cowork.cost_usd")
        parts.append(money(float(spent)) if spent is not None else "price unknown")
    first = a.get("cowork.time_to_first_token_ms")
    if first is not None:
        parts.append(f"first token {duration(float(first))}")
    finish = a.get("gen_ai.response.finish_reasons") or []
    notable = [str(r) for r in finish if r in _NOTABLE_FINISH]
    if notable:
        parts.append("finished: " + ", ".join(notable))
    return " · ".join(parts)


def _is_model_call(span: SpanInfo) -> bool:
    return span.name.startswith("chat ") or "gen_ai.usage.input_tokens" in span.attributes


def _is_approval(span: SpanInfo) -> bool:
    return span.name.startswith("approval ")


def _name_style(span: SpanInfo) -> str:
    if span.name.startswith("invoke_agent"):
        return "bold magenta"
    if span.name.startswith("step "):
        return "dim"
    return ""


def _bar_style(span: SpanInfo) -> str:
    if span.name.startswith("invoke_agent"):
        return "magenta"
    if _is_model_call(span):
        return "cyan"
    if span.name.startswith(("execute_tool ", "tools/call ")):
        return "green"
    return "blue"

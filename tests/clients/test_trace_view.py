"""`/trace`'s text, which the REPL and the TUI share: a header with the totals, then the spans as an indented tree in
start order, each with its duration, a waterfall bar and what it did."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import pytest

from cowork.clients.trace_view import NO_TRACE_YET, duration, trace_lines, trace_params, trace_text
from cowork.protocol import SpanInfo, TraceGetParams, TraceGetResult

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
TRACE = "0123456789abcdef0123456789abcdef"


def span(
    span_id: str,
    parent: str | None,
    name: str,
    offset_ms: float,
    duration_ms: float,
    attributes: dict[str, Any] | None = None,
    status: Literal["ok", "error", "unset"] = "ok",
    message: str | None = None,
) -> SpanInfo:
    start = T0 + timedelta(milliseconds=offset_ms)
    return SpanInfo(
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        kind="client" if name.startswith("chat ") else "internal",
        start=start,
        end=start + timedelta(milliseconds=duration_ms),
        duration_ms=duration_ms,
        offset_ms=offset_ms,
        status=status,
        status_message=message,
        attributes=attributes or {},
    )


def chat(
    span_id: str, parent: str, offset_ms: float, duration_ms: float, tokens: tuple[int, int], **more: Any
) -> SpanInfo:
    """A model call's span: its tokens, and `cost_usd` / `first_ms` when known."""
    attributes: dict[str, Any] = {"gen_ai.usage.input_tokens": tokens[0], "gen_ai.usage.output_tokens": tokens[1]}
    if "cost_usd" in more:
        attributes["cowork.cost_usd"] = more["cost_usd"]
    if "first_ms" in more:
        attributes["cowork.time_to_first_token_ms"] = more["first_ms"]
    return span(span_id, parent, "chat mock-model", offset_ms, duration_ms, attributes)


def sample() -> TraceGetResult:
    """A turn of two steps: a model call asking for a bash call (approved after a wait) that fails, and a sub-agent;
    then the answer. Listed out of start order on purpose (siblings are sorted by start)."""
    ok = {"cowork.tool.outcome": "ok"}
    done = {"cowork.status": "done"}
    failure = "exit code 2: ls: cannot access 'nowhere': No such file or directory, and a great deal more after that"
    spans = [
        span("root", None, "invoke_agent cowork", 0, 4000, done),
        span("s2", "root", "step 2", 3000, 1000),
        span("s1", "root", "step 1", 0, 3000),
        chat("c1", "s1", 0, 800, (1200, 45), cost_usd=0.0021, first_ms=120.4),
        span("ap", "s1", "approval bash", 800, 1200, {"cowork.approval.decision": "approved"}),
        span(
            "bash",
            "s1",
            "execute_tool bash",
            2000,
            150,
            {"cowork.tool.outcome": "error", "cowork.approval.wait_ms": 1200.0},
            "error",
            failure,
        ),
        span("spawn", "s1", "execute_tool spawnAgent", 2150, 850, ok),
        span("sub", "spawn", "invoke_agent explore", 2160, 830, done),
        span("sub1", "sub", "step 1", 2160, 830),
        chat("subc", "sub1", 2160, 600, (300, 20), first_ms=0.2),  # no price known for it
        span("read", "sub1", "execute_tool read", 2760, 0.3, ok),
        chat("c2", "s2", 3000, 1000, (1500, 60), cost_usd=0.00003),
    ]
    return TraceGetResult(
        trace_id=TRACE,
        session_id="ses_1",
        started_at=T0,
        duration_ms=4000,
        cost_usd=0.00213,
        input_tokens=3000,
        output_tokens=125,
        spans=spans,
    )


def test_a_turn_reads_as_a_tree_with_a_waterfall() -> None:
    lines = [line.plain for line in trace_lines(sample(), width=100)]
    # Bars are 10 columns at this width (the narrowest): 400 ms a column.
    assert lines == [
        "4.00 s · 3,000 tokens in · 125 out · $0.0021 + price unknown · 3 model calls · 1 failed   trace " + TRACE,
        "invoke_agent cowork                 4.00 s  ━━━━━━━━━━",
        "  step 1                            3.00 s  ━━━━━━━━",
        "    chat mock-model                 800 ms  ━━          1,200 in · 45 out · $0.0021 · first token 120 ms",
        "    approval bash                   1.20 s    ░░░       approved",
        "    execute_tool bash               150 ms       ━      "
        "✗ exit code 2: ls: cannot access 'nowhere': No such file or…",
        "    execute_tool spawnAgent         850 ms       ━━━",
        "      invoke_agent explore          830 ms       ━━━",
        "        step 1                      830 ms       ━━━",
        "          chat mock-model           600 ms       ━━     300 in · 20 out · price unknown · first token <1 ms",
        "          execute_tool read          <1 ms        ━",
        "  step 2                            1.00 s         ━━━",
        "    chat mock-model                 1.00 s         ━━━  1,500 in · 60 out · <$0.0001",
        "  ━ working   ░ waiting for your approval",
    ]


def test_styles_mark_failures_waits_and_model_calls() -> None:
    lines = {line.plain.strip().split("  ")[0]: line for line in trace_lines(sample(), width=100)}
    failed = lines["execute_tool bash"]
    assert any(s.style == "bold red" and "✗" in failed.plain[s.start : s.end] for s in failed.spans)
    wait = lines["approval bash"]
    assert any(s.style == "yellow" and "░" in wait.plain[s.start : s.end] for s in wait.spans)
    assert any(s.style == "green" and wait.plain[s.start : s.end] == "approved" for s in wait.spans)


def test_the_bar_grows_with_the_terminal_and_stays_in_place() -> None:
    wide = [line.plain for line in trace_lines(sample(), width=200)]
    assert wide[1].endswith("━" * 40)  # the whole turn: the whole bar
    assert wide[-2].endswith(" " * 30 + "━" * 10 + "  1,500 in · 60 out · <$0.0001")  # the last quarter
    assert len(trace_text(sample(), width=200).plain.splitlines()) == len(wide)


def test_odd_traces_still_show() -> None:
    """Spans whose parent is missing (a truncated trace; a turn resumed after a restart) start their own tree; a
    cancelled tool and an unanswered approval say so; control characters in names are made visible."""
    spans = [
        span("a", "gone", "execute_tool \x1b[31mbash", 0, 10, {"cowork.tool.outcome": "cancelled"}, "unset"),
        span("b", None, "approval write", 10, 20, {"cowork.approval.decision": "unanswered"}),
        span(
            "c",
            None,
            "invoke_agent cowork",
            30,
            10,
            {"cowork.status": "interrupted", "cowork.reason": "server restart"},
        ),
    ]
    trace = TraceGetResult(
        trace_id=TRACE,
        started_at=T0,
        duration_ms=40,
        cost_usd=0,
        input_tokens=0,
        output_tokens=0,
        spans=spans,
        truncated=True,
    )
    lines = [line.plain for line in trace_lines(trace, width=100)]
    assert lines[0] == f"40 ms · 0 tokens in · 0 out · $0.0000 · 0 model calls   trace {TRACE}"
    assert lines[1].startswith("execute_tool \\x1b[31mbash") and lines[1].endswith("cancelled")
    assert lines[2].endswith("unanswered")
    assert lines[3].endswith("interrupted: server restart")
    assert lines[4] == "  … more spans than the 3 shown"


def test_durations() -> None:
    assert [duration(ms) for ms in (0.2, 12.4, 999.4, 1000, 61_234)] == [
        "<1 ms",
        "12 ms",
        "999 ms",
        "1.00 s",
        "61.23 s",
    ]


@pytest.mark.parametrize(
    ("arg", "session", "expected"),
    [
        ("", "ses_1", TraceGetParams(session_id="ses_1")),
        ("", None, None),
        (TRACE.upper(), None, TraceGetParams(trace_id=TRACE)),
        (" op_123 ", "ses_1", TraceGetParams(operation_id="op_123")),
    ],
)
def test_what_trace_asks_for(arg: str, session: str | None, expected: TraceGetParams | None) -> None:
    assert trace_params(arg, session) == expected
    assert NO_TRACE_YET == "No trace yet: send a message first."

"""The TUI's own behaviour without a server: the command palette, the guardrail dialog, an unreachable server."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Collapsible, Markdown, Static

from cowork.clients.connection import ServerAddress
from cowork.clients.tui import CoworkApp, TuiOptions
from cowork.clients.tui.screens import QuestionScreen
from cowork.clients.tui.state import UsageTotals
from cowork.clients.tui.widgets import ChatView, McpPanel, UsageBar
from cowork.protocol import PendingQuestion, PendingRequests, SessionInfo, parse_event

from ..samples import transcript, wire

pytestmark = pytest.mark.anyio

T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def test_the_command_palette_runs_app_commands() -> None:
    app = CoworkApp()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"toggle panels")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one("#panels").has_class("hidden")


async def test_a_guardrail_asks_continue_or_stop() -> None:
    app = CoworkApp()
    async with app.run_test(size=(120, 36)) as pilot:
        question = PendingQuestion(
            request_id="q1", session_id="s", operation_id="o", question="20 steps so far. Keep going?",
            kind="guardrail", created_at=T0,
        )  # fmt: skip
        app.state.subscribed(0, PendingRequests(questions=[question]))
        app.show_next_request()
        await pilot.pause()
        assert isinstance(app.screen, QuestionScreen) and app.screen.options == ["continue", "stop"]
        await pilot.press("enter")  # the first option; there is no server, so it says so and changes nothing else
        await pilot.pause()
        assert not isinstance(app.screen, QuestionScreen)
        assert [n.title for n in app._notifications] == ["disconnected"]


async def test_an_unreachable_server_shows_reconnecting_and_mcp_panel_states(tmp_path: Path) -> None:
    app = CoworkApp(TuiOptions(workspace=tmp_path, address=ServerAddress("http://127.0.0.1:9", None)))
    async with app.run_test(size=(120, 36)) as pilot:
        for _ in range(100):
            if app.connection != "connecting…":
                break
            await pilot.pause(0.05)
        assert app.connection == "disconnected; retrying…"
        panel = app.query_one(McpPanel)
        panel.unavailable()
        assert "MCP not available" in str(panel.render())
        panel.status({"name": "x", "status": "running"})  # an old server sends no mcp/status; ignored anyway
        assert "MCP not available" in str(panel.render())


async def test_every_event_type_is_shown_or_ignored_and_unknown_ones_get_a_neutral_line() -> None:
    app = CoworkApp()
    async with app.run_test(size=(120, 60)) as pilot:
        await app.show_session(
            SessionInfo(id="ses_1", title="t", workspace="/p", created_at=T0, updated_at=T0, last_seq=0)
        )
        app.state.subscribed(0, PendingRequests())  # everything that follows is live
        events = transcript("ses_1")
        for params in events:
            await app.apply_event(parse_event(params))
            await pilot.pause()  # let a request dialog mount before its resolution dismisses it
        assert app.state.last_seq == len(events) and app.state.running is None
        lines = []
        for child in app.query_one(ChatView).children:
            if isinstance(child, Markdown):
                lines.append(child.source)
            elif isinstance(child, Collapsible):
                lines.append(str(child.title))
            else:
                lines.append(str(child.render()))
        # The whole transcript: each type shown once (usage, todos and the title go to their panels), a sub-agent
        # as one line per tool call and one when it stops, then the neutral lines.
        assert lines == [
            "› Why does the build fail?",
            "The build fails.",  # the streamed chunk opened it, the complete message replaced its text
            "Sources: [1] docs/leave.md › Holiday policy",  # under the answer, though the citations came last
            "✻ thinking",
            "[cyan]●[/] [b]read[/b][dim](filePath=ci.log)[/dim][dim]  ⎿ 2 lines, 4 chars[/dim]",
            "  │ reading…",
            "✘ internal_error: a hiccup",
            "  ⎿ bash was interrupted by a restart; asking before running it again",
            "⏸ approval needed: bash — x",
            "  ✔ approved",
            "? question: Which one?",
            "  → a",
            "⟲ context compressed: 4 messages summarised (9,000 → 1,200 tokens)",
            "⚠ the same call three times",
            "◆ explore agent: find the config",
            "⇢ openai:gpt-test (cloud): tools",
            "⟳ provider error: trying again in 0.5 s (attempt 2 of 3)",
            "⚠ 80% of today's budget used ($0.80 of $1.00)",
            "  ↳ read(filePath=ci.log)",
            "  ↳ explore agent done",
            "· event hologram",
            "· event tool_call (unreadable: step: Input should be a valid integer, unable to parse string as an integer"
            " (+3 more))",
        ]
        assert [t.content for t in app.state.todos] == ["Read the log"]
        assert app.state.usage.input_tokens == 240  # the turn's and its sub-agent's
        assert app.sub_title == "The failing build"
        assert not app.state.approvals and not app.state.questions


@pytest.mark.parametrize(
    ("totals", "shown", "hidden"),
    [
        (UsageTotals(cost_known=False, day_cost_usd=0.0), "price unknown", "today"),
        (UsageTotals(cost_usd=0.25, day_cost_usd=1.5), "today $1.50", "unknown"),
    ],
)
async def test_the_usage_bar_says_today_only_when_something_priced_was_spent(
    totals: UsageTotals, shown: str, hidden: str
) -> None:
    app = CoworkApp()
    async with app.run_test(size=(120, 36)) as pilot:
        bar = app.query_one(UsageBar)
        bar.show("mock-model", totals, "connected")
        await pilot.pause()
        line = str(bar.render())
        assert shown in line and hidden not in line


def _citation(chunk: int, path: str, heading: str, origin: str = "search") -> dict[str, object]:
    return {"chunkId": chunk, "path": path, "title": path, "heading": heading, "similarity": None, "origin": origin}


async def test_an_answers_sources_go_under_it_numbered_across_its_operation_each_once() -> None:
    long_heading = "Employee handbook › Leave and absence › Holiday policy for part-time staff in their first year"
    turn: list[tuple[str, dict[str, Any]]] = [
        ("user_message", {"operationId": "op_a", "messageId": "m1", "text": "Days off?", "clientMessageId": "c1"}),
        ("citations", {"operationId": "op_a", "step": 0, "citations": [_citation(7, "docs/leave.md", "Holiday policy")]}),
        ("assistant_message", {"operationId": "op_a", "step": 0, "messageId": "m2", "text": "Let me look further."}),
        ("tool_call", {"operationId": "op_a", "step": 0, "toolCallId": "t1", "name": "searchDocuments",
                       "arguments": {"query": "part-time"}}),
        ("citations", {"operationId": "op_a", "step": 0, "citations": [
            _citation(7, "docs/leave.md", "Holiday policy", "tool"),
            _citation(9, "handbook.md", long_heading, "tool"),
            _citation(3, "<b>x</b>.md", "\x1b[31mred", "tool"),
        ]}),
        ("assistant_message", {"operationId": "op_a", "step": 1, "messageId": "m3", "text": "Twenty-five days."}),
        ("operation_status", {"operationId": "op_a", "status": "done"}),
        ("user_message", {"operationId": "op_b", "messageId": "m4", "text": "And then?", "clientMessageId": "c2"}),
        ("citations", {"operationId": "op_b", "step": 0, "citations": [_citation(9, "handbook.md", "", "backfill")]}),
        ("assistant_message", {"operationId": "op_b", "step": 0, "messageId": "m5", "text": "They expire."}),
        ("operation_status", {"operationId": "op_b", "status": "done"}),
    ]  # fmt: skip
    app = CoworkApp()
    async with app.run_test(size=(120, 60)) as pilot:
        await app.show_session(
            SessionInfo(id="ses_1", title="t", workspace="/p", created_at=T0, updated_at=T0, last_seq=0)
        )
        app.state.subscribed(0, PendingRequests())
        for seq, (kind, payload) in enumerate(turn, 1):
            await app.apply_event(parse_event(wire(seq, kind, payload)))
        await pilot.pause()
        chat = app.query_one(ChatView)
        lines = [
            child.source if isinstance(child, Markdown) else (child.render() if isinstance(child, Static) else "tool")
            for child in chat.children
        ]
        assert [str(line) for line in lines] == [
            "› Days off?",
            "Let me look further.",
            "tool",
            "Twenty-five days.",  # the newest answer: the sources moved under it, one number per passage
            "Sources: [1] docs/leave.md › Holiday policy · [2] handbook.md › … › Holiday policy for part-time staff…"
            " · [3] <b>x</b>.md › \\x1b[31mred",
            "› And then?",
            "They expire.",
            "Sources: [1] handbook.md",  # a new operation counts from 1; no heading, just the path
        ]
        sources = [child for child in chat.children if child.has_class("sources")]
        assert len(sources) == 2 and all(child.has_class("note") for child in sources)


async def test_the_usage_bar_shows_capture_while_it_records_and_while_paused() -> None:
    """`capture/status` notifications (as the server sends them) drive the REC indicator; off shows nothing."""
    app = CoworkApp()
    async with app.run_test(size=(120, 36)) as pilot:
        bar = app.query_one(UsageBar)
        assert "REC" not in str(bar.render())
        capturing = {"state": "capturing", "capturing": True, "current": {"app": "Fire\x1bfox", "title": "t"}}
        app._on_notification("capture/status", capturing)
        await pilot.pause()
        shown = str(bar.render())
        assert "● REC" in shown and "Fire\\x1bfox" in shown  # the application, its control characters made visible
        app._on_notification("capture/status", {"state": "paused", "capturing": False})
        await pilot.pause()
        assert "capture paused" in str(bar.render()) and "REC" not in str(bar.render())
        app._on_notification("capture/status", {"state": "off", "capturing": False})
        await pilot.pause()
        assert "REC" not in str(bar.render()) and "paused" not in str(bar.render())

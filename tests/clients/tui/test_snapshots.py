"""SVG snapshots of the TUI from a fixed app state (no server, clock, ids or ports on screen).

Update with `pytest tests/clients/tui/test_snapshots.py --snapshot-update` after a deliberate change, and look at
the SVGs under `__snapshots__/` before committing them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

from cowork.clients.tui import CoworkApp
from cowork.clients.tui.widgets import McpPanel
from cowork.protocol import SessionEvent, SessionInfo

SIZE = (120, 36)
T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def session(id_: str, title: str) -> SessionInfo:
    return SessionInfo(
        id=id_, title=title, workspace="/project", provider="openai", model="gpt-test",
        created_at=T0, updated_at=T0, last_seq=0,
    )  # fmt: skip


SESSIONS = [
    session("ses_b", "Fix the failing build"),
    session("ses_a", "Summarise the notes"),
    session("ses_c", "A session with a rather long title that does not fit"),
]


def events(session_id: str) -> list[SessionEvent]:
    op = "op_1"
    payloads: list[tuple[str, dict[str, Any]]] = [
        ("user_message", {"operationId": op, "messageId": "m1", "text": "Why does the build fail?", "clientMessageId": "c1"}),
        ("operation_status", {"operationId": op, "status": "running"}),
        ("reasoning", {"operationId": op, "step": 1, "text": "Look at the CI log first."}),
        ("todos", {"operationId": op, "todos": [
            {"content": "Read the CI log", "status": "completed"},
            {"content": "Fix the import", "status": "in_progress", "activeForm": "Fixing the import"},
            {"content": "Run the tests", "status": "pending"},
        ]}),
        ("tool_call", {"operationId": op, "step": 1, "toolCallId": "t1", "name": "read",
                       "arguments": {"filePath": "ci.log"}}),
        ("tool_result", {"operationId": op, "step": 1, "toolCallId": "t1", "name": "read", "isError": False,
                         "content": "line 1\nline 2\nImportError: no module named foo\n"}),
        ("tool_call", {"operationId": op, "step": 2, "toolCallId": "t2", "name": "shell",
                       "arguments": {"command": "pytest -q"}, "sideEffects": True, "needsApproval": True}),
        ("approval_requested", {"requestId": "r1", "operationId": op, "toolCallId": "t2", "name": "shell",
                                "arguments": {"command": "pytest -q"}, "reason": "runs a command"}),
        ("approval_resolved", {"requestId": "r1", "operationId": op, "toolCallId": "t2", "approved": True}),
        ("tool_result", {"operationId": op, "step": 2, "toolCallId": "t2", "name": "shell", "isError": True,
                         "content": "exit code 1: 2 failed"}),
        ("model_stream_chunk", {"operationId": op, "step": 3, "text": "The build fails because "}),
        ("model_stream_chunk", {"operationId": op, "step": 3, "text": "`foo` is **not installed**."}),
        ("assistant_message", {"operationId": op, "step": 3, "messageId": "m2",
                               "text": "The build fails because `foo` is **not installed**.\n\n- add it to the"
                                       " dependencies\n- run `uv lock`"}),
        ("usage", {"operationId": op, "step": 3, "provider": "openai", "model": "gpt-test", "inputTokens": 12345,
                   "outputTokens": 678, "costUsd": 0.0421, "dayCostUsd": 1.5}),
        ("operation_status", {"operationId": op, "status": "done"}),
    ]  # fmt: skip
    return [
        SessionEvent.model_validate(
            {"sessionId": session_id, "seq": seq, "ts": T0.isoformat(), "type": kind, "payload": payload}
        )
        for seq, (kind, payload) in enumerate(payloads, 1)
    ]


MCP: list[dict[str, Any]] = [
    {"name": "time", "transport": "stdio", "status": "running", "tools": [{"name": "now", "description": ""}] * 2},
    {"name": "github", "transport": "http", "status": "auth_required", "reason": "sign in needed", "tools": []},
    {"name": "broken", "transport": "stdio", "status": "error", "reason": "exited with code 1", "tools": []},
]


async def fill(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, CoworkApp)
    app.connection = "connected"
    app.query_one("#prompt", Input).cursor_blink = False  # a blinking cursor would make the snapshot flaky
    await app.show_session(SESSIONS[0])
    await app.show_sessions(SESSIONS)
    for event in events("ses_b"):
        await app.apply_event(event)
    app.query_one(McpPanel).load(MCP)
    await pilot.pause()


def test_main_screen(snap_compare: Any) -> None:
    assert snap_compare(CoworkApp(), terminal_size=SIZE, run_before=fill)


def test_main_screen_with_a_tool_call_expanded(snap_compare: Any) -> None:
    async def expand(pilot: Pilot[Any]) -> None:
        await fill(pilot)
        from cowork.clients.tui.widgets import ToolCallLine

        pilot.app.query(ToolCallLine).first().collapsed = False
        await pilot.pause()

    assert snap_compare(CoworkApp(), terminal_size=SIZE, run_before=expand)


def test_panels_hidden(snap_compare: Any) -> None:
    async def hide(pilot: Pilot[Any]) -> None:
        await fill(pilot)
        app = pilot.app
        assert isinstance(app, CoworkApp)
        app.action_toggle_sidebar()  # (Ctrl-B is the session switcher; the palette hides the sidebar)
        await pilot.press("ctrl+t")

    assert snap_compare(CoworkApp(), terminal_size=SIZE, run_before=hide)

"""The TUI's own behaviour without a server: the command palette, the guardrail dialog, an unreachable server."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from cowork.clients.connection import ServerAddress
from cowork.clients.tui import CoworkApp, TuiOptions
from cowork.clients.tui.screens import QuestionScreen
from cowork.clients.tui.widgets import McpPanel
from cowork.protocol import PendingQuestion, PendingRequests

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

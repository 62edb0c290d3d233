"""The TUI names the documents a turn made: a line per file with what is in it, for live results only."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowork.clients.tui.screens import ApprovalScreen
from cowork.testing.mockllm import MockLLMServer, MockResponse, tool_step
from cowork.testing.server import ServerProcess

from .test_tui import SIZE, app_for, chat_text, dialog, send, server, until

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
__all__ = ["server"]  # the fixture


async def test_a_document_the_turn_made_gets_a_line(
    server: ServerProcess, workspace: Path, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script(
        [
            tool_step("write", filePath="out/table.csv", content="region,q1\nNorth,120\nSouth,98\n"),
            tool_step("write", filePath="out/notes.txt", content="not a document\n"),
            MockResponse(text="Wrote the table."),
        ]
    )
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        await send(pilot, "make the table")
        await dialog(pilot, ApprovalScreen)
        await pilot.click("#approve")
        await dialog(pilot, ApprovalScreen)
        await pilot.click("#approve")
        await until(pilot, lambda: "Wrote the table." in chat_text(app) and app.state.running is None)
        await until(pilot, lambda: "📄 out/table.csv — " in chat_text(app))
        line = next(line for line in chat_text(app).splitlines() if "📄 out/table.csv" in line)
        assert "3 rows × 2 columns" in line and line.rstrip().endswith(" B")
        assert "📄 out/notes.txt" not in chat_text(app)  # not a document

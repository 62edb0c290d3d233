"""`/trace` in the TUI through Textual's Pilot, against a real server and the mock LLM: the last turn's spans in a
dialog (the wait for approval among them), closed with Esc or q, the focus back on the prompt; a plain note when there
is nothing to show."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Static

from cowork.clients.tui.screens import ApprovalScreen
from cowork.clients.tui.trace_screen import TraceScreen
from cowork.testing.mockllm import MockLLMServer, MockResponse, tool_step
from cowork.testing.server import ServerProcess

from .test_tui import SIZE, app_for, chat_text, dialog, send, server, until

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
ARTIFACTS = Path(__file__).resolve().parents[3] / "artifacts" / "tui"
"""Screenshots (SVG) of the dialogs, to look at before a release."""
__all__ = ["server"]  # the fixture


async def test_trace_shows_the_last_turn_in_a_dialog(
    server: ServerProcess, workspace: Path, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script(
        [tool_step("mark", label="trace"), tool_step("read", filePath="README.md"), MockResponse(text="Marked it.")]
    )
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        await send(pilot, "/trace")
        await until(pilot, lambda: "No trace yet: send a message first." in chat_text(app))
        assert not isinstance(app.screen, TraceScreen)

        await send(pilot, "mark it")
        await dialog(pilot, ApprovalScreen)
        await pilot.click("#approve")
        await until(pilot, lambda: "Marked it." in chat_text(app) and app.state.running is None)

        await send(pilot, "/trace")
        await until(pilot, lambda: isinstance(app.screen, TraceScreen))
        await pilot.pause(0.1)
        screen = app.screen
        shown = str(screen.query_one("#trace-text", Static).render())
        lines = shown.splitlines()
        assert "· 3 model calls   trace " in lines[0] and " tokens in · " in lines[0]
        assert lines[-1] == "  ━ working   ░ waiting for your approval"  # the legend, as a wait is in it
        names = [line[:34].rstrip() for line in lines[1:-1]]  # the name column, indented by depth
        assert names == [
            "invoke_agent cowork",
            "  step 1",
            "    chat mock-model",
            "    approval mark",
            "    execute_tool mark",
            "  step 2",
            "    chat mock-model",
            "    execute_tool read",
            "  step 3",
            "    chat mock-model",
        ]
        assert next(line for line in lines if "approval mark" in line).endswith("approved")
        assert screen.focused is not None and screen.focused.id == "trace-body"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        app.save_screenshot("trace.svg", str(ARTIFACTS))

        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, TraceScreen))
        assert app.focused is app.query_one("#prompt", Input)
        assert app.state.running is None  # Esc closed the dialog; it cancelled nothing

        # q closes it too; an operation with no trace gets the server's sentence, as a note.
        await send(pilot, "/trace")
        await until(pilot, lambda: isinstance(app.screen, TraceScreen))
        await pilot.press("q")
        await until(pilot, lambda: not isinstance(app.screen, TraceScreen))
        assert app.focused is app.query_one("#prompt", Input)
        await send(pilot, "/trace op_nothing")
        await until(pilot, lambda: "No trace stored for operation op_nothing" in chat_text(app))
        assert not [n for n in app._notifications if n.severity == "error"]

"""The TUI's approval dialog as a person uses it: the diff an edit would make, allow for this session, and a
dangerous call whose dialog is red with focus on Reject (so Enter rejects)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button, Static

from cowork.clients.tui.screens import ApprovalScreen
from cowork.clients.tui.widgets import SessionItem, ToolCallLine
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall
from cowork.testing.server import ServerProcess

from .test_tui import SIZE, app_for, chat_text, dialog, send, server, until

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
ARTIFACTS = Path(__file__).resolve().parents[3] / "artifacts" / "tui"
"""Screenshots (SVG) of the dialogs, to look at before a release."""
__all__ = ["server"]  # the fixture


def bash(command: str) -> MockResponse:
    return MockResponse(tool_calls=[MockToolCall(name="bash", arguments={"command": command, "description": "t"})])


async def test_an_edit_approval_shows_the_diff_and_allow_for_session_stops_asking(
    server: ServerProcess, workspace: Path, mock_llm: MockLLMServer
) -> None:
    (workspace / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    edit = {"filePath": "notes.txt", "oldString": "beta", "newString": "BETA"}
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="edit", arguments=edit)]),
            bash("touch one.txt"),
            bash("touch two.txt"),
            MockResponse(text="Tidied."),
        ]
    )
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        await send(pilot, "tidy")
        screen = await dialog(pilot, ApprovalScreen)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        app.save_screenshot("approval-diff.svg", str(ARTIFACTS))
        preview = str(screen.query_one("#preview", Static).render())
        assert "-beta" in preview and "+BETA" in preview
        assert "oldString" not in str(screen.query_one("#arguments").query(Static).first().render())
        assert app.screen.focused is not None and app.screen.focused.id == "approve"
        await pilot.click("#approve")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen is not screen)
        screen = await dialog(pilot, ApprovalScreen)
        allow = screen.query_one("#allow-session", Button)
        assert "commands starting with touch" in str(allow.label)
        await pilot.click("#allow-session")
        await until(pilot, lambda: "Tidied." in chat_text(app))
        assert (workspace / "one.txt").exists() and (workspace / "two.txt").exists()
        edited = next(line for line in app.query(ToolCallLine) if line.call.name == "edit")
        assert edited.result is not None and edited.result.diff and not edited.collapsed
        await send(pilot, "/diff")
        await until(pilot, lambda: "modified notes.txt" in chat_text(app))


async def test_a_dangerous_call_is_red_and_enter_rejects_it(
    server: ServerProcess, workspace: Path, mock_llm: MockLLMServer
) -> None:
    (workspace / "build").mkdir()
    mock_llm.set_script([bash("rm -rf build"), MockResponse(text="Kept it.")])
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        await send(pilot, "clean")
        screen = await dialog(pilot, ApprovalScreen)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        app.save_screenshot("approval-dangerous.svg", str(ARTIFACTS))
        assert screen.query_one("#dialog").has_class("dangerous")
        assert not screen.query("#allow-session")  # never offered for a dangerous call
        assert "rm -r deletes folders" in str(screen.query_one("#reason", Static).render())
        assert app.screen.focused is not None and app.screen.focused.id == "reject"
        await pilot.press("enter")
        await until(pilot, lambda: "Kept it." in chat_text(app))
        (line,) = app.query(ToolCallLine)
        assert line.result is not None and line.result.rejected
    assert (workspace / "build").is_dir()


async def test_slash_commands_are_run_here_and_never_sent_to_the_model(
    server: ServerProcess, workspace: Path, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([MockResponse(text="About that path.")])
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        await send(pilot, "/help")
        await until(pilot, lambda: "/sessions [--all]" in chat_text(app))
        assert "/mcp" not in chat_text(app)  # the REPL's only: /help lists what works here
        await send(pilot, "/frobnicate")
        await until(pilot, lambda: "Unknown command /frobnicate" in chat_text(app))
        assert not mock_llm.requests
        await send(pilot, "/usr/bin is slow")  # a path: a message for the model
        await until(pilot, lambda: "About that path." in chat_text(app))
        await send(pilot, "/sessions")
        await until(pilot, lambda: "/usr/bin is slow" in chat_text(app).split("/resume ID opens one")[0][-400:])
        first = app.session
        await send(pilot, "/clear")
        await until(pilot, lambda: app.session is not None and first is not None and app.session.id != first.id)
        await send(pilot, "/network on")
        await until(pilot, lambda: "network on" in chat_text(app))
        await until(pilot, lambda: app.session is not None and app.session.network)
        await send(pilot, "/model openai:mock-reasoning-model")
        await until(pilot, lambda: app.model_label == "openai:mock-reasoning-model")
        await send(pilot, "/model bogus:model")
        await until(pilot, lambda: any("does not serve 'bogus:model'" in str(n.message) for n in app._notifications))
        assert len(mock_llm.requests) == 1


async def test_launching_again_reuses_the_last_launchs_empty_session(server: ServerProcess, workspace: Path) -> None:
    first = app_for(server, workspace)
    async with first.run_test(size=SIZE) as pilot:
        await until(pilot, first.connected.is_set)
        assert first.session is not None
        left_empty = first.session.id
    again = app_for(server, workspace)
    async with again.run_test(size=SIZE) as pilot:
        await until(pilot, again.connected.is_set)
        await until(pilot, lambda: len(again.query(SessionItem)) >= 1)
        shown = [item.session.id for item in again.query(SessionItem)]
        assert again.session is not None and again.session.id == left_empty and shown == [left_empty]

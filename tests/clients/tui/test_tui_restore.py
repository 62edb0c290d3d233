"""`/undo` and `/rewind N` in the TUI through Textual's Pilot, against a real server and the mock LLM: a dialog with
the diff (focus on Cancel, so Enter changes nothing), files changed outside Cowork as a warning, and the files back
on disk; rewinding the conversation goes on in a new session with the message in the prompt."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from cowork.clients.tui.screens import RestoreScreen
from cowork.testing.mockllm import MockLLMServer, MockResponse, tool_step
from cowork.testing.server import ServerProcess, provider_env

from .test_tui import SIZE, answered_with, app_for, chat_text, dialog, send, until

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def server(tmp_path: Path, workspace: Path, mock_llm: MockLLMServer) -> Iterator[ServerProcess]:
    env = provider_env("openai", mock_llm.openai_base_url) | {
        "COWORK_TOOLS__AUTO_APPROVE": json.dumps(["write", "edit"])
    }
    with ServerProcess(tmp_path / "server-home", workspace, env=env) as proc:
        yield proc


async def test_undo_and_rewind_ask_in_a_dialog_then_restore_the_files(
    server: ServerProcess, workspace: Path, mock_llm: MockLLMServer
) -> None:
    (workspace / "notes.txt").write_text("alpha\n", encoding="utf-8")
    mock_llm.set_script(
        [
            tool_step("edit", filePath="notes.txt", oldString="alpha", newString="ALPHA"),
            MockResponse(text="edited it"),
            tool_step("write", filePath="new.txt", content="made by the agent\n"),
            MockResponse(text="wrote it"),
        ]
    )
    app = app_for(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.connected.is_set)
        for text, answer in (("edit the notes", "edited it"), ("write a file", "wrote it")):
            await send(pilot, text)
            await until(pilot, answered_with(app, answer))
        assert (workspace / "new.txt").exists()

        # Enter on the dialog (the focus is on Cancel) changes nothing.
        await send(pilot, "/undo")
        screen = await dialog(pilot, RestoreScreen)
        diff = str(screen.query_one("#restore-diff", Static).render())
        assert "deleted new.txt" in diff and "-made by the agent" in diff
        assert "(write, in your message 2)" in str(screen.query_one("#question-text", Static).render())
        assert not screen.query("#reason")  # no file was changed outside Cowork
        assert screen.focused is not None and screen.focused.id == "cancel"
        await pilot.press("enter")
        await until(pilot, lambda: any("Nothing was changed" in str(n.message) for n in app._notifications))
        assert (workspace / "new.txt").exists()

        await send(pilot, "/undo")
        await dialog(pilot, RestoreScreen)
        await pilot.click("#undo")
        await until(pilot, lambda: "Files restored: new.txt (removed)." in chat_text(app))
        assert not (workspace / "new.txt").exists()
        assert (workspace / "notes.txt").read_text(encoding="utf-8") == "ALPHA\n"

        # Without a number: how to use it and the messages, numbered as the server counts them.
        await send(pilot, "/rewind")
        await until(pilot, lambda: "Usage: /rewind N" in chat_text(app))
        assert " 1. edit the notes\n   2. write a file" in chat_text(app)
        await send(pilot, "/rewind 3")
        await until(pilot, lambda: "rewind to before one of 1 to 2" in chat_text(app))

        # A file changed by hand since: the dialog warns; Both restores it and goes on in a new session.
        (workspace / "notes.txt").write_text("mine\n", encoding="utf-8")
        source = app.session
        assert source is not None
        await send(pilot, "/rewind 1")
        screen = await dialog(pilot, RestoreScreen)
        assert "before your message 1 (“edit the notes”)" in str(screen.query_one("#question-text", Static).render())
        assert "-mine" in str(screen.query_one("#restore-diff", Static).render())
        warning = str(screen.query_one("#reason", Static).render())
        assert "changed outside Cowork since: notes.txt — restoring the files overwrites that" in warning
        assert screen.focused is not None and screen.focused.id == "cancel"
        await pilot.click("#both")
        await until(pilot, lambda: app.session is not None and app.session.id != source.id)
        assert (workspace / "notes.txt").read_text(encoding="utf-8") == "alpha\n"
        prompt = app.query_one("#prompt", Input)
        await until(pilot, lambda: prompt.value == "edit the notes")
        assert any(f"/resume {source.id}" in str(n.message) for n in app._notifications)
        assert any(s.id == source.id for s in app.sessions)  # the old session stays

        # The new session has nothing to undo: the server's words, as a note.
        await send(pilot, "/undo")
        await until(pilot, lambda: "Nothing to undo" in chat_text(app))

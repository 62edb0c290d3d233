"""`/undo` and `/rewind N` in the REPL, in a real pty against a real server and the mock LLM: the diff first, a
question whose Enter changes nothing, files changed outside Cowork as a warning, and the files back on disk."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pexpect
import pytest

from cowork.testing.mockllm import MockLLMServer, MockResponse, tool_step
from cowork.testing.server import provider_env

from .test_cli import PROMPT, cli_env, screen, spawn

pytestmark = pytest.mark.slow
__all__ = ["cli_env"]  # the fixture, imported for these tests


def said_since(child: pexpect.spawn, mark: int) -> str:
    return " ".join(screen(child)[mark:].split())


def test_undo_and_rewind_show_the_diff_ask_then_restore_the_files(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str]
) -> None:
    (workspace / "notes.txt").write_text("alpha\n", encoding="utf-8")
    mock_llm.set_script(
        [
            tool_step("write", filePath="new.txt", content="made by the agent\n"),
            MockResponse(text="wrote it"),
            tool_step("edit", filePath="notes.txt", oldString="alpha", newString="ALPHA"),
            MockResponse(text="edited it"),
            MockResponse(text="fresh start"),
        ]
    )
    env = cli_env | provider_env("openai", mock_llm.openai_base_url)
    child = spawn(workspace, env | {"COWORK_TOOLS__AUTO_APPROVE": json.dumps(["write", "edit"])})
    child.expect(PROMPT)
    child.send("/undo\r")
    child.expect("Nothing to undo")
    child.expect(PROMPT)
    for text, answer in (("write a file", "wrote it"), ("edit the notes", "edited it")):
        child.send(f"{text}\r")
        child.expect(answer)
        child.expect(PROMPT)
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "ALPHA\n"

    # The preview, then Enter: nothing changes.
    mark = len(screen(child))
    child.send("/undo\r")
    child.expect("Undo this change\\? \\[y/N\\]")
    shown = said_since(child, mark)
    assert "The last change to the files (edit, in your message 2). Undoing it changes:" in shown
    assert "modified notes.txt +1 -1" in shown and "-ALPHA +alpha" in shown
    child.send("\r")
    child.expect("Nothing was changed")
    child.expect(PROMPT)
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "ALPHA\n"

    child.send("/undo\r")
    child.expect("Undo this change\\?")
    child.send("y\r")
    child.expect("Files restored: notes.txt \\(restored\\)")
    child.expect(PROMPT)
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "alpha\n"

    # Without a number (or with one the session does not have): how to use it, and the messages numbered.
    mark = len(screen(child))
    child.send("/rewind\r")
    child.expect("edit the notes")
    child.expect(PROMPT)
    shown = said_since(child, mark)
    assert "Usage: /rewind N" in shown and "1. write a file 2. edit the notes" in shown
    child.send("/rewind 5\r")
    child.expect("rewind to before one of 1 to 2")
    child.expect("edit the notes")
    child.expect(PROMPT)

    # A file changed by hand since: the preview warns, and the restore (accepted) overwrites it.
    (workspace / "new.txt").write_text("changed by me\n", encoding="utf-8")
    mark = len(screen(child))
    child.send("/rewind 1\r")
    child.expect("Restore \\[f\\]iles, \\[c\\]onversation, \\[b\\]oth, or Enter to cancel:")
    shown = said_since(child, mark)
    assert "Going back to before your message 1 (“write a file”)" in shown and "deleted new.txt +0 -1" in shown
    assert "-changed by me" in shown
    assert "⚠ changed outside Cowork since: new.txt — restoring the files overwrites that" in shown
    child.send("\r")
    child.expect("Nothing was changed")
    child.expect(PROMPT)
    assert (workspace / "new.txt").exists()
    child.send("/rewind 1\r")
    child.expect("or Enter to cancel:")
    mark = len(screen(child))
    child.send("b\r")
    child.expect("Your message 1 is at the prompt")
    child.expect("write a file")  # put at the prompt, to send again or change
    shown = said_since(child, mark)
    assert "Files restored: new.txt (removed)." in shown
    assert re.search(
        r"Now in “write a file \(fork\)” \(ses_\w+\), holding 0 of your messages\. The original stays: "
        r"/resume ses_\w+",
        shown,
    )
    assert not (workspace / "new.txt").exists()
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "alpha\n"
    mark = len(screen(child))
    child.send("\r")
    child.expect("fresh start")
    child.expect(PROMPT)
    assert "Took back" not in said_since(child, mark)  # the restores' log lines are the old session's
    # The new session holds none of the old conversation: the model saw only the message sent again.
    assert [m["content"] for m in mock_llm.requests[-1].messages if m["role"] == "user"] == ["write a file"]
    mark = len(screen(child))
    child.send("/undo\r")
    child.expect("no change to its folder's files left to take back")  # the server's words, said plainly
    child.expect(PROMPT)
    assert "nothing_to_undo" not in said_since(child, mark)
    child.send("/quit\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

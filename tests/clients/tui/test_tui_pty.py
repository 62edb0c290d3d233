"""`cowork tui` in a real pseudo-terminal, as a person runs it: a turn with an approval answered from the keyboard,
then quitting with Ctrl-Q, and quitting from the command palette. (A TUI that could not be quit once shipped
because only the pilot drove it.)"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pexpect
import pytest

from cowork.testing.core import TEST_TOOLS_PLUGIN
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall
from cowork.testing.server import provider_env

from ..test_cli import cli_env, screen, spawn

pytestmark = pytest.mark.slow
__all__ = ["cli_env"]  # the fixture


def spawn_tui(workspace: Path, env: dict[str, str]) -> pexpect.spawn:
    return spawn(workspace, env, "tui", dimensions=(40, 130))


def pump(child: pexpect.spawn, seconds: float) -> None:
    """Keep reading the screen for a while (a full pty would block the app)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            child.read_nonblocking(65536, timeout=0.1)
        except pexpect.TIMEOUT:
            pass


def wait_for(child: pexpect.spawn, text: str, timeout: float = 30.0) -> None:
    """Until `text` is on the screen (Textual moves the cursor between runs of text, so plain `expect` can miss it)."""
    deadline = time.monotonic() + timeout
    while text not in screen(child).replace("\n", ""):
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} never appeared; the screen ends with:\n{screen(child)[-1500:]}")
        try:
            child.read_nonblocking(65536, timeout=0.2)
        except pexpect.TIMEOUT:
            pass


def test_a_turn_with_an_approval_then_ctrl_q(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    mock_llm.set_script(
        [MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": "pty"})]), MockResponse(text="Marked.")]
    )
    marks = tmp_path / "marks.txt"
    env = cli_env | provider_env("openai", mock_llm.openai_base_url)
    env |= {"COWORK_TOOLS__PLUGINS": json.dumps([TEST_TOOLS_PLUGIN]), "COWORK_TEST_MARKS": str(marks)}
    child = spawn_tui(workspace, env)
    wait_for(child, "connected")
    wait_for(child, "New session")  # (the footer says it too: Enter before the session is open is kept, then sent)
    pump(child, 1.0)
    child.send("please mark it")
    wait_for(child, "please mark it")
    pump(child, 1.0)  # typed, then Enter as its own key (not part of one burst of input)
    child.send("\r")
    wait_for(child, "Approve")
    wait_for(child, "Reject")
    child.send("\r")  # Approve has the focus
    wait_for(child, "Marked")
    assert marks.read_text(encoding="utf-8") == "mark pty\n"
    child.send("\x11")  # Ctrl-Q
    child.expect(pexpect.EOF, timeout=20)
    child.close()
    assert child.exitstatus == 0


def test_quit_from_the_command_palette(workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str]) -> None:
    env = cli_env | provider_env("openai", mock_llm.openai_base_url)
    child = spawn_tui(workspace, env)
    wait_for(child, "connected")
    child.send("\x10")  # Ctrl-P
    wait_for(child, "Search for commands")
    child.send("quit")
    wait_for(child, "Quit")
    pump(child, 0.5)
    child.send("\r")
    child.expect(pexpect.EOF, timeout=20)
    child.close()
    assert child.exitstatus == 0

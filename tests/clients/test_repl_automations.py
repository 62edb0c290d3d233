"""Automations and notifications in the REPL (a real pty, a real auto-started server): a notification step's
`notification/delivered` as a line above the prompt, answered with `/notifications dismiss ID`; a run that waits for
approval as a line naming `/automation approve RUN`, approved from the prompt; `/automation run` asking in place."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from cowork.testing.mockllm import MockLLMServer

from .test_cli import PROMPT, cli_env, screen
from .test_repl_approvals import quit_, start

pytestmark = pytest.mark.slow
__all__ = ["cli_env"]  # the fixture, imported for these tests

PING = """\
name: ping
steps:
  - id: tell
    type: notification
    tier: urgent
    title: "Build [red]done[/red]"
    body: All green
"""

HELLO = """\
name: hello
steps:
  - id: greet
    type: toolCall
    tool: write
    arguments: {filePath: hello.txt, content: hello}
"""


def shown(child: pexpect.spawn, text: str, within: float = 40.0) -> None:
    """Wait until the screen shows `text` (styles may split it in the raw output, so `expect` cannot find it)."""
    deadline = time.monotonic() + within
    while text not in screen(child):
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} not shown; the screen:\n{screen(child)[-3000:]}")
        try:
            child.expect(r"\S", timeout=0.2)
        except pexpect.TIMEOUT:
            pass


def outside(workspace: Path, env: dict[str, str], *args: str) -> str:
    """`cowork automation ARGS…` from another process, on the server the REPL started."""
    done = subprocess.run(
        [sys.executable, "-m", "cowork", "automation", *args],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_notification_is_a_line_above_the_prompt_and_is_dismissed(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (workspace / "ping.yaml").write_text(PING, encoding="utf-8")
    child = start(workspace, mock_llm, cli_env, tmp_path)
    child.send("/automation import ping.yaml\r")
    shown(child, "Imported ping")
    child.expect(PROMPT)
    outside(workspace, cli_env, "run", "ping", "--no-wait")
    shown(child, "All green")
    child.expect(r"/notifications accept\|dismiss\|snooze ([0-9a-f]+)")
    note_id = child.match.group(1)
    line = next(line for line in screen(child).splitlines() if "All green" in line)
    assert "● Build [red]done[/red] — All green" in line  # server text shown as typed, never as markup
    child.expect(PROMPT)  # drawn again under the line

    child.send(f"/notifications dismiss {note_id}\r")
    shown(child, "Dismissed: Build [red]done[/red]")
    child.expect(PROMPT)
    child.send("/notifications\r")
    child.expect(note_id)
    child.expect(PROMPT)
    row = [line for line in screen(child).splitlines() if line.startswith(note_id)][-1]
    assert "urgent" in row and row.rstrip().endswith("dismiss")  # its answer
    child.send("/help\r")
    shown(child, "/notifications [accept|dismiss|snooze|expand ID]")  # a usage's brackets are not markup
    child.expect(PROMPT)
    child.send("/notifications frobnicate x\r")
    child.expect("Usage: /notifications")
    child.expect(PROMPT)
    quit_(child)


def test_a_waiting_run_is_a_line_and_is_approved_from_the_prompt(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (workspace / "hello.yaml").write_text(HELLO, encoding="utf-8")
    child = start(workspace, mock_llm, cli_env, tmp_path)
    child.send("/tools write always\r")
    child.expect("write: always")
    child.expect(PROMPT)
    child.send("/automation import hello.yaml\r")
    shown(child, "Imported hello")
    child.expect(PROMPT)

    started = outside(workspace, cli_env, "run", "hello", "--no-wait")
    run_id = started.split()[1].rstrip(":")
    shown(child, f"automation hello (run {run_id}) waits for approval")
    shown(child, f"/automation approve {run_id} · /automation reject {run_id}")
    child.expect(PROMPT)
    flat = " ".join(screen(child).split())
    assert "write(filePath=hello.txt, content=hello)" in flat
    assert flat.count("waits for") == 1  # its urgent notification is not said twice
    assert not (workspace / "hello.txt").exists()

    child.send(f"/automation approve {run_id}\r")
    shown(child, f"Approved: hello · run {run_id}")
    shown(child, "✔ greet")
    shown(child, "done in")
    child.expect(PROMPT)
    assert (workspace / "hello.txt").read_text(encoding="utf-8") == "hello"

    # Run from the prompt, the approval is asked in place (and no line is printed for it).
    (workspace / "hello.txt").unlink()
    child.send("/automation run hello\r")
    child.expect(r"Run this step\? \[y/n\]")
    child.send("n\r")
    shown(child, "rejected")
    shown(child, "failed in")
    child.expect(PROMPT)
    assert not (workspace / "hello.txt").exists()
    child.send("/automations\r")
    child.expect("failed")
    child.expect(PROMPT)
    child.send("/automation frobnicate\r")
    child.expect("invalid choice")
    child.expect(PROMPT)
    quit_(child)

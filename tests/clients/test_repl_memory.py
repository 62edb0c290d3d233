"""`/memory` in the REPL (a real pty, a real server): list what is remembered, read it, correct it in $EDITOR,
forget it after a yes."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest

from cowork.testing.mockllm import MockLLMServer, MockResponse

from .test_cli import PROMPT, cli_env, screen
from .test_repl_approvals import quit_, start

pytestmark = pytest.mark.slow
__all__ = ["cli_env"]  # the fixture, imported for these tests


def test_list_show_edit_and_forget(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (workspace / "AGENT.md").write_text("Sarah is the CFO.\n", encoding="utf-8")
    people = Path(cli_env["COWORK_HOME"]) / "memory" / "people"
    people.mkdir(parents=True)
    (people / "tom.md").write_text("Tom works on design.\n", encoding="utf-8")
    editor = tmp_path / "editor.sh"  # what a person does in $EDITOR: change the text and save
    editor.write_text('#!/bin/sh\nsed -i "s/CFO/CEO/" "$1"\n', encoding="utf-8")
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    child = start(workspace, mock_llm, cli_env | {"EDITOR": str(editor), "VISUAL": ""}, tmp_path)

    child.send("/memory\r")
    child.expect("user:people/tom")
    child.expect(PROMPT)
    listing = screen(child)
    assert "AGENT.md (every conversation)" in listing
    child.send("/memory show user:people/tom\r")
    child.expect("Tom works on design.")
    child.expect(PROMPT)
    child.send("/memory edit AGENT.md\r")
    child.expect("Saved AGENT.md \\(1 lines\\)")
    child.expect(PROMPT)
    assert (workspace / "AGENT.md").read_text(encoding="utf-8") == "Sarah is the CEO.\n"
    child.send("/memory forget user:people/tom\r")
    child.expect("\\[y/N\\]")
    child.send("\r")
    child.expect("Nothing was forgotten")
    child.expect(PROMPT)
    child.send("/memory forget user:people/tom\r")
    child.expect("\\[y/N\\]")
    child.send("y\r")
    child.expect("Forgot user:people/tom")
    child.expect(PROMPT)
    assert not (people / "tom.md").exists()
    child.send("/memory show ../../etc/passwd\r")
    child.expect("Invalid memory key")
    child.expect(PROMPT)
    child.send("/memory show nothing\r")
    child.expect("No project memory named")
    child.expect(PROMPT)
    quit_(child)


def test_the_profile_is_shown_set_and_forgotten(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    child = start(workspace, mock_llm, cli_env, tmp_path)
    child.send("/memory profile\r")
    child.expect("Your profile is empty")
    child.expect(PROMPT)
    child.send("/memory profile set Tone short answers\r")
    child.expect("in every conversation")
    child.expect(PROMPT)
    shown = screen(child)
    assert "│ tone │ short answers │ user │" in shown
    child.send("/memory profile set a/b x\r")
    child.expect("Invalid profile key")
    child.expect(PROMPT)
    child.send("/memory profile forget nickname\r")
    child.expect("No profile entry 'nickname'")
    child.expect(PROMPT)
    child.send("/memory profile set\r")
    child.expect("Usage: /memory profile")
    child.expect(PROMPT)
    child.send("/memory profile forget tone\r")
    child.expect("Your profile is empty")
    child.expect(PROMPT)
    quit_(child)


def test_observe_this_conversation_and_see_the_observations(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    mock_llm.set_script([MockResponse(text="Noted, Ada."), MockResponse(text="- Ada prefers tea to coffee.")])
    child = start(workspace, mock_llm, cli_env, tmp_path)
    child.send("/memory observe\r")
    child.expect("No conversation yet")
    child.expect(PROMPT)
    child.send("I'm Ada; tea, never coffee.\r")
    child.expect("Noted, Ada.")
    child.expect(PROMPT)
    child.send("/memory observe\r")
    child.expect("Observing this conversation")
    child.expect(PROMPT)
    for _ in range(50):  # the observation is noted in the background
        child.send("/memory observations\r")
        if child.expect(["Ada prefers tea to coffee", "No observations in this folder yet"]) == 0:
            break
        child.expect(PROMPT)
        time.sleep(0.2)
    else:
        raise AssertionError("no observation was noted")
    child.expect(PROMPT)
    child.send("/memory observations forget nope\r")
    child.expect("No observations 'nope'")
    child.expect(PROMPT)
    quit_(child)


def test_pin_and_unpin_a_file(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (workspace / "docs" / "kitchen.md").write_text("# Kitchen\n\nThe coffee machine is descaled every Friday.\n")
    mock_llm.set_script([MockResponse(text="Fridays.")])
    child = start(workspace, mock_llm, cli_env, tmp_path)
    child.send("/pin\r")
    child.expect("Nothing pinned")
    child.expect(PROMPT)
    child.send("/pin docs/kitchen.md\r")
    child.expect("Pinned docs/kitchen.md")
    child.expect(PROMPT)
    child.send("/pin ../../etc/passwd\r")
    child.expect("Refusing")
    child.expect(PROMPT)
    for _ in range(100):  # indexed in the background
        child.send("/pin\r")
        if child.expect(["not indexed yet", r"│ docs/kitchen.md │ 1 "]) == 1:
            break
        child.expect(PROMPT)
        time.sleep(0.1)
    child.expect(PROMPT)
    child.send("when is the machine descaled?\r")
    child.expect("Fridays.")
    child.expect(PROMPT)
    assert "descaled every Friday" in (mock_llm.requests[-1].system or "")
    child.send("/unpin docs/kitchen.md\r")
    child.expect("Nothing pinned")
    child.expect(PROMPT)
    child.send("/unpin docs/kitchen.md\r")
    child.expect("is not pinned")
    child.expect(PROMPT)
    quit_(child)

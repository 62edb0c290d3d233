"""The REPL in a real pty, as a person answers approvals: the diff an edit would make, allow for this session,
a dangerous call that Enter rejects, a rejection shown once; slash commands that never reach the model; untrusted
text that cannot drive the terminal."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pexpect
import pytest

from cowork.testing.core import TEST_TOOLS_PLUGIN
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall
from cowork.testing.server import provider_env

from .test_cli import PROMPT, cli_env, screen, spawn

pytestmark = pytest.mark.slow
__all__ = ["cli_env"]  # the fixture, imported for these tests


def bash(command: str) -> MockResponse:
    return MockResponse(tool_calls=[MockToolCall(name="bash", arguments={"command": command, "description": "t"})])


def start(workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path) -> pexpect.spawn:
    env = cli_env | provider_env("openai", mock_llm.openai_base_url)
    env |= {"COWORK_TOOLS__PLUGINS": json.dumps([TEST_TOOLS_PLUGIN]), "COWORK_TEST_MARKS": str(tmp_path / "m")}
    child = spawn(workspace, env)
    child.expect(PROMPT)
    return child


def quit_(child: pexpect.spawn) -> None:
    child.send("/quit\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_an_edit_shows_its_diff_and_allow_for_the_session_stops_asking(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (workspace / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    mock_llm.set_script(
        [
            MockResponse(
                tool_calls=[
                    MockToolCall(
                        name="edit", arguments={"filePath": "notes.txt", "oldString": "beta", "newString": "BETA"}
                    )
                ]
            ),
            bash("touch one.txt"),
            bash("touch two.txt"),
            MockResponse(text="All done."),
        ]
    )
    child = start(workspace, mock_llm, cli_env, tmp_path)
    child.send("tidy up\r")
    child.expect("approve\\?")
    child.expect("Allow\\?")
    shown = screen(child)
    assert "-beta" in shown and "+BETA" in shown and "@@" in shown  # a diff, not raw JSON
    assert "[a]llow for this session: edit" in shown
    child.send("y\r")
    child.expect("Allow\\?")
    child.expect("llow for this session: commands starting with touch ›")
    child.send("a\r")
    child.expect("allowed for this session: commands starting with touch")
    child.expect("All done")
    child.expect(PROMPT)
    assert (workspace / "one.txt").exists() and (workspace / "two.txt").exists()
    transcript = screen(child)
    assert transcript.count("approve?") == 2  # the second touch did not ask
    assert "+BETA" in transcript.split("Allow?")[-1] or "+BETA" in transcript  # the change's diff under the result
    child.send("/diff\r")
    child.expect("modified.{0,20}notes\\.txt")
    child.expect(PROMPT)
    quit_(child)


def test_enter_rejects_a_dangerous_call_and_the_rejection_shows_once(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (workspace / "build").mkdir()
    mock_llm.set_script([bash("rm -rf build"), MockResponse(text="Left it alone.")])
    child = start(workspace, mock_llm, cli_env, tmp_path)
    child.send("clean the build\r")
    child.expect("dangerous")
    child.expect("Enter rejects")
    assert "llow for this session" not in screen(child)
    child.send("\r")
    child.expect("Left it alone")
    child.expect(PROMPT)
    assert (workspace / "build").is_dir()
    assert screen(child).count("Rejected by the user") == 1
    quit_(child)


def test_slash_commands_never_reach_the_model(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    mock_llm.set_script([MockResponse(text="A path, then: \x1b]0;pwned\x07\x1b[31mred")] * 2)
    child = start(workspace, mock_llm, cli_env, tmp_path)
    child.send("/help\r")
    child.expect("/clear")
    child.expect(PROMPT)
    child.send("/frobnicate now\r")
    child.expect("Unknown command /frobnicate")
    child.expect(PROMPT)
    assert not mock_llm.requests
    child.send("/usr/bin is slow\r")  # a path, not a command: it is a message
    child.expect("A path, then")
    child.expect(PROMPT)
    assert len(mock_llm.requests) == 1
    # The model's escape sequences are shown, not obeyed.
    raw = child.before if isinstance(child.before, str) else ""
    assert "\x1b]0;pwned" not in raw and "pwned" in screen(child)
    child.send("two\x1b\rlines\r")  # Alt-Enter (Esc, Enter) puts a newline in the message
    child.expect("A path, then")  # the looping script answers again
    child.expect(PROMPT)
    assert mock_llm.requests[-1].last_user_text == "two\nlines"
    child.send("/sessions\r")
    child.expect("/usr/bin is slow")
    child.expect(PROMPT)
    child.send("/clear\r")
    child.expect("New session")
    child.expect(PROMPT)
    child.send("/sessions --all\r")
    child.expect("folder")
    child.expect(PROMPT)
    quit_(child)


def test_opening_and_closing_the_repl_leaves_no_session_behind(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    child = start(workspace, mock_llm, cli_env, tmp_path)
    child.send("/new\r")
    child.expect("saved with your first message")
    child.expect(PROMPT)
    quit_(child)
    home = Path(cli_env["COWORK_HOME"])
    record = json.loads((home / "server.json").read_text(encoding="utf-8"))
    token = (home / "auth" / "token").read_text(encoding="utf-8").strip()
    body = {"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {"includeEmpty": True}}
    request = urllib.request.Request(
        record["url"] + "/rpc",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert json.loads(response.read())["result"]["sessions"] == []


def test_compact_summarises_the_conversation(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    mock_llm.set_script(
        [MockResponse(text="noted one"), MockResponse(text="noted two"), MockResponse(text="Two notes were taken.")]
    )
    child = start(workspace, mock_llm, cli_env, tmp_path)
    child.send("/compact\r")
    child.expect("Nothing to compact yet")
    child.expect(PROMPT)
    for text in ("note one", "note two"):
        child.send(f"{text}\r")
        child.expect(f"noted {text.split()[1]}")
        child.expect(PROMPT)
    child.send("/compact the notes\r")
    child.expect("context compressed: 3 messages summarised")
    child.expect(PROMPT)
    assert "keep in particular: the notes" in (mock_llm.requests[-1].system or "")
    assert len(mock_llm.requests) == 3
    quit_(child)


def test_export_saves_the_session_here_and_never_overwrites(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    mock_llm.set_script([MockResponse(text="Noted the plan.")])
    child = start(workspace, mock_llm, cli_env, tmp_path)
    child.send("/export\r")
    child.expect("Nothing to export yet")
    child.send("plan the week\r")
    child.expect("Noted the plan")
    child.expect(PROMPT)
    child.send("/title   Week  48 plan \r")
    child.expect("Renamed to “Week 48 plan”")
    child.expect(PROMPT)
    child.send("/export\r")
    child.expect("as markdown to .*week-48-plan\\.md")
    child.expect(PROMPT)
    child.send("/export\r")
    child.expect("exists already")
    child.expect(PROMPT)
    child.send("/export json week.json\r")
    child.expect("as json to .*week\\.json")
    child.expect(PROMPT)
    assert (workspace / "week-48-plan.md").read_text(encoding="utf-8").startswith("# Week 48 plan\n")
    assert json.loads((workspace / "week.json").read_text(encoding="utf-8"))["format"] == "cowork.session"
    assert len(mock_llm.requests) == 1
    quit_(child)


def test_delete_asks_first(workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path) -> None:
    mock_llm.set_script([MockResponse(text="Noted the secret.")])
    child = start(workspace, mock_llm, cli_env, tmp_path)
    child.send("/delete\r")
    child.expect("Nothing to delete")
    child.send("remember the secret\r")
    child.expect("Noted the secret")
    child.expect(PROMPT)
    child.send("/delete\r")
    child.expect("Delete “remember the secret” \\(2 messages\\) for good")
    child.expect("\\[y/N\\]")
    child.send("\r")  # Enter keeps it
    child.expect("Nothing was deleted")
    child.send("/delete\r")
    child.expect("\\[y/N\\]")
    child.send("y\r")
    child.expect("Deleted “remember the secret”")
    child.expect(PROMPT)
    child.send("/sessions --all\r")
    child.expect("No sessions")
    child.expect(PROMPT)
    quit_(child)


def test_search_finds_what_was_said(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    mock_llm.set_script([MockResponse(text="The kumquat is noted.")])
    child = start(workspace, mock_llm, cli_env, tmp_path)
    child.send("remember the kumquat\r")
    child.expect("kumquat is noted")
    child.expect(PROMPT)
    child.send("/new\r")
    child.expect(PROMPT)
    child.send("/search KUMQUAT\r")
    child.expect("(ses_[0-9a-f]{20})")
    found = child.match.group(1)
    child.expect(PROMPT)
    assert "remember the kumquat" in screen(child).split("/search KUMQUAT")[-1]
    child.send("/search durian\r")
    child.expect("Nothing found for 'durian'")
    child.send(f"/resume {found}\r")
    child.expect("Resumed “remember the kumquat”")
    child.expect(PROMPT)
    quit_(child)


def test_plan_mode_on_and_off(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="bash", arguments={"command": "touch x", "description": "t"})]),
            MockResponse(text="Plan: touch x. Approve?"),
        ]
    )
    child = start(workspace, mock_llm, cli_env, tmp_path)
    child.send("/plan on\r")
    child.expect("Plan mode on: only tools that change nothing run")
    child.expect(PROMPT)
    child.send("make x\r")
    child.expect("Plan: touch x")
    child.expect(PROMPT)
    assert "approve?" not in screen(child) and not (workspace / "x").exists()
    child.send("/plan\r")
    child.expect("Plan mode on")
    child.send("/plan off\r")
    child.expect("Plan mode off: the agent may act")
    child.expect(PROMPT)
    quit_(child)

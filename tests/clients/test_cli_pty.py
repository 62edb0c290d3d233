"""The REPL in a real pseudo-terminal: a turn with an approval and a question, the session commands (/tools, /cwd,
/network, /yolo, /mcp) with tab completion, and Ctrl-C twice to leave; against an auto-started server and the
mock LLM."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
from pathlib import Path

import pexpect
import pytest

from cowork.testing.core import TEST_TOOLS_PLUGIN
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall
from cowork.testing.server import ServerProcess, provider_env

from .test_cli import PROMPT, cli_env, screen, spawn

pytestmark = pytest.mark.slow
__all__ = ["cli_env"]  # the fixture, imported for these tests

TAB = "\t"


def complete(child: pexpect.spawn, text: str) -> None:
    """Type `text`, then Tab; completion runs asynchronously, so give it a moment before typing on."""
    child.send(text)
    child.expect_exact(text)
    time.sleep(0.3)
    child.send(TAB)
    time.sleep(0.5)


def flat(child: pexpect.spawn) -> str:
    return " ".join(screen(child).replace("│", " ").split())


def test_turn_with_a_rejected_approval_and_a_free_text_answer(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": "first"})]),
            MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": "second"})]),
            MockResponse(tool_calls=[MockToolCall(name="ask", arguments={"question": "Which name?"})]),
            MockResponse(text="Called it **Zed**."),
        ]
    )
    marks = tmp_path / "marks.txt"
    env = cli_env | provider_env("openai", mock_llm.openai_base_url)
    env |= {"COWORK_TOOLS__PLUGINS": json.dumps([TEST_TOOLS_PLUGIN]), "COWORK_TEST_MARKS": str(marks)}
    child = spawn(workspace, env)
    child.expect(r"Web UI: http://127\.0\.0\.1:\d+/\?token=\S+")  # the link that logs the browser in
    child.expect(PROMPT)
    child.send("name the thing\r")
    child.expect("approve\\?")
    child.expect("Allow\\?")
    child.send("n, not that one\r")
    child.expect("approve\\?")
    child.expect("Allow\\?")
    child.send("y\r")
    child.expect("Which name\\?")
    child.expect("Answer")
    child.send("Zed\r")
    child.expect("Called it")
    child.expect(PROMPT)
    transcript = screen(child)
    assert "● mark(label=first)" in transcript and "● mark(label=second)" in transcript
    assert marks.read_text(encoding="utf-8") == "mark second\n"  # the rejected call never ran
    rejected = mock_llm.requests[1].last_tool_results[0]["content"]
    assert "not that one" in rejected
    assert mock_llm.requests[3].last_tool_results[0]["content"] == "Zed"
    child.send("/quit\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_session_commands_with_tab_completion(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str]
) -> None:
    env = cli_env | provider_env("openai", mock_llm.openai_base_url)
    env |= {"COWORK_TOOLS__PLUGINS": json.dumps([TEST_TOOLS_PLUGIN])}
    child = spawn(workspace, env)
    child.expect(PROMPT)

    child.send("/help\r")
    child.expect("/mcp")
    child.expect(PROMPT)
    assert "/cwd [DIR]" in flat(child) and "/network on|off" in flat(child)

    child.send("/tools\r")
    child.expect("what it does")
    child.expect(PROMPT)
    tools = flat(child)
    assert "mark yes when risky" in tools and "read no no" in tools

    child.send("/tools mark always\r")
    child.expect("mark: always")
    child.expect(PROMPT)

    # Tab completes in the terminal too (tests/clients/test_cli_completion.py has the cases).
    complete(child, "/netw")
    child.send(" on\r")
    child.expect("network on")
    child.expect(PROMPT)
    child.send("/network\r")
    child.expect("network is on")
    child.expect(PROMPT)

    child.send("/yolo on\r")
    child.expect("YOLO: approvals and the sandbox are OFF")
    child.expect(PROMPT)
    child.send("/yolo off\r")
    child.expect("yolo off")
    child.expect(PROMPT)

    child.send("/cwd\r")
    child.expect("session ses_")
    child.expect(PROMPT)
    assert str(workspace) in flat(child)
    child.send("/cwd src\r")
    child.expect("New session")
    child.expect(PROMPT)
    assert f"in {workspace / 'src'} (/resume ses_" in flat(child)
    child.send("/cwd nowhere\r")
    child.expect("workspace_not_found")
    child.expect(PROMPT)

    child.send("/mcp\r")
    child.expect(["No MCP servers", "does not offer MCP"])
    child.expect(PROMPT)
    child.send("/mcp add broken\r")
    child.expect("Usage: /mcp")
    child.expect(PROMPT)

    # A real stdio MCP server (mcp-server-time): add it, see it running with its tools, disable it.
    child.send(f"/mcp add time -- {sys.executable} -m mcp_server_time\r")
    child.expect(["stopped", "starting", "running"])
    child.expect(PROMPT)
    assert "time: " in flat(child).rsplit("mcp_server_time", 1)[-1]
    for _ in range(40):
        child.send("/mcp\r")
        child.expect("policy")
        child.expect(PROMPT)
        if "time running stdio 2" in flat(child).rsplit("/mcp", 1)[-1]:
            break
    else:
        raise AssertionError("the time server never showed as running:\n" + flat(child)[-2000:])
    child.send("/mcp disable time\r")
    child.expect("disabled")
    child.expect(PROMPT)
    assert flat(child).rsplit("/mcp disable", 1)[-1].split()[:3] == ["time", "time:", "disabled"]
    child.send("/quit\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_second_ctrl_c_leaves_the_repl(workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str]) -> None:
    mock_llm.set_script([MockResponse(text="tick " * 4000, chunk_size=5, chunk_delay_s=0.02)])
    child = spawn(workspace, cli_env | provider_env("openai", mock_llm.openai_base_url))
    child.expect(PROMPT)
    child.send("count forever\r")
    child.expect("tick")
    child.sendintr()
    child.expect("Ctrl-C again to quit")
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130


def test_the_banner_names_workspace_settings_it_ignored_until_the_user_trusts_it(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str]
) -> None:
    (workspace / ".cowork").mkdir()
    (workspace / ".cowork" / "config.toml").write_text(
        '[tools]\napproval_mode = "auto-run"\n[tools.sandbox]\nenabled = false\n', encoding="utf-8"
    )
    child = spawn(workspace, cli_env | provider_env("openai", mock_llm.openai_base_url))
    child.expect(PROMPT)
    banner = flat(child)
    assert "Ignored in" in banner and "tools.approval_mode" in banner and "tools.sandbox.enabled" in banner
    assert "/mcp trust" in banner
    child.send("/mcp trust\r")
    child.expect("applies in full from the next server start")
    assert str(workspace.resolve()) in (Path(cli_env["COWORK_HOME"]) / "trusted-workspaces.json").read_text("utf-8")
    child.send("/quit\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_the_repl_reconnects_when_its_server_dies_mid_turn(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], home: Path
) -> None:
    """Behind a shared address another replica answers; here the same server comes back on the same port. Either
    way the REPL connects again, replays what it missed and follows the turn to where it stands."""
    mock_llm.set_script([MockResponse(text="slow " * 300, chunk_size=5, chunk_delay_s=0.02)])
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = provider_env("openai", mock_llm.openai_base_url)
    child = spawn(workspace, cli_env | provider | {"COWORK_SERVER__PORT": str(port)})
    child.expect(PROMPT)
    child.send("talk\r")
    child.expect("slow slow slow")
    os.kill(json.loads((home / "server.json").read_text(encoding="utf-8"))["pid"], signal.SIGKILL)
    child.expect("reconnecting")
    with ServerProcess(home, workspace, env=provider, port=port):
        child.expect("reconnected")
        child.expect("interrupted")  # a server that restarts marks the turn interrupted (/continue resumes it)
        child.expect(PROMPT)
        child.send("/quit\r")
        child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

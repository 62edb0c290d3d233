"""The CLI REPL in a real pseudo-terminal, against a real (auto-started) server and the mock LLM."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall
from cowork.testing.server import provider_env

from .newer_server import NewerServer

pytestmark = pytest.mark.slow

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PROMPT = "›"


def plain(text: str) -> str:
    return ANSI.sub("", text)


@pytest.fixture
def cli_env(home: Path) -> Iterator[dict[str, str]]:
    env = {k: v for k, v in os.environ.items()}
    env.update({"COWORK_HOME": str(home), "COWORK_AGENT__PROVIDER_MAX_RETRIES": "0", "TERM": "xterm-256color"})
    yield env
    # The REPL started a background server; stop it so nothing outlives the test.
    try:
        pid = json.loads((home / "server.json").read_text(encoding="utf-8"))["pid"]
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError, KeyError):
        pass


def spawn(workspace: Path, env: dict[str, str], *args: str, dimensions: tuple[int, int] = (50, 120)) -> pexpect.spawn:
    """`cowork ARGS…` in a real pty, its output kept for `screen`."""
    child = pexpect.spawn(
        sys.executable,
        ["-m", "cowork", *args],
        cwd=str(workspace),
        env=env,
        encoding="utf-8",
        timeout=40,
        dimensions=dimensions,
    )
    child.logfile_read = io.StringIO()
    return child


def screen(child: pexpect.spawn) -> str:
    """Everything the child printed so far, without terminal control sequences."""
    return plain(child.logfile_read.getvalue())


def test_full_turn_with_tools(workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str]) -> None:
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="glob", arguments={"pattern": "**/*.md"})]),
            MockResponse(tool_calls=[MockToolCall(name="read", arguments={"filePath": "docs/notes.md"})]),
            MockResponse(text="The code word is **PELICAN**.", chunk_size=4),
        ]
    )
    child = spawn(workspace, cli_env | provider_env("openai", mock_llm.openai_base_url))
    child.expect(PROMPT)
    assert "openai:mock-model" in plain(child.before)
    child.send("What is the code word?\r")
    child.expect("glob")
    child.expect("read")
    child.expect("PELICAN")
    child.expect(PROMPT)
    transcript = screen(child)
    assert "● glob(pattern=**/*.md)" in transcript
    assert "● read(filePath=docs/notes.md)" in transcript
    assert transcript.count("chars") == 2  # each tool result summarised by its size
    child.send("/sessions\r")
    child.expect("What is the code word")
    child.expect(PROMPT)
    child.send("/quit\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (Path(cli_env["COWORK_HOME"]) / "history").read_text(encoding="utf-8").count("What is the code word?") == 1


def test_no_provider_is_explained_readably(workspace: Path, cli_env: dict[str, str]) -> None:
    child = spawn(workspace, cli_env)
    child.expect(PROMPT)
    assert "no provider connected" in plain(child.before)
    child.send("hello\r")
    child.expect("no_provider")
    child.expect(PROMPT)
    message = " ".join(plain(child.before).replace("│", " ").split())
    assert "OPENAI_API_KEY" in message and "ANTHROPIC_API_KEY" in message and "Traceback" not in message
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_degraded_subsystems_are_shown_once_under_the_banner(workspace: Path, cli_env: dict[str, str]) -> None:
    child = spawn(workspace, cli_env | {"COWORK_TOOLS__SANDBOX__BWRAP_PATH": str(workspace / "no-bwrap")})
    child.expect(PROMPT)
    start = " ".join(plain(child.before).replace("│", " ").split())
    assert "! providers: No model provider is connected." in start
    # The sandbox is degraded too, and said once: by its note, which the banner shows anyway.
    assert start.count("bubblewrap (bwrap) was not found") == 1 and "! sandbox" not in start
    assert "! mcp" not in start and "! embedder" not in start  # not configured, not built: quiet
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_ctrl_c_cancels_the_running_turn(workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str]) -> None:
    mock_llm.set_script(
        [MockResponse(text="tick " * 2000, chunk_size=5, chunk_delay_s=0.01), MockResponse(text="fresh")]
    )
    child = spawn(workspace, cli_env | provider_env("openai", mock_llm.openai_base_url))
    child.expect(PROMPT)
    child.send("count forever\r")
    child.expect("tick")
    child.sendintr()
    child.expect("cancelled")
    child.expect(PROMPT)
    child.send("and now?\r")
    child.expect("fresh")
    child.expect(PROMPT)
    child.send("/quit\r")
    child.expect(pexpect.EOF)


def test_sessions_models_and_resume(workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str]) -> None:
    mock_llm.set_script([MockResponse(text="noted: alpha"), MockResponse(text="noted: beta")])
    env = cli_env | provider_env("openai", mock_llm.openai_base_url) | {"ANTHROPIC_API_KEY": "k"}
    child = spawn(workspace, env)
    child.expect(PROMPT)
    child.send("remember alpha\r")
    child.expect("noted: alpha")
    child.expect(PROMPT)
    child.send("/model\r")
    child.expect("Switch with")
    listing = " ".join(screen(child).replace("│", " ").split())
    assert "Current: openai:mock-model" in listing and "anthropic yes" in listing and "google no" in listing
    child.expect(PROMPT)
    child.send("/model anthropic:claude-test\r")
    child.expect("Model: anthropic:claude-test")
    child.expect(PROMPT)
    child.send("/new\r")
    child.expect("New session in .* \\(saved with your first message\\)")
    child.expect(PROMPT)
    child.send("/sessions\r")
    child.expect("remember alpha")
    child.expect(PROMPT)
    first_id = re.search(r"(ses_\w+)\s+│\s+remember alpha", screen(child))
    assert first_id is not None
    child.send(f"/resume {first_id.group(1)}\r")
    child.expect("Resumed")
    child.expect("noted: alpha")
    child.expect(PROMPT)
    child.send("/resume ses_missing\r")
    child.expect("session_not_found")
    child.expect(PROMPT)
    child.send("/help\r")
    child.expect("/resume ID")
    child.expect(PROMPT)
    child.send("/quit\r")
    child.expect(pexpect.EOF)


def test_fork_puts_the_message_it_was_cut_before_at_the_prompt(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str]
) -> None:
    mock_llm.set_script(
        [MockResponse(text="noted: alpha"), MockResponse(text="noted: beta"), MockResponse(text="noted: gamma")]
    )
    child = spawn(workspace, cli_env | provider_env("openai", mock_llm.openai_base_url))
    child.expect(PROMPT)
    child.send("/fork\r")
    child.expect("Nothing to fork")
    child.expect(PROMPT)
    for text, answer in (("remember alpha", "noted: alpha"), ("remember beta", "noted: beta")):
        child.send(f"{text}\r")
        child.expect(answer)
        child.expect(PROMPT)
    child.send("/fork two\r")
    child.expect("Usage: /fork")
    child.expect(PROMPT)
    child.send("/fork 2\r")
    child.expect("holding 1 of your messages")
    child.expect("is at the prompt")
    child.expect("remember beta")  # put at the prompt, ready to change
    child.send(" instead\r")
    child.expect("noted: gamma")
    child.expect(PROMPT)
    # The model was sent the first exchange and the changed message, not the original second one.
    said = [m["content"] for m in mock_llm.requests[-1].messages if m["role"] == "user"]
    assert said == ["remember alpha", "remember beta instead"]
    # The fork, exported and imported back: another session with the same conversation.
    child.send("/export json forked.json\r")
    child.expect("Saved")
    child.expect(PROMPT)
    child.send("/import\r")
    child.expect("Usage: /import FILE")
    child.expect(PROMPT)
    child.send("/import forked.json\r")
    child.expect("Imported “remember alpha \\(fork\\)” \\(ses_\\w+\\): 2 of your messages")
    child.expect(PROMPT)
    child.send("/import missing.json\r")
    child.expect("Cannot read")
    child.expect(PROMPT)
    child.send("/quit\r")
    child.expect(pexpect.EOF)


def test_approval_question_and_steering_inline(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    from cowork.testing.core import TEST_TOOLS_PLUGIN

    def script(request: object) -> MockResponse:
        n = len(mock_llm.requests)
        if n == 1:
            return MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": "x"})])
        if n == 2:
            return MockResponse(
                tool_calls=[
                    MockToolCall(name="ask", arguments={"question": "Which colour?", "options": ["red", "blue"]})
                ]
            )
        if n == 3:
            return MockResponse(tool_calls=[MockToolCall(name="sleep", arguments={"seconds": 2})])
        users = [m["content"] for m in request.messages if m["role"] == "user"]  # type: ignore[attr-defined]
        return MockResponse(
            text=f"You chose {request.messages[-1]['content'] if False else 'blue'}; you said: {users[-1]}"
        )

    mock_llm.set_script(script)
    env = cli_env | provider_env("openai", mock_llm.openai_base_url)
    env |= {
        "COWORK_TOOLS__PLUGINS": f'["{TEST_TOOLS_PLUGIN}"]',
        "COWORK_TOOLS__AUTO_APPROVE": '["sleep"]',
        "COWORK_TEST_MARKS": str(tmp_path / "marks.txt"),
    }
    child = spawn(workspace, env)
    child.expect(PROMPT)
    child.send("paint it\r")
    child.expect("approve\\?")
    child.expect("Allow\\?")
    child.send("y\r")
    child.expect("Which colour\\?")
    child.expect("Answer")
    child.send("2\r")
    child.expect("sleep")
    child.send("also tidy up\r")
    child.expect("added: also tidy up")
    child.expect("you said: also tidy up")
    child.expect(PROMPT)
    assert (tmp_path / "marks.txt").read_text(encoding="utf-8").splitlines()[0] == "mark x"
    assert mock_llm.requests[2].last_tool_results[0]["content"] == "blue"
    child.send("/quit\r")
    child.expect(pexpect.EOF)


def test_the_repl_shows_a_newer_servers_unknown_events_neutrally_and_keeps_going(
    workspace: Path, cli_env: dict[str, str]
) -> None:
    with NewerServer() as server:
        child = pexpect.spawn(
            sys.executable,
            ["-m", "cowork", "--url", server.address.url],
            cwd=str(workspace),
            env=cli_env,
            encoding="utf-8",
            timeout=40,
            dimensions=(50, 120),
        )
        child.logfile_read = io.StringIO()
        child.expect(PROMPT)
        child.send("Why does the build fail?\r")
        for _ in range(2):  # the turn's request, then the sub-agent's
            child.expect("Allow\\?")
            child.send("y\r")
            child.expect("Answer")
            child.send("1\r")
        child.expect("· event hologram")
        child.expect("· event tool_call \\(unreadable")
        child.expect(PROMPT)
        child.send("/quit\r")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        assert server.calls.count("approval/respond") == 2 and server.calls.count("ask/respond") == 2
    assert "Traceback" not in screen(child)

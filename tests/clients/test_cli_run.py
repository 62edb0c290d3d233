"""`cowork run`: one non-interactive turn against a real server and the mock LLM; whole JSON transcripts, exit codes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cowork.testing.core import TEST_TOOLS_PLUGIN
from cowork.testing.mockllm import MockError, MockLLMServer, MockResponse, MockToolCall
from cowork.testing.server import PROVIDER_VARIABLES, ServerProcess, provider_env

from .newer_server import NewerServer
from .samples import transcript as newer_transcript

pytestmark = pytest.mark.slow


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    return tmp_path / "marks.txt"


@pytest.fixture
def server(home: Path, workspace: Path, mock_llm: MockLLMServer, marks: Path) -> Iterator[ServerProcess]:
    env = provider_env("openai", mock_llm.openai_base_url) | {
        "COWORK_TOOLS__PLUGINS": json.dumps([TEST_TOOLS_PLUGIN]),
        "COWORK_TEST_MARKS": str(marks),
    }
    with ServerProcess(home, workspace, env=env) as proc:
        yield proc


def cowork_run(
    server: ServerProcess, *args: str, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARIABLES}
    assert server.url is not None
    return subprocess.run(
        [sys.executable, "-m", "cowork", "run", "--url", server.url, "--token", server.token, *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        cwd=cwd or server.workspace,
        env=env,
        timeout=60,
    )


def transcript(stdout: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every line is JSON: the session events, then the outcome."""
    lines = [json.loads(line) for line in stdout.splitlines()]
    assert lines, "no output"
    *events, outcome = lines
    for event in events:
        assert set(event) == {"sessionId", "seq", "ts", "type", "payload"}
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    return events, outcome


def kinds(events: list[dict[str, Any]]) -> list[str]:
    """Event types in order, without the streaming ones (their number depends on chunking)."""
    out = []
    for e in events:
        kind = e["type"]
        if kind in ("model_stream_chunk", "reasoning", "usage"):
            continue
        if kind == "operation_status":
            kind += ":" + e["payload"]["status"]
        out.append(kind)
    return out


def test_json_transcript_with_a_question(server: ServerProcess, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="read", arguments={"filePath": "docs/notes.md"})]),
            MockResponse(tool_calls=[MockToolCall(name="ask", arguments={"question": "Which?", "options": ["a"]})]),
            MockResponse(text="The code word is PELICAN.", chunk_size=5),
        ]
    )
    result = cowork_run(server, "--json", "What is the code word?")
    assert result.returncode == 0, result.stderr
    events, outcome = transcript(result.stdout)
    assert kinds(events) == [
        "user_message",
        "session_updated",  # the title, from the prompt
        "operation_status:running",
        "tool_call",
        "tool_result",
        "tool_call",
        "ask",
        "operation_status:waiting_for_human",
        "ask_resolved",
        "operation_status:running",
        "assistant_message",
        "operation_status:done",
    ]
    ask = next(e for e in events if e["type"] == "ask_resolved")
    assert ask["payload"]["answer"] == "(no user: running non-interactively)"
    assert mock_llm.requests[2].last_tool_results[0]["content"] == "(no user: running non-interactively)"
    assert outcome == {
        "outcome": "done",
        "exitCode": 0,
        "sessionId": events[0]["sessionId"],
        "operationId": events[-1]["payload"]["operationId"],
        "text": "The code word is PELICAN.",
        "error": None,
        "waiting": [],
    }


def test_prompt_from_stdin_and_plain_rendering(server: ServerProcess, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="glob", arguments={"pattern": "**/*.md"})]),
            MockResponse(text="Found **two** files."),
            MockResponse(text="again"),
        ]
    )
    result = cowork_run(server, stdin="list the markdown files\n")
    assert result.returncode == 0, result.stderr
    assert mock_llm.requests[0].messages[-1]["content"] == "list the markdown files"
    # stdout is the transcript as the REPL renders it; the session line and token counts go to stderr.
    assert result.stdout.splitlines()[0] == "● glob(pattern=**/*.md)"
    assert "Found two files." in result.stdout
    assert "session ses_" in result.stderr and "ses_" not in result.stdout
    # `-` reads stdin too, and --session continues the same conversation.
    session_id = result.stderr.split("session ", 1)[1].split()[0]
    again = cowork_run(server, "-", "--session", session_id, stdin="and now?")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "again"
    users = [m["content"] for m in mock_llm.requests[-1].messages if m["role"] == "user"]
    assert users == ["list the markdown files", "and now?"]


def test_approval_without_flags_waits_and_exits_3(server: ServerProcess, mock_llm: MockLLMServer, marks: Path) -> None:
    mock_llm.set_script([MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": "x"})])])
    result = cowork_run(server, "--json", "mark it")
    assert result.returncode == 3, result.stderr
    events, outcome = transcript(result.stdout)
    assert kinds(events)[-2:] == ["approval_requested", "operation_status:waiting_for_human"]
    request_id = events[-2]["payload"]["requestId"]
    assert outcome["outcome"] == "waiting_for_human"
    assert outcome["waiting"] == [
        {"kind": "approval", "requestId": request_id, "operationId": outcome["operationId"], "what": "approve mark"}
    ]
    assert f"cowork --resume {outcome['sessionId']}" in " ".join(result.stderr.split())
    assert not marks.exists()  # nothing ran


def test_yolo_runs_without_asking(server: ServerProcess, mock_llm: MockLLMServer, marks: Path) -> None:
    mock_llm.set_script(
        [MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": "y"})]), MockResponse(text="done")]
    )
    result = cowork_run(server, "--json", "--yolo", "mark it")
    assert result.returncode == 0, result.stderr
    assert "--yolo: approvals and the sandbox are OFF" in result.stderr  # said loudly, and not on stdout
    events, outcome = transcript(result.stdout)
    assert "approval_requested" not in kinds(events)
    assert marks.read_text(encoding="utf-8") == "mark y\n"
    assert outcome["text"] == "done"


def test_approve_safe_approves_safe_calls_and_rejects_dangerous_ones(
    server: ServerProcess, mock_llm: MockLLMServer, marks: Path
) -> None:
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": "ok"})]),
            MockResponse(tool_calls=[MockToolCall(name="bash", arguments={"command": "rm -rf ~"})]),
            MockResponse(text="gave up"),
        ]
    )
    result = cowork_run(server, "--json", "--approve-safe", "clean up")
    assert result.returncode == 0, result.stderr
    events, outcome = transcript(result.stdout)
    resolved = [e["payload"] for e in events if e["type"] == "approval_resolved"]
    assert [(r["approved"], bool(r.get("message"))) for r in resolved] == [(True, False), (False, True)]
    assert "dangerous" in resolved[1]["message"]
    assert marks.read_text(encoding="utf-8") == "mark ok\n"
    rejected = mock_llm.requests[2].last_tool_results[0]["content"]
    assert "dangerous" in rejected
    assert outcome["outcome"] == "done" and outcome["text"] == "gave up"
    assert "rejected (dangerous) bash" in result.stderr


def test_failed_turn_exits_1(server: ServerProcess, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([MockResponse(error=MockError(status=400, message="bad request from the mock"))])
    result = cowork_run(server, "--json", "hello")
    assert result.returncode == 1, result.stderr
    events, outcome = transcript(result.stdout)
    assert kinds(events)[-2:] == ["error", "operation_status:error"]
    assert outcome["outcome"] == "error" and outcome["error"]["code"] == events[-2]["payload"]["code"]
    assert "bad request from the mock" in result.stderr


def test_usage_errors_exit_2(server: ServerProcess, workspace: Path) -> None:
    empty = cowork_run(server, "--json", stdin="   ")
    assert empty.returncode == 2
    assert json.loads(empty.stdout)["error"] == {"code": "usage_error", "message": "the prompt is empty"}
    assert cowork_run(server, "--yolo", "--approve-safe", "x").returncode == 2  # argparse: not both
    missing = cowork_run(server, "--workspace", str(workspace / "nope"), "x")
    assert missing.returncode == 2 and "not a folder" in missing.stderr
    unknown = cowork_run(server, "--json", "--session", "ses_missing", "x")
    assert unknown.returncode == 2
    assert json.loads(unknown.stdout)["error"]["code"] == "session_not_found"
    # A model the provider's server does not serve is refused before the turn, not sent to fail there.
    bogus = cowork_run(server, "--json", "-m", "bogus:model", "x")
    assert bogus.returncode == 2
    error = json.loads(bogus.stdout.splitlines()[-1])["error"]
    assert error["code"] == "model_not_found" and "does not serve 'bogus:model'" in error["message"]
    assert "mock-model" in error["message"]  # what it does serve


def test_no_provider_exits_4(home: Path, workspace: Path) -> None:
    with ServerProcess(home, workspace) as server:
        result = cowork_run(server, "--json", "hello")
    assert result.returncode == 4, result.stderr
    outcome = json.loads(result.stdout.splitlines()[-1])
    assert outcome["outcome"] == "no_provider" and outcome["error"]["code"] == "no_provider"
    assert "OPENAI_API_KEY" in result.stderr
    # Not a terminal: one `code: message` line, not a panel hard-wrapped at 80 columns.
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("no_provider: ")]
    assert line == f"no_provider: {outcome['error']['message']}" and len(line) > 80


def test_ctrl_c_cancels_the_turn_and_exits_130(server: ServerProcess, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([MockResponse(text="tick " * 2000, chunk_size=5, chunk_delay_s=0.01)])
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARIABLES}
    assert server.url is not None
    args = [sys.executable, "-m", "cowork", "run", "--json", "--url", server.url, "--token", server.token, "count"]
    with subprocess.Popen(
        args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as proc:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if json.loads(line)["type"] == "model_stream_chunk":
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    events, outcome = transcript("".join(lines) + out)
    assert kinds(events)[-1] == "operation_status:cancelled"
    assert outcome["outcome"] == "cancelled" and outcome["exitCode"] == 130


def run_against(server: NewerServer, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARIABLES}
    return subprocess.run(
        [sys.executable, "-m", "cowork", "run", "--url", server.address.url, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_a_newer_servers_unknown_events_are_shown_neutrally_and_the_turn_completes() -> None:
    with NewerServer() as server:
        result = run_against(server, "Why does the build fail?")
        assert result.returncode == 0, result.stderr
        # The question is answered (the sub-agent's too); the approval is left waiting, as without a newer server.
        assert server.calls == ["initialize", "session/create", "turn/start", "ask/respond", "ask/respond"]
    # The whole transcript: every known type as the REPL shows it, the sub-agent's as two lines, then neutral lines.
    assert result.stdout == (
        "✻ thinking…\n"
        "The build fails.\n"
        "● read(filePath=ci.log)\n"
        "  ⎿ 2 lines, 4 chars\n"
        "  │ reading…\n"
        "  ⎿ bash was interrupted by a restart; asking before running it again\n"
        "  ◐ Reading\n"
        "\n"
        "  ⟲ context compressed: 4 messages summarised (9,000 → 1,200 tokens)\n"
        "⚠ the same call three times\n"
        "◆ explore agent: find the config\n"
        "⇢ openai:gpt-test (cloud): tools\n"
        "  ⟳ provider error: trying again in 0.5 s (attempt 2 of 3)\n"
        "⚠ 80% of today's budget used ($0.80 of $1.00)\n"
        "  ↳ read(filePath=ci.log)\n"
        "  ↳ explore agent done\n"
        "· event hologram\n"
        "· event tool_call (unreadable: step: Input should be a valid integer, unable to parse string as an integer"
        " (+3 more))\n"
        "Sources: [1] docs/leave.md › Holiday policy\n"  # once the turn has ended, under its answer
    )


def test_json_passes_unknown_events_through() -> None:
    with NewerServer() as server:
        result = run_against(server, "--json", "Why does the build fail?")
    assert result.returncode == 0, result.stderr
    events, outcome = transcript(result.stdout)
    assert events == newer_transcript("ses_1")  # every event exactly as the server sent it, unknown ones included
    assert outcome["outcome"] == "done" and outcome["text"] == "The build fails."

"""`cowork automation` against real server processes: import (a bad file saves nothing), list, show and export (an
export imported into a fresh server is the same flow), a run's steps and result, its approval asked in a terminal or
answered by command, `--json` for scripts, and errors that name the problem."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from cowork.clients.connection import RpcClient
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall
from cowork.testing.server import ServerProcess, provider_env

from .test_cli import plain, screen, spawn

pytestmark = pytest.mark.slow

HELLO = """\
name: hello
description: Say hello in a file, then tell the user
inputs:
  who: {type: string, default: world}
steps:
  - id: greet
    type: toolCall
    tool: write
    arguments: {filePath: hello.txt, content: "hello ${input.who}"}
  - id: tell
    type: notification
    tier: urgent
    title: "Wrote hello.txt [bold]for[/bold] ${input.who}"
"""

BROKEN = """\
name: Broken Name
steps:
  - id: a
    type: toolCall
  - id: a
    type: delay
    seconds: 1
"""


@pytest.fixture
def server(tmp_path: Path, workspace: Path) -> Iterator[ServerProcess]:
    with ServerProcess(tmp_path / "server-home", workspace) as proc:
        yield proc


def cowork(server: ServerProcess, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`cowork automation ARGS…` without a terminal, against `server`."""
    return subprocess.run(
        [sys.executable, "-m", "cowork", "automation", *args, "--url", server.address.url, "--token", server.token],
        cwd=cwd or server.workspace,
        env=server.environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"exit {result.returncode}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    return result.stdout


def call(server: ServerProcess, method: str, params: dict[str, Any]) -> Any:
    async def go() -> Any:
        client = await RpcClient.connect(server.address)
        try:
            await client.call("initialize", {"clientInfo": {"name": "test", "version": "1"}})
            return await client.call(method, params)
        finally:
            await client.close()

    return asyncio.run(go())


def imported(server: ServerProcess, text: str = HELLO, name: str = "hello.yaml") -> Path:
    path = server.workspace / name
    path.write_text(text, encoding="utf-8")
    ok(cowork(server, "import", name))
    return path


def test_import_list_show_and_export_round_trip(server: ServerProcess, tmp_path: Path, workspace: Path) -> None:
    (workspace / "hello.yaml").write_text(HELLO, encoding="utf-8")
    out = ok(cowork(server, "import", "hello.yaml"))
    assert "Imported hello" in out and "version 1, enabled" in out and "cowork automation run hello" in out

    listed = json.loads(ok(cowork(server, "list", "--json")))
    assert [(a["name"], a["enabled"], a["tool"]) for a in listed["automations"]] == [("hello", True, "flow_hello")]
    table = ok(cowork(server, "list"))
    assert "hello" in table and "enabled" in table and "manual" in table

    shown = ok(cowork(server, "show", "hello"))
    assert "Say hello in a file" in shown and 'who (string, default "world")' in shown
    assert "1. greet  toolCall  write" in shown and "No runs yet." in shown
    assert "[bold]for[/bold]" in shown  # server text is shown as typed, never as markup
    detail = json.loads(ok(cowork(server, "show", "hello", "--json")))
    assert detail["automation"]["name"] == "hello" and detail["runs"] == []

    exported = ok(cowork(server, "export", "hello"))
    assert exported == detail["automation"]["text"]
    ok(cowork(server, "export", "hello", "out.yaml"))
    assert (workspace / "out.yaml").read_text(encoding="utf-8") == exported
    again = cowork(server, "export", "hello", "out.yaml")
    assert again.returncode == 2 and "exists already; --force overwrites it" in again.stderr
    ok(cowork(server, "export", "hello", "out.yaml", "--force"))
    toml = cowork(server, "export", "hello", "out.toml")
    assert toml.returncode == 2 and "export writes YAML" in toml.stderr and not (workspace / "out.toml").exists()

    # Another Cowork with a store of its own (in the suite's PostgreSQL half too: its file, not the test's schema).
    with ServerProcess(tmp_path / "fresh-home", workspace, env={"COWORK_DATABASE_URL": ""}) as fresh:
        ok(cowork(fresh, "import", "out.yaml"))
        copy = json.loads(ok(cowork(fresh, "show", "hello", "--json")))["automation"]
    assert copy["definition"] == detail["automation"]["definition"]
    assert copy["text"] == detail["automation"]["text"] and copy["id"] != detail["automation"]["id"]


def test_a_bad_flow_file_prints_each_problem_and_saves_nothing(server: ServerProcess, workspace: Path) -> None:
    (workspace / "broken.yaml").write_text(BROKEN, encoding="utf-8")
    refused = cowork(server, "import", "broken.yaml")
    assert refused.returncode == 2
    problems = plain(refused.stderr).splitlines()
    assert problems[0].startswith("broken.yaml:")
    assert any("name" in line and "lower-case" in line for line in problems[1:])
    assert any("steps[0] (a)" in line and "tool" in line for line in problems[1:])
    assert problems[-1] == "Nothing was saved."
    assert json.loads(ok(cowork(server, "list", "--json")))["automations"] == []

    (workspace / "notes.txt").write_text(HELLO, encoding="utf-8")
    suffix = cowork(server, "import", "notes.txt")
    assert suffix.returncode == 2 and "ends in .yaml, .yml or .toml" in suffix.stderr
    missing = cowork(server, "import", "nowhere.yaml")
    assert missing.returncode == 2 and "cannot read nowhere.yaml" in missing.stderr
    toml = workspace / "hello.toml"
    toml.write_text('name = "hello"\n[[steps]]\nid = "wait"\ntype = "delay"\nseconds = 1\n', encoding="utf-8")
    ok(cowork(server, "import", "hello.toml"))

    (workspace / "hello.yaml").write_text(HELLO, encoding="utf-8")
    taken = cowork(server, "import", "hello.yaml")
    assert taken.returncode == 2 and "exists already" in taken.stderr and "--replace" in taken.stderr
    replaced = ok(cowork(server, "import", "hello.yaml", "--replace"))
    assert "Replaced hello" in replaced and "version 2" in replaced
    (workspace / "hello.yaml").write_text(BROKEN.replace("Broken Name", "hello"), encoding="utf-8")
    kept = cowork(server, "import", "hello.yaml", "--replace")
    assert kept.returncode == 2 and "steps[0] (a).tool" in kept.stderr and "Nothing was saved." in kept.stderr
    [hello] = json.loads(ok(cowork(server, "list", "--json")))["automations"]
    assert hello["version"] == 2 and hello["definition"]["steps"][0]["tool"] == "write"


def test_a_run_shows_its_steps_and_result(server: ServerProcess, workspace: Path) -> None:
    imported(server)
    out = plain(ok(cowork(server, "run", "hello", "--input", "who=Ann")))
    lines = out.splitlines()
    assert lines[0].startswith("▶ hello · run run_")
    run_id = lines[0].split("run ", 1)[1]
    assert lines[1].startswith("  ✔ greet  toolCall") and "hello.txt" in lines[1]
    assert lines[2].startswith("  ✔ tell  notification")
    assert lines[3].startswith(f"✔ hello · run {run_id} · done in ")
    assert lines[4].startswith("result: ") and "delivered" in out
    assert (workspace / "hello.txt").read_text(encoding="utf-8") == "hello Ann"

    # A value is JSON when it parses, except for an input the flow declares as a string.
    ok(cowork(server, "run", "hello", "-i", "who=007"))
    assert (workspace / "hello.txt").read_text(encoding="utf-8") == "hello 007"

    info = json.loads(ok(cowork(server, "run-info", run_id, "--json")))
    assert info["status"] == "done" and info["inputs"] == {"who": "Ann"}
    assert [(s["stepId"], s["status"]) for s in info["steps"]] == [("greet", "done"), ("tell", "done")]
    detail = plain(ok(cowork(server, "run-info", run_id)))
    assert detail.splitlines()[0].startswith(f"✔ hello · run {run_id} · done")
    assert 'input: {"arguments": {"filePath": "hello.txt", "content": "hello Ann"}}' in detail

    runs = json.loads(ok(cowork(server, "runs", "hello", "--json", "--limit", "1")))["runs"]
    assert len(runs) == 1 and runs[0]["inputs"] == {"who": "007"}
    listing = ok(cowork(server, "runs"))
    assert run_id in listing and listing.count("✔ done") == 2

    started = ok(cowork(server, "run", "hello", "--no-wait"))
    assert started.startswith("Started run_") and "run-info" in started


def test_the_approval_is_asked_in_a_terminal(server: ServerProcess, workspace: Path) -> None:
    imported(server)
    call(server, "tool/setPolicy", {"name": "write", "policy": "always"})
    env = server.environment() | {"TERM": "xterm-256color"}
    url = ["--url", server.address.url, "--token", server.token]
    child = spawn(workspace, env, "automation", "run", "hello", "--input", "who=Pty", *url)
    child.expect("hello waits for your approval")
    child.expect(r"Run this step\? \[y/n\]")
    shown = " ".join(screen(child).replace("│", " ").split())
    assert "step greet: write(filePath=hello.txt, content=hello Pty)" in shown and "write is set to always ask" in shown
    assert not (workspace / "hello.txt").exists()
    child.send("maybe\r")
    child.expect("Answer y")
    child.send("y\r")
    child.expect("approved")
    child.expect("done in")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (workspace / "hello.txt").read_text(encoding="utf-8") == "hello Pty"
    transcript = plain(child.logfile_read.getvalue())
    assert "✔ greet  toolCall" in transcript and "✔ tell  notification" in transcript


def test_without_a_terminal_a_waiting_run_exits_3_and_is_answered_by_command(
    server: ServerProcess, workspace: Path
) -> None:
    imported(server)
    call(server, "tool/setPolicy", {"name": "write", "policy": "always"})
    waiting = cowork(server, "run", "hello")
    assert waiting.returncode == 3, waiting.stderr
    run_id = plain(waiting.stdout).splitlines()[0].split("run ", 1)[1]
    text = " ".join(plain(waiting.stdout).replace("│", " ").split())
    assert "waiting for approval" in text and "write(filePath=hello.txt, content=hello world)" in text
    assert f"Answer it: cowork automation approve {run_id} · cowork automation reject {run_id}" in text
    info = json.loads(ok(cowork(server, "run-info", run_id, "--json")))
    assert info["status"] == "waiting_for_human" and info["pending"]["tool"] == "write"

    approved = plain(ok(cowork(server, "approve")))  # no id: the one run that waits
    assert approved.startswith(f"Approved: hello · run {run_id}") and "✔ greet" in approved and "done in" in approved
    assert (workspace / "hello.txt").read_text(encoding="utf-8") == "hello world"

    (workspace / "hello.txt").unlink()
    second = cowork(server, "run", "hello")
    assert second.returncode == 3
    second_id = plain(second.stdout).splitlines()[0].split("run ", 1)[1]
    rejected = plain(ok(cowork(server, "reject", second_id)))
    assert "✗ greet" in rejected and "rejected" in rejected and f"run {second_id} · failed" in rejected
    assert not (workspace / "hello.txt").exists()
    late = cowork(server, "approve", second_id)
    assert late.returncode == 1 and "not_resumable" in late.stderr
    nothing = cowork(server, "approve")
    assert nothing.returncode == 2 and "no run waits for approval" in nothing.stderr

    third = cowork(server, "run", "hello", "--no-wait")
    third_id = third.stdout.split()[1].rstrip(":")
    cancelled = ok(cowork(server, "cancel", third_id))
    assert f"⏹ hello · run {third_id} · cancelled" in cancelled
    again = cowork(server, "cancel", third_id)
    assert again.returncode == 1 and "not_running" in again.stderr


def test_errors_name_the_problem(server: ServerProcess, workspace: Path) -> None:
    imported(server)
    for args in (("show", "nope"), ("run", "nope"), ("export", "nope"), ("enable", "nope")):
        result = cowork(server, *args)
        assert result.returncode == 2 and "No automation 'nope'" in result.stderr, args
    bad_input = cowork(server, "run", "hello", "--input", "who")
    assert bad_input.returncode == 2 and "--input 'who' is not KEY=VALUE" in bad_input.stderr
    wrong_type = cowork(server, "run", "hello", "--input", "nobody=1")
    assert wrong_type.returncode == 2 and "invalid_params" in wrong_type.stderr
    unknown_run = cowork(server, "run-info", "run_nope")
    assert unknown_run.returncode == 2 and "run_nope" in unknown_run.stderr
    usage = cowork(server, "run")
    assert usage.returncode == 2 and "NAME" in usage.stderr

    disabled = ok(cowork(server, "disable", "hello"))
    assert "hello disabled" in disabled
    assert json.loads(ok(cowork(server, "list", "--json")))["automations"][0]["enabled"] is False
    assert "flow_hello" in ok(cowork(server, "enable", "hello"))

    unasked = cowork(server, "delete", "hello")
    assert unasked.returncode == 2 and "--yes" in unasked.stderr
    assert "Deleted hello" in ok(cowork(server, "delete", "hello", "--yes"))
    assert json.loads(ok(cowork(server, "list", "--json")))["automations"] == []


def test_an_agent_step_s_approval_is_answered_in_its_session(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    write = MockToolCall(name="write", arguments={"filePath": "notes.txt", "content": "noted"})
    mock_llm.set_script([MockResponse(tool_calls=[write]), MockResponse(text="Wrote it.")])
    env = provider_env("openai", mock_llm.openai_base_url)
    with ServerProcess(tmp_path / "agent-home", workspace, env=env) as server:
        call(server, "tool/setPolicy", {"name": "write", "policy": "always"})
        flow = "name: note\nsteps:\n  - id: ask\n    type: agentStep\n    prompt: Write a note.\n"
        imported(server, flow, "note.yaml")
        waiting = cowork(server, "run", "note")
        assert waiting.returncode == 3, waiting.stderr
        info = json.loads(ok(cowork(server, "runs", "note", "--json")))["runs"][0]
        session = info["pending"]["sessionId"]
        text = " ".join(plain(waiting.stdout).replace("│", " ").split())
        assert f"Answer it: in session {session}: cowork --resume {session}, then /continue" in text

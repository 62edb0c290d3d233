"""The bash tool: output, limits, timeouts, cancellation, sandboxing, secrets kept out, run records."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
from pathlib import Path

import psutil
import pytest

from cowork.config import BashConfig, EnvironmentConfig, ToolsConfig
from cowork.policy import PathPolicy
from cowork.sandbox import find_bwrap, runs_directory
from cowork.tools import ToolContext, ToolError, run_tool
from cowork.tools._bash import BashTool

pytestmark = pytest.mark.anyio
BWRAP = find_bwrap()
needs_bwrap = pytest.mark.skipif(BWRAP is None, reason="bubblewrap is not installed (apt install bubblewrap)")


def context(
    workspace: Path,
    tmp_path: Path,
    *,
    sandbox: bool = False,
    network: bool = False,
    limit: int = 30_000,
    lines: list[str] | None = None,
    environment: EnvironmentConfig | None = None,
    home: Path | None = None,
) -> ToolContext:
    async def log(text: str) -> None:
        if lines is not None:
            lines.append(text)

    return ToolContext(
        workspace=workspace,
        paths=PathPolicy.build(workspace),
        settings=ToolsConfig(
            output_limit_chars=limit,
            bash=BashConfig(default_timeout_seconds=120),
            environment=environment or EnvironmentConfig(),
        ),
        network=network,
        output_dir=tmp_path / "tool-output",
        home=home,
        bwrap=BWRAP if sandbox else None,
        session_id="ses_1",
        operation_id="op_1",
        tool_call_id="call_1",
        log=log,
    )


async def run(ctx: ToolContext, command: str, **extra: object) -> str:
    return await run_tool(BashTool(), {"command": command, **extra}, ctx)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


async def test_output_exit_code_and_streamed_lines(ws: Path, tmp_path: Path) -> None:
    lines: list[str] = []
    out = await run(context(ws, tmp_path, lines=lines), "echo one; echo two >&2; pwd")
    assert out == f"one\ntwo\n{ws}"
    assert lines == ["one", "two", str(ws)]
    failed = await run(context(ws, tmp_path), "echo oops; exit 3")
    assert failed == "oops\n[exit code 3]"


async def test_long_output_is_cut_and_saved(ws: Path, tmp_path: Path) -> None:
    out = await run(context(ws, tmp_path, limit=1000), "seq 1 20000")
    assert len(out) < 1500 and "characters cut" in out
    saved = tmp_path / "tool-output" / "bash-call_1.txt"
    assert saved.read_text(encoding="utf-8").splitlines()[-1] == "20000"
    assert str(saved) in out


async def test_timeout_kills_the_tree(ws: Path, tmp_path: Path) -> None:
    # Durations no other test uses (other tests leave `sleep 300`s of their own running for a while).
    first, second = f"3{os.getpid()}0", f"3{os.getpid()}1"
    with pytest.raises(ToolError, match="stopped after 1 s"):
        await run(context(ws, tmp_path), f"echo started; sleep {first} & sleep {second}", timeout=1)
    await asyncio.sleep(0.2)
    assert not [
        p
        for p in psutil.process_iter(["cmdline"])
        if (p.info["cmdline"] or [])[:2] in (["sleep", first], ["sleep", second])
    ]


async def test_a_timeout_stops_what_an_exited_shell_left_in_its_group(ws: Path, tmp_path: Path) -> None:
    duration = f"4{os.getpid()}7"
    # The shell exits at once; the sleep it left holds the output open until the timeout.
    with pytest.raises(ToolError, match="stopped after 1 s"):
        await run(context(ws, tmp_path), f"(sleep {duration} &); exit 0", timeout=1)
    await asyncio.sleep(0.2)
    assert not [p for p in psutil.process_iter(["cmdline"]) if (p.info["cmdline"] or [])[:2] == ["sleep", duration]]


@pytest.mark.parametrize("sandbox", [False, pytest.param(True, marks=needs_bwrap)])
async def test_cancel_kills_every_process(ws: Path, tmp_path: Path, sandbox: bool) -> None:
    marker = f"{os.getpid()}{int(sandbox)}"
    task = asyncio.ensure_future(
        run(context(ws, tmp_path, sandbox=sandbox), f"sleep 3{marker}1 & (sleep 3{marker}2 &); sleep 3{marker}3")
    )

    # Exactly these three (a prefix match could also catch another test run's sleeps, with a longer pid).
    durations = {f"3{marker}{n}" for n in (1, 2, 3)}

    def survivors() -> list[psutil.Process]:
        found = []
        for p in psutil.process_iter(["cmdline"]):
            argv = p.info["cmdline"] or []
            if argv[:1] == ["sleep"] and len(argv) > 1 and argv[1] in durations:
                found.append(p)
        return found

    for _ in range(200):
        if len(survivors()) == 3:
            break
        await asyncio.sleep(0.02)
    assert len(survivors()) == 3
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(200):
        if not survivors():
            break
        await asyncio.sleep(0.02)
    assert survivors() == []


@needs_bwrap
async def test_sandboxed_writes_and_network(ws: Path, tmp_path: Path) -> None:
    outside = Path.home() / f".cowork-bash-probe-{os.getpid()}"
    out = await run(context(ws, tmp_path, sandbox=True), f"echo hi > made.txt; echo no > {outside}; echo end")
    assert (ws / "made.txt").read_text(encoding="utf-8") == "hi\n" and not outside.exists()
    if not outside.is_relative_to("/tmp"):
        # The home is in the sandbox's read-only view. (A home under /tmp is not: the sandbox has a private /tmp,
        # so the write lands there and is thrown away; `outside` above shows it never reached the real one.)
        assert "Read-only file system" in out
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    probe = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2); print('connected')\""
    try:
        off = await run(context(ws, tmp_path, sandbox=True, network=False), probe)
        assert "connected" not in off and "[exit code" in off
        on = await run(context(ws, tmp_path, sandbox=True, network=True), probe)
        assert on.strip() == "connected"
        asked = await run(context(ws, tmp_path, sandbox=True, network=False), probe, needsNetwork=True)
        assert asked.strip() == "connected"  # an approved needsNetwork call gets the network for itself
    finally:
        server.close()


@needs_bwrap
async def test_network_failure_hint(ws: Path, tmp_path: Path) -> None:
    out = await run(
        context(ws, tmp_path, sandbox=True),
        "curl -sS http://example.invalid.cowork.test/ || getent hosts pypi.org || echo 'Could not resolve host: pypi.org' >&2; exit 6",
    )
    assert "needsNetwork" in out


@pytest.mark.parametrize("sandbox", [False, pytest.param(True, marks=needs_bwrap)])
async def test_commands_get_only_the_allow_listed_environment(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: bool
) -> None:
    secrets = {
        "OPENAI_API_KEY": "sk-secret",
        "COWORK_TOKEN": "cw_token",
        "AWS_SECRET_ACCESS_KEY": "aws-secret",
        "DATABASE_URL": "postgres://u:db-secret@h/db",
        "SSH_AUTH_SOCK": "/tmp/agent.sock",
    }
    for name, value in {**secrets, "LANG": "C.UTF-8", "JAVA_HOME": "/opt/java", "NODE_ENV": "test"}.items():
        monkeypatch.setenv(name, value)
    environment = EnvironmentConfig(allow=["JAVA_HOME", "NODE_*"], set={"CI": "1"})
    out = await run(context(ws, tmp_path, sandbox=sandbox, environment=environment), "env")
    seen = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    assert not set(secrets) & set(seen) and not any(value in out for value in secrets.values())
    assert seen["LANG"] == "C.UTF-8" and seen["PATH"] == os.environ["PATH"]
    assert seen["JAVA_HOME"] == "/opt/java" and seen["NODE_ENV"] == "test" and seen["CI"] == "1"


def boot_ticks(pid: int) -> int:
    """When the process started, in clock ticks since boot (field 22 of /proc/<pid>/stat)."""
    return int(Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()[19])


async def test_a_run_record_lives_while_the_command_runs(ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    runs = runs_directory(home)
    gate = tmp_path / "gate"
    task = asyncio.ensure_future(
        run(context(ws, tmp_path, home=home), f"echo $$ > started; until [ -e {gate} ]; do sleep 0.02; done; exit 4")
    )

    def recorded() -> dict[str, object]:
        records = list(runs.glob("*.json"))
        return json.loads(records[0].read_text(encoding="utf-8")) if records else {}

    # The shell may write its pid before Cowork has recorded it (the record is written after the spawn returns).
    for _ in range(500):
        if (ws / "started").is_file() and (ws / "started").read_text(encoding="utf-8").strip() and "pid" in recorded():
            break
        await asyncio.sleep(0.02)
    shell = int((ws / "started").read_text(encoding="utf-8"))
    (record,) = runs.glob("*.json")
    assert stat.S_IMODE(runs.stat().st_mode) == 0o700 and stat.S_IMODE(record.stat().st_mode) == 0o600
    data = recorded()
    assert data == {
        "sessionId": "ses_1",
        "operationId": "op_1",
        "toolCallId": "call_1",
        "ownerPid": os.getpid(),
        "ownerStartTime": data["ownerStartTime"],
        "pid": shell,
        "pgid": shell,
        "startTime": boot_ticks(shell),
    }
    gate.touch()
    assert (await task).strip() == "[exit code 4]"
    assert list(runs.iterdir()) == []  # gone once the tool returns


def test_side_effects_follow_the_classifier() -> None:
    tool = BashTool()
    assert not tool.side_effects_of({"command": "ls -la"})
    assert tool.side_effects_of({"command": "rm -rf build"})
    assert tool.needs_approval({"command": "ls", "needsNetwork": True})
    assert not tool.needs_approval({"command": "git status"})


@pytest.mark.parametrize(
    "arguments", [{}, {"command": ""}, {"command": "ls", "timeout": -1}, {"command": "ls", "bogus": 1}]
)
def test_bad_input(arguments: dict[str, object]) -> None:
    with pytest.raises(ToolError):
        BashTool().parse(arguments)

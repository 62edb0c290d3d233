"""The sandbox with real bubblewrap: writes confined, network off unless allowed, secrets hidden, no survivors."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from cowork.sandbox import SandboxSpec, bwrap_command, find_bwrap, shell_argv

BWRAP = find_bwrap()
pytestmark = pytest.mark.skipif(BWRAP is None, reason="bubblewrap is not installed (apt install bubblewrap)")


def run(spec: SandboxSpec, command: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    assert BWRAP is not None
    return subprocess.run(
        bwrap_command(BWRAP, spec, shell_argv(command)), capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on the host's loopback that answers "pong"."""
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"pong\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(timeout=2)
    server.close()


def test_can_write_inside_but_not_outside(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outside = tmp_path / "outside.txt"
    result = run(SandboxSpec(workspace), f"echo in > inside.txt && echo out > {outside}; echo $?")
    assert (workspace / "inside.txt").read_text(encoding="utf-8") == "in\n"
    assert not outside.exists()  # under /tmp, it went to the sandbox's private /tmp
    assert result.returncode == 0
    etc = run(SandboxSpec(workspace), "echo x > /etc/cowork-probe")
    assert "Read-only file system" in etc.stderr and not Path("/etc/cowork-probe").exists()
    home_file = Path.home() / f".cowork-sandbox-probe-{os.getpid()}"
    run(SandboxSpec(workspace), f"touch {home_file}")
    assert not home_file.exists()


def test_tmp_is_private_and_hooks_are_read_only(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".cowork").mkdir()
    marker = Path("/tmp") / f"cowork-private-{os.getpid()}"
    result = run(
        SandboxSpec(workspace),
        f"echo x > {marker} && cat {marker}; echo hook > .git/hooks/pre-commit; echo c > .cowork/config.toml",
    )
    assert result.stdout.strip() == "x"
    assert not marker.exists()  # the sandbox's /tmp was its own
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert not (workspace / ".cowork" / "config.toml").exists()


def test_network_off_unless_allowed(tmp_path: Path, listener: int) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    probe = f"python3 -c \"import socket; s=socket.create_connection(('127.0.0.1', {listener}), 3); print(s.recv(10).decode())\""
    closed = run(SandboxSpec(workspace, network=False), probe)
    assert closed.returncode != 0 and "pong" not in closed.stdout
    opened = run(SandboxSpec(workspace, network=True), probe)
    assert opened.returncode == 0 and opened.stdout.strip() == "pong"


def test_secrets_on_the_deny_list_are_hidden(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    secrets = tmp_path / "fake-ssh"
    secrets.mkdir()
    (secrets / "id_ed25519").write_text("PRIVATE KEY", encoding="utf-8")
    token = tmp_path / "token"
    token.write_text("TOKEN", encoding="utf-8")
    result = run(SandboxSpec(workspace, hidden=(secrets, token)), f"ls {secrets}; cat {token}; echo done")
    assert "id_ed25519" not in result.stdout and "TOKEN" not in result.stdout and "done" in result.stdout


def test_killing_the_sandbox_leaves_no_survivors(tmp_path: Path) -> None:
    assert BWRAP is not None
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # Durations unique to this test process, so sleepers of anything else running on the machine never count.
    base = 10_000 + os.getpid() % 50_000
    mine = {str(base), str(base + 1), str(base + 2)}
    argv = bwrap_command(
        BWRAP, SandboxSpec(workspace), shell_argv(f"sleep {base} & (sleep {base + 1} &); sleep {base + 2}")
    )
    process = subprocess.Popen(argv, start_new_session=True)

    def sleepers() -> list[psutil.Process]:
        found = []
        for proc in psutil.process_iter(["cmdline"]):
            cmd = proc.info["cmdline"] or []
            if cmd[:1] == ["sleep"] and cmd[1:] and cmd[1] in mine:
                found.append(proc)
        return found

    try:
        deadline = time.monotonic() + 10
        while len(sleepers()) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(sleepers()) == 3
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
        deadline = time.monotonic() + 10
        while sleepers() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sleepers() == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)

"""The README's no-key quickstart, run as written on a fresh COWORK_HOME while a server started with other provider
settings is already running there: the commands must reach the mock model, not the stale server."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def quickstart_block() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("No key?", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None, "the README lost its no-key quickstart"
    return [line for line in block.group(1).splitlines() if line.strip()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_readme_quickstart_reaches_the_mock_past_a_stale_server(tmp_path: Path) -> None:
    lines = quickstart_block()
    mock_line, run_line = lines[0], lines[1]
    assert mock_line.startswith("./scripts/mockllm ") and mock_line.endswith("&")
    assert "./scripts/cowork run " in run_line
    port = str(free_port())  # the README's port, moved to a free one so a busy 8765 cannot fail the test
    workspace = tmp_path / "project"
    workspace.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COWORK_", "OPENAI_", "ANTHROPIC_", "GOOGLE_"))}
    env["COWORK_HOME"] = str(tmp_path / "home")
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"

    # A server started earlier with a wrong base URL, the way a user's first try leaves one behind.
    stale = env | {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "COWORK_MODEL": "mock-model"}
    subprocess.run(
        [sys.executable, "-m", "cowork", "server", "restart"], cwd=workspace, env=stale, check=True, timeout=60
    )

    mock = subprocess.Popen(
        ["bash", "-c", f"exec {ROOT / mock_line.removesuffix('&').strip().replace('8765', port)}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert mock.stdout is not None
        assert "listening" in mock.stdout.readline()
        command = run_line.replace("8765", port).replace("./scripts/", f"{ROOT}/scripts/")
        done = subprocess.run(
            ["bash", "-c", command], cwd=workspace, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert "echo: hello" in done.stdout
        assert "Restarted the Cowork server" in done.stderr  # said, not silent
    finally:
        os.killpg(mock.pid, signal.SIGTERM)
        mock.wait(timeout=10)
        if mock.stdout is not None:
            mock.stdout.close()
        subprocess.run(
            [sys.executable, "-m", "cowork", "server", "stop"], cwd=workspace, env=env, timeout=60, check=False
        )

"""A real server writes its log as private JSON lines, and `cowork logs` reads them."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from cowork.testing.server import ServerProcess, provider_env, wait_until


def test_a_server_run_writes_json_lines_that_cowork_logs_reads(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    home = tmp_path / "home"
    log = home / "logs" / "server.log"
    with ServerProcess(home, workspace, env=provider_env("openai", "http://127.0.0.1:9/v1"), umask=0o022) as server:
        assert wait_until(lambda: "provider stack warmed" in log.read_text(encoding="utf-8"), timeout=60)
        token = server.token
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert records and all({"ts", "level", "logger", "msg", "pid"} <= record.keys() for record in records)
    assert all(
        record["ts"].endswith("Z") and len(record["ts"]) == len("2025-06-01T09:30:12.345Z") for record in records
    )
    assert any(r["msg"].startswith("provider stack warmed") and r["logger"] == "cowork.core" for r in records)
    assert token not in log.read_text(encoding="utf-8")
    assert stat.S_IMODE(log.stat().st_mode) == 0o600

    shown = subprocess.run(
        [sys.executable, "-m", "cowork", "logs", "--grep", "warmed"],
        env={**os.environ, "COWORK_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    (line,) = shown.stdout.splitlines()
    assert " INFO    cowork.core: provider stack warmed in " in line


def test_the_logs_section_sets_rotation(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    home = tmp_path / "home"
    limits = {"COWORK_LOGS__MAX_MB": "0.001", "COWORK_LOGS__BACKUPS": "1"}  # about 1 KB: start-up alone passes it
    with ServerProcess(home, workspace, env=limits, umask=0o022):
        assert wait_until(lambda: (home / "logs" / "server.log.1").exists(), timeout=60)
    files = sorted((home / "logs").glob("server.log*"))
    assert [p.name for p in files] == ["server.log", "server.log.1"]
    assert [stat.S_IMODE(p.stat().st_mode) for p in files] == [0o600, 0o600]

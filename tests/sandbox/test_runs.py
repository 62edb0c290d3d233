"""Run records: what a killed Cowork left running is stopped at the next start, and nothing else is touched."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from cowork.sandbox import EarlierRun, recover_runs

DEAD_OWNER = {"ownerPid": 1, "ownerStartTime": -1}
"""A Cowork that is gone (pid 1 never started at tick -1)."""


def boot_ticks(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()[19])


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def record(directory: Path, name: str, **data: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    path.write_text(json.dumps({"sessionId": "ses", "operationId": "op", "toolCallId": name, **data}), "utf-8")
    return path


@pytest.fixture
def spawned() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test starts; whatever is left of them is killed afterwards."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        with_children = []
        try:
            with_children = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            pass
        for proc in with_children:
            proc.kill()
        process.wait(5)
        if process.stdout is not None:
            process.stdout.close()


def start(spawned: list[subprocess.Popen[str]], script: str) -> tuple[subprocess.Popen[str], list[int]]:
    """A shell leading its own process group; it prints one pid a line for each process of interest."""
    process = subprocess.Popen(["bash", "-c", script], stdout=subprocess.PIPE, text=True, start_new_session=True)
    spawned.append(process)
    assert process.stdout is not None
    return process, [int(process.stdout.readline())]


def test_a_leftover_command_and_its_group_are_stopped(tmp_path: Path, spawned: list[subprocess.Popen[str]]) -> None:
    shell, (sleeper,) = start(spawned, "trap '' TERM; sleep 300 & echo $!; wait")
    path = record(tmp_path, "call_a", **DEAD_OWNER, pid=shell.pid, pgid=shell.pid, startTime=boot_ticks(shell.pid))
    assert recover_runs(tmp_path, grace=0.2) == {("op", "call_a"): EarlierRun("stopped")}
    assert shell.wait(5) is not None and not alive(sleeper)
    assert not path.exists()


def test_orphans_of_a_dead_shell_are_stopped(tmp_path: Path, spawned: list[subprocess.Popen[str]]) -> None:
    # The shell is gone (as when the kernel killed it with Cowork); the sleep it started lives on in its group.
    shell, (sleeper,) = start(spawned, "sleep 300 >/dev/null & echo $!")
    ticks = boot_ticks(shell.pid)
    shell.wait(5)
    assert alive(sleeper) and os.getpgid(sleeper) == shell.pid
    record(tmp_path, "call_b", **DEAD_OWNER, pid=shell.pid, pgid=shell.pid, startTime=ticks)
    assert recover_runs(tmp_path, grace=0.2) == {("op", "call_b"): EarlierRun("stopped")}
    assert not alive(sleeper)


def test_a_command_that_finished_is_reported_with_its_exit_code(tmp_path: Path) -> None:
    # No such pid can exist (above the kernel's largest pid_max): nothing is left of it.
    record(tmp_path, "call_c", **DEAD_OWNER, pid=2**22 + 1, pgid=2**22 + 1, startTime=5, exitCode=3)
    assert recover_runs(tmp_path, grace=0.2) == {("op", "call_c"): EarlierRun("finished", 3)}
    assert EarlierRun("finished", 3).to_meta() == {"state": "finished", "exitCode": 3}


def test_a_reused_pid_is_never_touched(tmp_path: Path, spawned: list[subprocess.Popen[str]]) -> None:
    innocent, _ = start(spawned, "echo $$; exec sleep 300")
    wrong = boot_ticks(innocent.pid) - 1
    record(tmp_path, "call_d", **DEAD_OWNER, pid=innocent.pid, pgid=innocent.pid, startTime=wrong)
    assert recover_runs(tmp_path, grace=0.2) == {("op", "call_d"): EarlierRun("stopped")}
    assert alive(innocent.pid)


def test_records_of_a_running_cowork_are_left_alone(tmp_path: Path, spawned: list[subprocess.Popen[str]]) -> None:
    mine, _ = start(spawned, "echo $$; exec sleep 300")
    owner = {"ownerPid": os.getpid(), "ownerStartTime": boot_ticks(os.getpid())}
    path = record(tmp_path, "call_e", **owner, pid=mine.pid, pgid=mine.pid, startTime=boot_ticks(mine.pid))
    assert recover_runs(tmp_path, grace=0.2) == {}
    assert alive(mine.pid) and path.exists()


def test_unreadable_and_unstarted_records_are_dropped(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    tmp_path.joinpath("broken.json").write_text("{not json", encoding="utf-8")
    unstarted = record(tmp_path, "call_f", **DEAD_OWNER)
    assert recover_runs(tmp_path, grace=0.2) == {}
    assert not broken.exists() and not unstarted.exists()
    assert recover_runs(tmp_path / "missing") == {}

"""`cowork logs` as a user runs it: a real process reading the log under `COWORK_HOME`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pexpect

from cowork.testing.server import wait_until

OLD = "2025-06-01 08:59:59,999 INFO cowork.core: written by an older Cowork"
RECORDS = [
    {"ts": "2025-06-01T09:30:00.000Z", "level": "INFO", "logger": "cowork.core", "msg": "started", "pid": 1},
    {"ts": "2025-06-01T09:30:01.250Z", "level": "DEBUG", "logger": "cowork.store", "msg": "query ran", "pid": 1},
    {"ts": "2025-06-01T09:30:02.500Z", "level": "WARNING", "logger": "cowork.mcp", "msg": "time: Crashed", "pid": 1},
    {
        "ts": "2025-06-01T09:30:03.750Z",
        "level": "ERROR",
        "logger": "cowork.runtime",
        "msg": "turn failed",
        "exc": "Traceback (most recent call last):\nValueError: bad",
        "pid": 1,
        "session_id": "ses_1",
    },
    {"ts": "2025-06-01T09:30:04.000Z", "level": "INFO", "logger": "cowork.server", "msg": "idle: exiting", "pid": 1},
]
LINES = [json.dumps(r) for r in RECORDS]
SHOWN = [
    "09:30:00.000 INFO    cowork.core: started",
    "09:30:01.250 DEBUG   cowork.store: query ran",
    "09:30:02.500 WARNING cowork.mcp: time: Crashed",
    "09:30:03.750 ERROR   cowork.runtime: turn failed session_id=ses_1",
    "Traceback (most recent call last):",
    "ValueError: bad",
    "09:30:04.000 INFO    cowork.server: idle: exiting",
]


def environment(home: Path) -> dict[str, str]:
    return {**os.environ, "COWORK_HOME": str(home), "TZ": "UTC", "PYTHONUNBUFFERED": "1"}


def write_log(home: Path, lines: list[str], name: str = "server.log") -> Path:
    path = home / "logs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def logs(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cowork", "logs", *args],
        env=environment(home),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_shows_the_last_lines_readably(tmp_path: Path) -> None:
    write_log(tmp_path, [OLD, *LINES])
    result = logs(tmp_path)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.splitlines() == [OLD, *SHOWN]


def test_n_counts_records(tmp_path: Path) -> None:
    write_log(tmp_path, [OLD, *LINES])
    assert logs(tmp_path, "-n", "2").stdout.splitlines() == SHOWN[3:]
    assert logs(tmp_path, "--lines", "0").stdout == ""


def test_a_negative_count_is_a_usage_error(tmp_path: Path) -> None:
    write_log(tmp_path, LINES)
    result = logs(tmp_path, "-n", "-1")
    assert (result.returncode, result.stdout, result.stderr) == (
        2,
        "",
        "cowork logs: -n -1: expected 0 or more lines\n",
    )


def test_level_is_a_minimum(tmp_path: Path) -> None:
    write_log(tmp_path, [OLD, *LINES])
    assert logs(tmp_path, "--level", "warning").stdout.splitlines() == SHOWN[2:6]
    assert logs(tmp_path, "--level", "ERROR").stdout.splitlines() == SHOWN[3:6]


def test_grep_searches_message_and_logger_in_any_case(tmp_path: Path) -> None:
    write_log(tmp_path, [OLD, *LINES])
    assert logs(tmp_path, "--grep", "crashed").stdout.splitlines() == [SHOWN[2]]
    assert logs(tmp_path, "--grep", "COWORK.STORE").stdout.splitlines() == [SHOWN[1]]
    assert logs(tmp_path, "--grep", "older cowork").stdout.splitlines() == [OLD]


def test_since(tmp_path: Path) -> None:
    write_log(tmp_path, [OLD, *LINES])
    result = logs(tmp_path, "--since", "2025-06-01T09:30:03Z")
    assert result.stdout.splitlines() == SHOWN[3:]
    bad = logs(tmp_path, "--since", "yesterday")
    assert bad.returncode == 2 and "expected a duration" in bad.stderr and "Traceback" not in bad.stderr


def test_json_prints_the_lines_as_written(tmp_path: Path) -> None:
    write_log(tmp_path, [OLD, *LINES])
    assert logs(tmp_path, "--json", "-n", "2").stdout.splitlines() == LINES[3:]
    old = logs(tmp_path, "--json", "--grep", "older")
    assert [json.loads(line) for line in old.stdout.splitlines()] == [{"raw": OLD}]


def test_all_reads_the_rotated_files_first(tmp_path: Path) -> None:
    write_log(tmp_path, LINES[:2], "server.log.2")
    write_log(tmp_path, LINES[2:3], "server.log.1")
    write_log(tmp_path, LINES[4:])
    assert logs(tmp_path).stdout.splitlines() == SHOWN[6:]
    assert logs(tmp_path, "--all").stdout.splitlines() == [*SHOWN[:3], SHOWN[6]]


def test_a_missing_log_says_where_it_looked(tmp_path: Path) -> None:
    result = logs(tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    (line,) = result.stderr.splitlines()
    assert str(tmp_path / "logs" / "server.log") in line and "writes it when it runs" in line


def test_levels_are_coloured_on_a_terminal(tmp_path: Path) -> None:
    write_log(tmp_path, LINES[2:3])
    child = pexpect.spawn(
        sys.executable,
        ["-m", "cowork", "logs"],
        env={**environment(tmp_path), "TERM": "xterm-256color"},
        encoding="utf-8",
        timeout=40,
    )
    output = child.read()
    child.close()
    assert "\x1b[33mWARNING" in output  # yellow
    assert "\x1b[2m09:30:02.500" in output and "time: Crashed" in output


class Follower:
    """`cowork logs -f` in the background, its output collected line by line."""

    def __init__(self, home: Path, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cowork", "logs", "-f", *args],
            env=environment(home),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def sees(self, text: str) -> bool:
        return wait_until(lambda: any(text in line for line in self.lines), timeout=30)

    def interrupt(self) -> tuple[int, str]:
        """Ctrl-C, as a person stops it: its exit code and what it wrote on stderr."""
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(30)
        self.reader.join(10)
        assert self.process.stderr is not None
        return code, self.process.stderr.read()

    def __enter__(self) -> Follower:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.reader.join(10)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


def test_follow_sees_new_lines_and_rotation_then_stops_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    path = write_log(tmp_path, LINES[:2])
    with Follower(tmp_path, "-n", "1") as follower:
        assert follower.sees("query ran")
        with path.open("a", encoding="utf-8") as fh:
            fh.write(LINES[2] + "\n")
        assert follower.sees("time: Crashed")
        # Rotated as the server's handler does it: a last line, renamed, then a new file.
        with path.open("a", encoding="utf-8") as fh:
            fh.write(LINES[3] + "\n")
        path.rename(path.with_name("server.log.1"))
        write_log(tmp_path, LINES[4:])
        assert follower.sees("idle: exiting")
        code, stderr = follower.interrupt()
    assert (code, stderr) == (0, "")
    assert follower.lines == SHOWN[1:]  # nothing before the last line, nothing lost or repeated after it


def test_follow_applies_the_filters(tmp_path: Path) -> None:
    path = write_log(tmp_path, LINES[:1])
    with Follower(tmp_path, "--level", "warning", "--json") as follower:
        with path.open("a", encoding="utf-8") as fh:
            fh.write("".join(line + "\n" for line in LINES[1:]))
        # The last line it should print; the INFO after it was in the same write, so it was read and left out.
        assert follower.sees("turn failed")
        code, _ = follower.interrupt()
    assert code == 0
    assert follower.lines == LINES[2:4]

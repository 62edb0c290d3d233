"""Run records: a small file per running command, so a Cowork that was killed can stop what it left behind.

The `bash` tool writes `<home>/run/commands/<random>.json` before the command starts, fills in the process's pid,
group and start time once it runs, and the exit code once it exits; the file goes when the tool returns. At the
next start, `recover_runs` reads what is left: every process group whose leader is still the recorded process
(same pid *and* start time, so a reused pid is never touched) or whose leader is gone but whose members remain is
stopped, and each tool call gets an `EarlierRun` saying how its command ended, for the re-run prompt.

The start time is field 22 of `/proc/<pid>/stat` (clock ticks since boot): unique for a pid until the next boot.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from cowork.processes import group_members, stop_tree

__all__ = ["CommandRun", "EarlierRun", "recover_runs", "runs_directory"]

log = logging.getLogger(__name__)


def runs_directory(home: Path) -> Path:
    """Where the run records of Cowork with state directory `home` live."""
    return home / "run" / "commands"


def start_time(pid: int, *, zombie: bool = True) -> int | None:
    """The process's start time (field 22 of `/proc/<pid>/stat`), or None when there is no such process (nor, with
    `zombie=False`, when it has exited and waits to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may contain spaces and ')': split after the last one.
    fields = stat[stat.rfind(")") + 2 :].split()  # fields[0] is field 3, the state
    try:
        return None if not zombie and fields[0] == "Z" else int(fields[19])
    except (IndexError, ValueError):
        return None


def _write(path: Path, data: dict[str, Any]) -> None:
    """Replace `path` with `data` (mode 0600), never leaving a half-written record."""
    temporary = path.with_name(f".{path.name}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "w", encoding="utf-8") as file:
        json.dump(data, file)
    os.replace(temporary, path)


@dataclass(frozen=True)
class EarlierRun:
    """How a command that was under way when Cowork stopped ended."""

    state: Literal["finished", "stopped", "running"]
    """`finished`: it exited by itself (its result was not saved); `stopped`: it was still running and has been
    stopped (by the kernel when Cowork died, or at recovery); `running`: it could not be stopped."""
    exit_code: int | None = None

    def to_meta(self) -> dict[str, Any]:
        """The form kept in the tool call's `meta` (`earlierRun`), which the re-run prompt reads."""
        return {"state": self.state} | ({"exitCode": self.exit_code} if self.exit_code is not None else {})


class CommandRun:
    """The run record of one command: `begin` before it starts, `started`, `exited`, then `close`."""

    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path = path
        self._data = data

    @classmethod
    def begin(cls, home: Path, *, session_id: str, operation_id: str, tool_call_id: str) -> CommandRun:
        """Record that a command is about to start (blocking, small: a file of a few hundred bytes)."""
        directory = runs_directory(home)
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(directory, 0o700)
        owner = os.getpid()
        data: dict[str, Any] = {
            "sessionId": session_id,
            "operationId": operation_id,
            "toolCallId": tool_call_id,
            "ownerPid": owner,
            "ownerStartTime": start_time(owner),
        }
        # Random, not the tool call id: that one is written by the model and could be anything.
        run = cls(directory / f"{uuid.uuid4().hex}.json", data)
        _write(run.path, data)
        return run

    def started(self, pid: int) -> None:
        """The command runs as `pid`, the leader of its own process group."""
        self._data |= {"pid": pid, "pgid": pid, "startTime": start_time(pid)}
        _write(self.path, self._data)

    def exited(self, code: int) -> None:
        """The command ended with `code` (its result is not saved yet)."""
        self._data["exitCode"] = code
        _write(self.path, self._data)

    def close(self) -> None:
        self.path.unlink(missing_ok=True)


def recover_runs(directory: Path, *, grace: float = 1.0) -> dict[tuple[str, str], EarlierRun]:
    """Stop what commands of a dead Cowork left running; return how each ended, by (operation id, tool call id).

    Records of a Cowork that is still running (another server on the same home) are left alone. A record with no
    process yet (Cowork died while starting it) has no entry. Blocking (stopping waits up to twice `grace`): call
    it off the event loop.
    """
    ended: dict[tuple[str, str], EarlierRun] = {}
    if not directory.is_dir():
        return ended
    for stray in directory.glob(".*.tmp"):  # a write cut short by the crash
        stray.unlink(missing_ok=True)
    for path in sorted(directory.glob("*.json")):
        try:
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            key = (str(data["operationId"]), str(data["toolCallId"]))
            owner, owner_start = int(data["ownerPid"]), data.get("ownerStartTime")
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)
            continue
        if owner_start is not None and start_time(owner) == owner_start:
            continue  # its Cowork is alive: the command is that server's to run and stop
        earlier = _stop_leftovers(data, grace)
        if earlier is not None:
            ended[key] = earlier
        path.unlink(missing_ok=True)
    return ended


def _stop_leftovers(data: dict[str, Any], grace: float) -> EarlierRun | None:
    try:
        pid, pgid = int(data["pid"]), int(data["pgid"])
    except (KeyError, TypeError, ValueError):
        return None
    recorded = data.get("startTime")
    leader = start_time(pid)
    # A pid is not reused while it still names a process group: if the pid belongs to another process now, nothing
    # is left of ours in that group; if it belongs to no process, the group's remaining members are ours.
    ours = leader == recorded if leader is not None else bool(group_members(pgid))
    left = False
    if ours:
        log.warning("stopping a command (pid %d, group %d) a previous Cowork left running", pid, pgid)
        stop_tree(pid, grace=grace, pgid=pgid)
        left = start_time(pid, zombie=False) == recorded or bool(group_members(pgid))
    code = data.get("exitCode")
    if isinstance(code, int) and not isinstance(code, bool):
        return EarlierRun("finished", code)
    return EarlierRun("running" if left else "stopped")

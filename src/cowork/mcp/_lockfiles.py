"""Lockfiles of stdio MCP servers, and the sweep that stops the servers a crashed Cowork left behind.

Apart from spawning (`_process`, which needs the SDK): the sweep runs at every start, servers or not.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import psutil

from cowork.processes import stop_tree

__all__ = ["sweep_orphans", "write_lock"]

log = logging.getLogger(__name__)


def _process_identity(pid: int) -> float | None:
    try:
        return psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def _lock_path(lock_dir: Path, name: str, pid: int) -> Path:
    return lock_dir / f"{name}-{pid}.json"


def write_lock(lock_dir: Path, name: str, pid: int) -> Path | None:
    created = _process_identity(pid)
    if created is None:
        return None
    me = psutil.Process()
    lock_dir.mkdir(parents=True, exist_ok=True)
    path = _lock_path(lock_dir, name, pid)
    data = {"name": name, "pid": pid, "createTime": created, "ownerPid": me.pid, "ownerCreateTime": me.create_time()}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def sweep_orphans(lock_dir: Path, *, grace: float) -> list[int]:
    """Kill stdio servers a crashed Cowork left behind; return their pids.

    A lockfile's process is killed only if its pid and creation time both match (a reused pid is left alone)
    and the Cowork that started it is gone. Blocking: call it off the event loop.
    """
    killed: list[int] = []
    if not lock_dir.is_dir():
        return killed
    for path in sorted(lock_dir.glob("*.json")):
        try:
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            pid, created = int(data["pid"]), float(data["createTime"])
            owner, owner_created = int(data["ownerPid"]), float(data["ownerCreateTime"])
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)
            continue
        owner_now = _process_identity(owner)
        if owner_now is not None and abs(owner_now - owner_created) < 0.01:
            continue  # its Cowork is still running (another server on the same home): not an orphan
        now = _process_identity(pid)
        if now is not None and abs(now - created) < 0.01:
            log.warning("killing orphaned MCP server %s (pid %d) left by a previous Cowork", data.get("name"), pid)
            stop_tree(pid, grace=grace, pgid=pid)
            killed.append(pid)
        path.unlink(missing_ok=True)
    return killed

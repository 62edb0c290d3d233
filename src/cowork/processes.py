"""Stopping a process tree: the one way every part of Cowork ends a command, a server or a test child.

SIGTERM goes to the process, every descendant and its process group; whatever is still alive after the grace
period gets SIGKILL. Built on psutil so that descendants which left the group (daemonised, `setsid`) are found too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

import psutil

__all__ = ["stop_tree"]


def stop_tree(pid: int, *, grace: float, pgid: int | None = None) -> None:
    """SIGTERM the process, its descendants and its process group; SIGKILL whatever survives `grace` seconds.

    Blocking (it waits up to twice `grace`): call it from a worker thread in async code. Our own children are not
    reaped here, so an asyncio subprocess can still be awaited afterwards.
    """
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        procs = []
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            proc.send_signal(signal.SIGTERM)
    if pgid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGTERM)
    # Our own children are left for asyncio's child watcher to reap (waiting on them here would reap them first,
    # and asyncio would then log "Unknown child process"); the rest are waited for with psutil.
    mine = [proc for proc in procs if _is_own_child(proc)]
    _gone, alive = psutil.wait_procs([proc for proc in procs if proc not in mine], timeout=grace)
    alive += [proc for proc in mine if not _exits_within(proc, grace)]
    for proc in alive:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            proc.kill()
    if pgid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    psutil.wait_procs([proc for proc in alive if proc not in mine], timeout=grace)


def _is_own_child(proc: psutil.Process) -> bool:
    try:
        return proc.ppid() == os.getpid()
    except psutil.NoSuchProcess:
        return False


def _exits_within(proc: psutil.Process, seconds: float) -> bool:
    """Whether `proc` ends (a zombie waiting to be reaped counts) within `seconds`, without reaping it."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)

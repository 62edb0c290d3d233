"""Stopping a process tree: the one way every part of Cowork ends a command, a server or a test child.

SIGTERM goes to the process, every descendant and every member of its process group; whatever is still alive after
the grace period gets SIGKILL. Built on psutil so that descendants which left the group (daemonised, `setsid`) are
found too, and group members whose parent already died (orphans of a killed shell) are waited for as well.

`die_with_parent` is the other half: a child that is killed by the kernel when Cowork dies, however it dies.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Callable

import psutil

__all__ = ["die_with_parent", "group_members", "stop_tree"]

_PR_SET_PDEATHSIG = 1
# Loaded once here: loading a library in a child between fork and exec could deadlock on the loader's lock.
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None


def die_with_parent() -> Callable[[], None] | None:
    """A `preexec_fn` that makes the child get SIGKILL when the thread that started it dies (Linux), else None.

    Only the direct child is covered (the kernel does not pass the setting on to what it starts): its process group
    has to be stopped too, which is what the command run records are for.
    """
    prctl = _PRCTL
    if prctl is None:
        return None
    parent = os.getpid()
    sigkill = int(signal.SIGKILL)

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, sigkill, 0, 0, 0)
        if os.getppid() != parent:
            # The parent died between fork and prctl, so the signal will never come: end here instead.
            os._exit(1)

    return arm


def group_members(pgid: int) -> list[psutil.Process]:
    """The live processes of process group `pgid` (a zombie has done all it will do, and is left out)."""
    members = []
    for proc in psutil.process_iter():
        with contextlib.suppress(ProcessLookupError, PermissionError, psutil.Error):
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                members.append(proc)
    return members


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
    if pgid is not None:
        procs += [proc for proc in group_members(pgid) if proc not in procs]
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
    # In tree order, the process first: a parent killed after its children could end on its own in between.
    alive.sort(key=lambda proc: procs.index(proc) if proc in procs else len(procs))
    for proc in alive:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            proc.kill()
    if pgid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    # A killed process takes a moment to exit: once this returns, what was stopped is gone.
    deadline = time.monotonic() + grace
    psutil.wait_procs([proc for proc in alive if proc not in mine], timeout=grace)
    for proc in alive:
        if proc in mine:
            _exits_within(proc, max(0.0, deadline - time.monotonic()))


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

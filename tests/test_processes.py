"""`cowork.processes.stop_tree`: a whole process tree ends, stubborn and escaped members included."""

from __future__ import annotations

import signal
import subprocess

import psutil

from cowork.processes import stop_tree

# A parent that ignores SIGTERM, a child in its group that ignores it too, and a grandchild that left the group
# (setsid). Each prints its pid once it is running.
_TREE = r"""
trap '' TERM
(trap '' TERM; echo $BASHPID; exec sleep 300) &
setsid sh -c 'echo $$; exec sleep 300' &
echo $$
wait
"""


def _start_tree() -> tuple[subprocess.Popen[str], list[int]]:
    parent = subprocess.Popen(["bash", "-c", _TREE], stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert parent.stdout is not None
    pids = [int(parent.stdout.readline()) for _ in range(3)]
    return parent, pids


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_every_member_ends_even_those_ignoring_sigterm_or_outside_the_group() -> None:
    parent, pids = _start_tree()
    try:
        assert parent.pid in pids and all(_alive(pid) for pid in pids)
        stop_tree(parent.pid, grace=0.5, pgid=parent.pid)
        # SIGTERM was ignored, so it took the SIGKILL after the grace.
        assert parent.wait(timeout=5) == -signal.SIGKILL
        assert [pid for pid in pids if _alive(pid)] == []
    finally:
        assert parent.stdout is not None
        parent.stdout.close()
        for pid in pids:
            try:
                psutil.Process(pid).kill()
            except psutil.NoSuchProcess:
                pass


def test_a_polite_process_ends_on_sigterm_without_waiting_for_the_grace() -> None:
    child = subprocess.Popen(["sleep", "300"], start_new_session=True)
    stop_tree(child.pid, grace=30, pgid=child.pid)
    assert child.wait(timeout=5) == -signal.SIGTERM


def test_a_process_that_already_ended_is_fine() -> None:
    child = subprocess.Popen(["true"])
    child.wait()
    stop_tree(child.pid, grace=0.1)

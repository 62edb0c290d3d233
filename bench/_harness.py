"""What the turn benchmarks share: the workspace, the mock process, a served turn, and process meters."""

from __future__ import annotations

import math
import statistics
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import psutil

from _floor import QUESTION
from cowork.protocol import ErrorEvent
from cowork.testing.client import EventClient
from cowork.testing.server import provider_env

__all__ = [
    "CpuMeter",
    "RssSampler",
    "make_workspace",
    "median_ms",
    "percentile",
    "served_turn",
    "server_env",
    "start_mock",
    "stop_mock",
    "window",
]


def make_workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("def main():\n    return 42\n", encoding="utf-8")
    for i in range(30):
        (ws / "src" / f"mod{i}.py").write_text(f"def f{i}():\n    return {i}\n" * 20, encoding="utf-8")
    return ws


def server_env(base_url: str, kind: str = "openai") -> dict[str, str]:
    """The environment of a benchmarked server: the mock as its provider, and no document toolbox built in the
    background. A server with a fresh home otherwise starts `uv pip install` of the toolbox after its warm-up: about
    10 s of CPU once per home, which lands in whichever turns run meanwhile and is not what any bench measures."""
    return provider_env(kind, base_url) | {"COWORK_TOOLS__TOOLBOX__INSTALL": "never"}


def start_mock(*args: str) -> tuple[subprocess.Popen[str], str]:
    """`bench/_mock.py` in its own process; returns it and its URL."""
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("_mock.py")), *args], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, line.rsplit(" ", 1)[1].strip()


def stop_mock(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait()


async def served_turn(client: EventClient, session_id: str, text: str = QUESTION, within: float = 300) -> None:
    """One turn through the server, from `turn/start` until the client has the turn's terminal status.

    Forgets the client's earlier events first: `EventClient.wait_turn_end` scans every event it holds at each one
    that arrives, which over a long session would cost the client more than the server's work.
    """
    client.events.clear()
    client.notifications.clear()
    started = await client.call(
        "turn/start", {"sessionId": session_id, "text": text, "clientMessageId": uuid.uuid4().hex}
    )
    status = await client.wait_turn_end(started["operationId"], within=within)
    if status != "done":
        why = [f"{e.payload.code}: {e.payload.message}" for e in client.events if isinstance(e.payload, ErrorEvent)]
        raise RuntimeError(f"turn ended {status}: {'; '.join(why) or 'no error event'}")


class CpuMeter:
    """CPU seconds (user + system) a process has used since the meter was made or last read.

    Includes its children once they have exited and been reaped (the `rg` that each `grep` call starts).
    """

    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)
        self.last = self.total()

    def total(self) -> float:
        times = self.process.cpu_times()
        return times.user + times.system + times.children_user + times.children_system

    def lap(self) -> float:
        now = self.total()
        used, self.last = now - self.last, now
        return used


class RssSampler:
    """The peak resident set size of one process, sampled every `interval` seconds on a thread."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.process = psutil.Process(pid)
        self.interval = interval
        self.peak = self.process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.peak = max(self.peak, self.process.memory_info().rss)
            except psutil.NoSuchProcess:
                return

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        try:
            self.peak = max(self.peak, self.process.memory_info().rss)
        except psutil.NoSuchProcess:
            pass


def window(turns: int, start: float, end: float) -> range:
    """Turn numbers (1-based) from `start` to `end` as fractions of `turns`: 6-15 for 0.05-0.15 of 100 turns.

    At least one turn, however few there are.
    """
    first = int(start * turns) + 1
    last = max(first, int(end * turns + 0.5))
    return range(min(first, turns), min(last, turns) + 1)


def median_ms(seconds: list[float]) -> float:
    return statistics.median(seconds) * 1e3


def percentile(values: list[float], pct: float) -> float:
    """The nearest-rank percentile (`pct` in 0-100) of `values`."""
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]

"""Throughput with many sessions at once: K sessions, each on its own WebSocket connection, each running T turns.

For each K, a fresh server process (fresh home) gets K client connections, each creating one session; then all K
sessions run their T turns at the same time (glob → grep → read → answer on the zero-latency mock). Prints turns
per second, the median and 99th-percentile turn latency, the server's peak RSS (sampled every 50 ms), errors, and
how busy each process was (a process near 100% of a core is the bottleneck). The floor is the raw loop
(`bench/_floor.py`) running the same K x T turns concurrently in this process.

`--compare REV` also runs the server of another git revision (a temporary `git worktree` of REV, imported through
PYTHONPATH by this virtualenv's Python), alternating with this one for each K, and prints the ratio of their
throughputs (target at 50 sessions: at least 2x the previous main) and of their peak memory.

    uv run python bench/concurrency.py [--sessions 10,50,200] [--turns 5] [--compare main]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from _floor import Message, RawLoop
from _harness import CpuMeter, RssSampler, make_workspace, percentile, served_turn, server_env, start_mock, stop_mock
from cowork.testing.client import EventClient
from cowork.testing.server import ServerProcess

REPO = Path(__file__).resolve().parents[1]
BUSY = 0.9
"""Share of one core above which a process is reported as the likely bottleneck."""


@dataclass
class Run:
    label: str
    sessions: int
    turns: int
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    peak_rss: int | None = None
    rss_before: int | None = None
    """The server's RSS once the connections and sessions exist, before the turns."""
    busy: dict[str, float] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0

    def line(self) -> str:
        if self.latencies:
            p50, p99 = percentile(self.latencies, 50) * 1e3, percentile(self.latencies, 99) * 1e3
            figures = f"{self.rate:7.1f} turns/s, p50 {p50:7.0f} ms, p99 {p99:7.0f} ms"
        else:
            figures = "no turn finished"
        if self.peak_rss is not None and self.rss_before is not None:
            figures += f", peak RSS {self.peak_rss / 2**20:5.0f} MB ({self.rss_before / 2**20:.0f} MB before the turns)"
        figures += f", errors {len(self.errors)}"
        busy = ", ".join(f"{name} {share:.0%}" for name, share in self.busy.items())
        saturated = [name for name, share in self.busy.items() if share >= BUSY]
        note = f" [saturated: {', '.join(saturated)}]" if saturated else ""
        return f"{self.sessions:4d} sessions x {self.turns} turns, {self.label:>14}: {figures}; CPU {busy}{note}"


async def run_sessions(run: Run, one_turn: Callable[[int], Awaitable[None]], meters: dict[str, CpuMeter]) -> None:
    """Run `run.turns` turns in each of `run.sessions` sessions at once, timing each turn and counting failures."""

    async def session(index: int) -> None:
        for _ in range(run.turns):
            start = time.perf_counter()
            try:
                await one_turn(index)
            except Exception as exc:
                run.errors.append(f"{type(exc).__name__}: {exc}")
                return  # a session whose turn failed may be stuck; it stops there
            run.latencies.append(time.perf_counter() - start)

    for meter in meters.values():
        meter.lap()
    start = time.perf_counter()
    await asyncio.gather(*(session(i) for i in range(run.sessions)))
    run.seconds = time.perf_counter() - start
    run.busy = {name: meter.lap() / run.seconds for name, meter in meters.items()}


async def served(
    label: str, sessions: int, turns: int, root: Path, workspace: Path, env: dict[str, str], mock_pid: int
) -> Run:
    """One fresh server process, `sessions` connections with a session each, every session's turns at once."""
    run = Run(label, sessions, turns)
    home = Path(tempfile.mkdtemp(prefix="home-", dir=root))
    with ServerProcess(home, workspace, env=env) as server:
        clients: list[EventClient] = []
        try:
            # Warm-up on a connection of its own: imports and first-request costs are not per-turn work.
            warm = await EventClient.connect(server.address)
            await served_turn(warm, (await warm.call("session/create", {}))["id"])
            await warm.close()
            for _ in range(sessions):
                clients.append(await EventClient.connect(server.address))
            ids = await asyncio.gather(*(c.call("session/create", {}) for c in clients))
            session_ids = [result["id"] for result in ids]

            async def one_turn(index: int) -> None:
                await served_turn(clients[index], session_ids[index])

            meters = {"server": CpuMeter(server.pid), "mock": CpuMeter(mock_pid), "bench": CpuMeter(os.getpid())}
            with RssSampler(server.pid) as rss:
                run.rss_before = rss.peak
                await run_sessions(run, one_turn, meters)
            run.peak_rss = rss.peak
        finally:
            await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
    shutil.rmtree(home, ignore_errors=True)
    return run


async def raw_floor(sessions: int, turns: int, raw: RawLoop, mock_pid: int) -> Run:
    run = Run("raw floor", sessions, turns)
    histories: list[list[Message] | None] = [None] * sessions

    async def one_turn(index: int) -> None:
        histories[index] = await raw.turn(histories[index])

    await run_sessions(run, one_turn, {"mock": CpuMeter(mock_pid), "bench": CpuMeter(os.getpid())})
    return run


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True, text=True).stdout.strip()


@contextlib.contextmanager
def worktree(rev: str) -> Iterator[tuple[Path, str]]:
    """A temporary detached `git worktree` of `rev`; yields its path and the commit, and removes it afterwards."""
    commit = git("rev-parse", "--verify", f"{rev}^{{commit}}")
    parent = Path(tempfile.mkdtemp(prefix="cowork-bench-rev-"))
    path = parent / "tree"
    git("worktree", "add", "--detach", "--quiet", str(path), commit)
    try:
        yield path, commit
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            git("worktree", "remove", "--force", str(path))
        shutil.rmtree(parent, ignore_errors=True)
        git("worktree", "prune")


def rev_env(tree: Path) -> dict[str, str]:
    """The environment that makes this virtualenv's Python import Cowork from `tree` (checked, not assumed)."""
    env = {"PYTHONPATH": str(tree / "src")}
    found = subprocess.run(
        [sys.executable, "-c", "import cowork; print(cowork.__file__)"],
        env=os.environ | env,
        cwd=tree,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not Path(found).resolve().is_relative_to(tree.resolve()):
        raise RuntimeError(f"PYTHONPATH={env['PYTHONPATH']} still imports cowork from {found}")
    return env


async def main(counts: list[int], turns: int, compare: str | None) -> list[Run]:
    runs: list[Run] = []
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        root = Path(tmp)
        workspace = make_workspace(root)
        mock, url = start_mock()
        stack.callback(stop_mock, mock)
        env = server_env(url + "/v1")
        sides: list[tuple[str, dict[str, str]]] = [("cowork", env)]
        if compare is not None:
            tree, commit = stack.enter_context(worktree(compare))
            sides.append((f"{compare}@{commit[:7]}", env | rev_env(tree)))
        raw = RawLoop(url + "/v1", workspace, home=root / "home")
        await raw.turn()  # warm-up
        print(f"each turn: 4 streamed requests, 3 tool calls; zero-latency mock in one process; {os.cpu_count()} CPUs")
        for n, sessions in enumerate(counts):
            # Alternate which server goes first, so drift in the machine's load does not always favour one.
            ordered = sides if n % 2 == 0 else sides[::-1]
            for label, side_env in ordered:
                run = await served(label, sessions, turns, root, workspace, side_env, mock.pid)
                runs.append(run)
                print(run.line(), flush=True)
                for error in sorted(set(run.errors))[:3]:
                    print(f"    error: {error}")
            floor = await raw_floor(sessions, turns, raw, mock.pid)
            runs.append(floor)
            print(floor.line(), flush=True)
        await raw.aclose()
    summarise(runs, [label for label, _ in sides])
    return runs


def summarise(runs: list[Run], labels: list[str]) -> None:
    by = {(run.label, run.sessions): run for run in runs}
    counts = sorted({run.sessions for run in runs})

    def ratios(top: str, bottom: str, figure: Callable[[Run], float | None]) -> str:
        parts = []
        for k in counts:
            a, b = by[(top, k)], by[(bottom, k)]
            x, y = figure(a), figure(b)
            parts.append(f"{k}: {x / y:.2f}" if x and y else f"{k}: -")
        return ", ".join(parts)

    print(f"ratio raw/cowork turns/s, by sessions: {ratios('raw floor', 'cowork', lambda r: r.rate)}")
    for other in labels[1:]:
        print(f"ratio ours/{other} turns/s: {ratios('cowork', other, lambda r: r.rate)} (target at 50: >= 2)")
        print(f"ratio ours/{other} peak RSS: {ratios('cowork', other, lambda r: r.peak_rss)} (target at 200: <= 1)")


def counts_arg(text: str) -> list[int]:
    counts = [int(part) for part in text.split(",") if part.strip()]
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError("a comma-separated list of positive session counts, e.g. 10,50,200")
    return counts


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=counts_arg, default=[10, 50, 200], help="session counts, e.g. 10,50,200")
    parser.add_argument("--turns", type=int, default=5, help="turns per session")
    parser.add_argument("--compare", metavar="REV", help="also run the server of this git revision")
    args = parser.parse_args()
    asyncio.run(main(args.sessions, args.turns, args.compare))

"""Replicas on one port: N sessions at once over ONE `cowork serve` and over TWO (SO_REUSEPORT on one port).

Each run gets a fresh PostgreSQL schema (127.0.0.1:5432 db `test`, or COWORK_TEST_POSTGRES) and fresh homes; every
replica serves with `--reuse-port --port P --database-url URL`, its own COWORK_HOME and one shared COWORK_TOKEN, and
is started after the previous one listens (the first migrates the empty schema). Each replica has its own zero-latency
mock LLM process (`bench/_mock.py --script short`: one `glob` call, then a short answer in a few deltas), so the mock
scales with the replicas and is not what two replicas share.

The bench process opens N WebSocket connections to the one port (the kernel picks the replica), creates a session on
each, then starts every session's turn at once. Per turn, from the moment `turn/start` is sent:

- first event: the turn's first `session/event` arriving (the user message, written to the log and pushed);
- first delta: its first `model_stream_chunk` (the first piece of the answer, after the tool call);
- turn end: its terminal `operation_status` (done, error, cancelled, interrupted).

Prints turns per second (turns done / wall time from the first `turn/start` to the last turn's end), p50/p99 of the
three latencies, errors (a turn that did not end `done`, or a call that failed), the replicas' CPU per turn (summed
over them), how the connections fell on the replicas, and how busy each process, PostgreSQL, everything else and the
whole machine were (in cores); then the ratio two/one of turns per second (target >= 1.7). The floor is the same bench over one replica in the same run. On a machine with fewer cores than the two
replicas, their mocks, PostgreSQL and this client need, the ratio says so: the busy figures show where the time went.

    uv run python bench/replicas.py [--sessions 500] [--rounds 1]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import socket
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from _harness import CpuMeter, make_workspace, percentile, server_env, start_mock, stop_mock
from cowork.clients.connection import RpcClient, ServerAddress
from cowork.testing.postgres import PostgresSchema, start_postgres
from cowork.testing.server import ServerProcess

TOKEN = "replicas-bench-token"
STOPPED = frozenset({"done", "error", "cancelled", "interrupted"})
TARGET = 1.7


@dataclass
class Turn:
    """One session's turn as its connection saw it; times from `time.perf_counter()`."""

    sent: float = 0.0
    first_event: float | None = None
    first_delta: float | None = None
    ended: float | None = None
    status: str | None = None
    operation_id: str | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)


class Session:
    """One connection, one session, one turn. Reads notifications as plain dicts: the client must stay cheaper than
    the servers, and no event is validated or kept beyond the times above."""

    def __init__(self, rpc: RpcClient) -> None:
        self.rpc = rpc
        self.turn = Turn()
        self.session_id = ""
        self.pid = 0
        rpc.on_notification = self._on_notification

    @classmethod
    async def open(cls, address: ServerAddress) -> Session:
        session = cls(await RpcClient.connect(address))
        answer = await session.rpc.call("initialize", {"clientInfo": {"name": "bench-replicas"}})
        session.pid = answer["serverInfo"]["pid"]
        session.session_id = (await session.rpc.call("session/create", {}))["id"]
        return session

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method != "session/event" or params.get("sessionId") != self.session_id:
            return
        turn, now = self.turn, time.perf_counter()
        if turn.first_event is None:
            turn.first_event = now
        kind, payload = params.get("type"), params.get("payload") or {}
        if kind == "model_stream_chunk" and turn.first_delta is None:
            turn.first_delta = now
        elif kind == "operation_status" and payload.get("status") in STOPPED:
            # The operation id is known once `turn/start` answers; a status may arrive before that answer does.
            if turn.operation_id is None or payload.get("operationId") == turn.operation_id:
                turn.ended, turn.status = now, payload["status"]
                turn.done.set()

    async def run_turn(self, within: float) -> None:
        turn = self.turn = Turn()
        turn.sent = time.perf_counter()
        started = await self.rpc.call(
            "turn/start", {"sessionId": self.session_id, "text": "which files?", "clientMessageId": uuid.uuid4().hex}
        )
        turn.operation_id = started["operationId"]
        await asyncio.wait_for(turn.done.wait(), within)
        if turn.status != "done":
            raise RuntimeError(f"turn ended {turn.status}")

    async def close(self) -> None:
        await self.rpc.close()


@dataclass
class Run:
    replicas: int
    sessions: int
    turns: list[Turn] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    spread: list[int] = field(default_factory=list)
    """Connections per replica, in start order."""
    busy: dict[str, float] = field(default_factory=dict)
    """Each process's CPU use during the turns, in cores (1.0 = one core all the time)."""
    machine: float = 0.0
    """The whole machine's CPU use during the turns, as a share of all its cores."""

    @property
    def done(self) -> list[Turn]:
        return [t for t in self.turns if t.status == "done" and t.ended is not None]

    @property
    def rate(self) -> float:
        return len(self.done) / self.seconds if self.seconds else 0.0

    def line(self) -> str:
        label = f"{self.replicas} replica{'s' if self.replicas > 1 else ' '}"
        done = self.done
        if not done:
            return f"{self.sessions:4d} sessions, {label}: no turn finished, errors {len(self.errors)}"

        def p(values: list[float]) -> str:
            if not values:
                return "-"
            return f"p50 {percentile(values, 50) * 1e3:5.0f} / p99 {percentile(values, 99) * 1e3:5.0f} ms"

        first = [t.first_event - t.sent for t in done if t.first_event is not None]
        delta = [t.first_delta - t.sent for t in done if t.first_delta is not None]
        end = [t.ended - t.sent for t in done if t.ended is not None]
        busy = ", ".join(f"{name} {share:.2f}" for name, share in self.busy.items())
        replica_cpu = sum(share for name, share in self.busy.items() if name.startswith("replica")) * self.seconds
        return (
            f"{self.sessions:4d} sessions, {label}: {self.rate:6.1f} turns/s; first event {p(first)}; "
            f"first delta {p(delta)}; turn end {p(end)}; errors {len(self.errors)}; "
            f"server CPU per turn {replica_cpu / len(done) * 1e3:.0f} ms; "
            f"connections per replica {'/'.join(map(str, self.spread))}; "
            f"CPU cores {busy}; machine {self.machine:.0%} busy of {os.cpu_count()} cores"
        )


class NamedMeter:
    """CPU seconds used by every process called `name` (PostgreSQL's server and backends) since the last read.

    A backend that starts meanwhile counts from zero; one that exits meanwhile is lost (the store keeps its pool's
    connections open, so few do).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.seen = self._times()

    def _times(self) -> dict[int, float]:
        times = {}
        for process in psutil.process_iter(["name"]):
            if process.info["name"] == self.name:
                with contextlib.suppress(psutil.Error):
                    cpu = process.cpu_times()
                    times[process.pid] = cpu.user + cpu.system
        return times

    def lap(self) -> float:
        now = self._times()
        used = sum(cpu - self.seen.get(pid, 0.0) for pid, cpu in now.items())
        self.seen = now
        return used


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def open_sessions(address: ServerAddress, count: int) -> list[Session]:
    # Connecting is not what is measured; a few dozen at a time keeps the listen backlogs short.
    gate = asyncio.Semaphore(50)

    async def one() -> Session:
        async with gate:
            return await Session.open(address)

    return list(await asyncio.gather(*(one() for _ in range(count))))


async def warm_up(address: ServerAddress, pids: set[int]) -> None:
    """One turn on every replica: imports and first-request costs are not per-turn work."""
    warmed: set[int] = set()
    spare: list[Session] = []
    try:
        for _ in range(64):
            session = await Session.open(address)
            spare.append(session)
            if session.pid in warmed:
                continue
            await session.run_turn(within=120)
            warmed.add(session.pid)
            if warmed == pids:
                return
        raise RuntimeError(f"64 connections never reached every replica: {sorted(pids - warmed)} unseen")
    finally:
        await asyncio.gather(*(s.close() for s in spare), return_exceptions=True)


async def measure(replicas: int, sessions: int, root: Path, workspace: Path, mocks: list[tuple[int, str]]) -> Run:
    run = Run(replicas, sessions)
    port = free_port()
    homes = [Path(tempfile.mkdtemp(prefix=f"home{n}-", dir=root)) for n in range(replicas)]
    with PostgresSchema() as schema, contextlib.ExitStack() as stack:
        args = ("--reuse-port", "--database-url", schema.url)
        servers = []
        for n in range(replicas):
            env = server_env(mocks[n][1] + "/v1") | {"COWORK_TOKEN": TOKEN}
            server = ServerProcess(homes[n], workspace, env=env, args=args, port=port)
            servers.append(stack.enter_context(server))
        address = ServerAddress(f"http://127.0.0.1:{port}", TOKEN)
        pids = [s.pid for s in servers]
        await warm_up(address, set(pids))
        opened = await open_sessions(address, sessions)
        try:
            run.spread = [sum(1 for s in opened if s.pid == pid) for pid in pids]
            meters: dict[str, CpuMeter | NamedMeter] = {f"replica{n + 1}": CpuMeter(pid) for n, pid in enumerate(pids)}
            meters |= {f"mock{n + 1}": CpuMeter(mocks[n][0]) for n in range(replicas)}
            meters["bench"] = CpuMeter(os.getpid())
            meters["postgres"] = NamedMeter("postgres")
            for meter in meters.values():
                meter.lap()
            psutil.cpu_percent()
            start = time.perf_counter()
            results = await asyncio.gather(*(s.run_turn(within=600) for s in opened), return_exceptions=True)
            run.seconds = time.perf_counter() - start
            run.machine = psutil.cpu_percent() / 100
            run.busy = {name: meter.lap() / run.seconds for name, meter in meters.items()}
            # What the machine did besides: whoever else shares it (another job's tests, say).
            run.busy["other"] = max(0.0, run.machine * (os.cpu_count() or 1) - sum(run.busy.values()))
            run.turns = [s.turn for s in opened]
            run.errors = [f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException)]
        finally:
            await asyncio.gather(*(s.close() for s in opened), return_exceptions=True)
    for home in homes:
        shutil.rmtree(home, ignore_errors=True)
    return run


async def main(sessions: int, rounds: int) -> list[Run]:
    problem = start_postgres()
    if problem is not None:
        sys.exit(f"replicas bench: {problem}")
    runs: list[Run] = []
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        root = Path(tmp)
        workspace = make_workspace(root)
        mocks = []
        for _ in range(2):
            proc, url = start_mock("--script", "short")
            stack.callback(stop_mock, proc)
            mocks.append((proc.pid, url))
        print(
            f"{sessions} sessions at once, one turn each (1 glob call, a short streamed answer); each replica with its "
            f"own zero-latency mock process; PostgreSQL on this machine; {os.cpu_count()} CPUs"
        )
        for n in range(rounds):
            # Alternate which goes first, so drift in the machine's load does not always favour one.
            for replicas in (1, 2) if n % 2 == 0 else (2, 1):
                run = await measure(replicas, sessions, root, workspace, mocks)
                runs.append(run)
                print(run.line(), flush=True)
                for error in sorted(set(run.errors))[:3]:
                    print(f"    error: {error}")
    ones = [r.rate for r in runs if r.replicas == 1]
    twos = [r.rate for r in runs if r.replicas == 2]
    one, two = statistics.median(ones), statistics.median(twos)
    ratio = f"{two / one:.2f}" if one and two else "-"
    print(f"ratio two/one turns/s: {ratio} (median of {rounds} round{'s' if rounds > 1 else ''}; target >= {TARGET})")
    return runs


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=500, help="sessions (connections) running a turn at once")
    parser.add_argument("--rounds", type=int, default=1, help="runs of one and of two replicas, alternating")
    parser.add_argument("--quick", action="store_true", help="the suite's run: 6 sessions, one round")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.rounds = 6, 1
    if args.sessions < 1 or args.rounds < 1:
        parser.error("--sessions and --rounds must be at least 1")
    asyncio.run(main(args.sessions, args.rounds))

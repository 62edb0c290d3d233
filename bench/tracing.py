"""Tracing's cost per turn: the same turns through two servers in the same run, one tracing (the default), one not.

Two Cowork server processes (as in `bench/turn_overhead.py`: JSON-RPC over a WebSocket, the runtime, the event log)
share one zero-latency mock model and one workspace; the second runs with `COWORK_TRACING__ENABLED=false`. Each turn
is glob → grep → read → a streamed answer (four requests, three read-only tools) in a fresh session. After a
warm-up the two servers take turns, and which of them goes first swaps every round (traced, untraced, untraced,
traced, …), so drift in the machine's load and whatever one server leaves running hit both alike.

Prints, per server, the median and p90 turn time (client side, `turn/start` to the turn's end) and the server's CPU
time per turn (user + system, its ripgrep children included, psutil), from the start of one of its turns to the
start of its next, averaged over all the turns: the spans are stored by a thread, after the turns that
made them have ended (every 2 s), so that work lands in whichever window it falls in (and psutil counts CPU in 10 ms ticks, too
coarse for a median of one turn's 40-50 ms). Then the ratios traced/untraced, and whether each meets the target
(<= 1.05). The same run with tracing off on both servers gives ratios of 0.99-1.04 for CPU and up to 1.13 for the
median turn time on a busy 2-CPU machine: the CPU ratio is the figure to trust.

    uv run python bench/tracing.py [--turns 100] [--warm-up 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from _harness import CpuMeter, make_workspace, median_ms, percentile, served_turn, server_env, start_mock, stop_mock
from cowork.testing.client import EventClient
from cowork.testing.server import ServerProcess

TARGET = 1.05
STORE_DELAY_S = 1.0
"""Longer than the span processor's 0.5 s batching delay: waited before and after the measured turns, so the warm-up's
spans are stored before the first window and the last turn's inside the last one."""


class Side:
    """One server and its client, fresh sessions made ahead, the turn times and CPU laps measured so far."""

    def __init__(self, name: str, server: ServerProcess, client: EventClient, sessions: list[str]) -> None:
        self.name = name
        self.client = client
        self.sessions = iter(sessions)
        self.session_id = ""
        """The session of the last turn."""
        self.meter = CpuMeter(server.pid)
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self._lap_open = False

    async def turn(self) -> None:
        self._close_lap()
        self._lap_open = True
        self.session_id = next(self.sessions)
        start = time.perf_counter()
        await served_turn(self.client, self.session_id, within=60)
        self.wall.append(time.perf_counter() - start)

    def _close_lap(self) -> None:
        """CPU since the start of the previous measured turn goes to that turn."""
        used = self.meter.lap()
        if self._lap_open:
            self.cpu.append(used)

    def start_measuring(self) -> None:
        self.meter.lap()
        self.wall.clear()
        self.cpu.clear()
        self._lap_open = False

    def stop_measuring(self) -> None:
        self._close_lap()
        self._lap_open = False

    async def tracing_status(self) -> str:
        health = await self.client.call("health", {})
        return str(next(s["status"] for s in health["subsystems"] if s["name"] == "tracing"))

    def figures(self) -> str:
        return (
            f"turn median {median_ms(self.wall):6.2f} ms, p90 {percentile(self.wall, 90) * 1e3:6.2f} ms; "
            f"server CPU per turn {statistics.mean(self.cpu) * 1e3:5.2f} ms (mean)"
        )


async def open_side(name: str, server: ServerProcess, sessions: int) -> Side:
    client = await EventClient.connect(server.address)
    ids = [(await client.call("session/create", {}))["id"] for _ in range(sessions)]
    return Side(name, server, client, ids)


async def main(turns: int, warm_up: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = make_workspace(root)
        mock, url = start_mock()
        try:
            env = server_env(url + "/v1")
            # Homes of the same length: the system prompt names them, so both servers send the same-sized requests.
            with (
                ServerProcess(root / "a" / "home", workspace, env=env) as traced_server,
                ServerProcess(root / "b" / "home", workspace, env=env | {"COWORK_TRACING__ENABLED": "false"}) as off,
            ):
                traced = await open_side("traced (the default)", traced_server, warm_up + turns)
                untraced = await open_side("untraced (tracing off)", off, warm_up + turns)
                sides = (traced, untraced)
                # Warm-up: imports (the OpenTelemetry SDK among them), connection pools, first-request costs.
                for _ in range(warm_up):
                    for side in sides:
                        await side.turn()
                await asyncio.sleep(STORE_DELAY_S)
                for side in sides:
                    side.start_measuring()
                for n in range(turns):
                    for side in sides if n % 2 == 0 else sides[::-1]:
                        await side.turn()
                await asyncio.sleep(STORE_DELAY_S)
                for side in sides:
                    side.stop_measuring()
                statuses = [await side.tracing_status() for side in sides]
                last = await traced.client.call("trace/get", {"sessionId": traced.session_id})
                for side in sides:
                    await side.client.close()
        finally:
            stop_mock(mock)
    wall = median_ms(traced.wall) / median_ms(untraced.wall)
    wall_p90 = percentile(traced.wall, 90) / percentile(untraced.wall, 90)
    cpu = statistics.mean(traced.cpu) / statistics.mean(untraced.cpu)
    print(
        f"turns: {turns} per server after {warm_up} warm-up turns each, alternating (which server goes first swaps "
        "every round); each turn a fresh session, 4 streamed requests and 3 tool calls (glob, grep, read)"
    )
    for side in sides:
        print(f"{side.name + ':':24} {side.figures()}")
    print(
        f"tracing health: {statuses[0]} | {statuses[1]}; the traced server's last turn: {len(last['spans'])} spans "
        "stored (trace/get)"
    )
    verdict = f"turn time {'met' if wall <= TARGET else 'not met'}, CPU {'met' if cpu <= TARGET else 'not met'}"
    print(
        f"ratio traced/untraced: turn median {wall:.3f} (p90 {wall_p90:.3f}), server CPU {cpu:.3f} "
        f"(target <= {TARGET}: {verdict})"
    )
    return wall


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100, help="measured turns per server")
    parser.add_argument("--warm-up", type=int, default=5, help="turns per server before measuring")
    args = parser.parse_args()
    if args.turns < 1 or args.warm_up < 1:
        parser.error("--turns and --warm-up must be at least 1")
    asyncio.run(main(args.turns, args.warm_up))

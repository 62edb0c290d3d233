"""Whether a turn gets slower as its session grows: 100 turns in one session through the server, and the raw floor.

One session on a real server process (WebSocket client, zero-latency mock, each turn glob → grep → read → answer),
so every request carries the whole history so far. The raw floor (`bench/_floor.py`) runs the same growing session
on its own history, turn by turn interleaved with the server's so drift in the machine's load hits both alike.
Prints the median turn time early (turns 6-15) and late (turns 86-95) and their ratio (target <= 1.3), the server's
CPU time per turn (user + system, its ripgrep children included, from the start of one turn to the start of the
next) early and late, and the server's time against the floor's in both windows. With fewer turns the windows
scale with them.

With `--wire anthropic` or `--wire google` the server speaks that provider's wire format to the mock (the same
turns); the raw floor speaks only Chat Completions, so it does not run and only the server's figures are printed.

    uv run python bench/long_session.py [--turns 100] [--wire openai|anthropic|google]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

import psutil

from _floor import Message, RawLoop
from _harness import CpuMeter, make_workspace, median_ms, served_turn, server_env, start_mock, stop_mock, window
from cowork.testing.client import EventClient
from cowork.testing.server import ServerProcess

EARLY = (0.05, 0.15)
LATE = (0.85, 0.95)


def span(turns: range) -> str:
    return f"{turns.start}-{turns.stop - 1}" if len(turns) > 1 else str(turns.start)


def pick(values: list[float], turns: range) -> list[float]:
    return [values[n - 1] for n in turns]


WIRES = ("openai", "anthropic", "google")


async def main(turns: int, wire: str = "openai") -> float:
    served_times: list[float] = []
    served_cpu: list[float] = []
    raw_times: list[float] = []
    history: list[Message] | None = None
    floor = wire == "openai"  # the raw floor speaks Chat Completions only
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = make_workspace(root)
        home = root / "home"
        mock, url = start_mock()
        try:
            raw = RawLoop(url + "/v1", workspace, home=home)
            env = server_env(url + "/v1") if floor else server_env(url, wire)  # the mock serves each at its root
            with ServerProcess(home, workspace, env=env) as server:
                client = await EventClient.connect(server.address)
                rss_start = psutil.Process(server.pid).memory_info().rss
                # Warm-up outside the measured session: imports, connection pools, first-request costs.
                await served_turn(client, (await client.call("session/create", {}))["id"])
                if floor:
                    await raw.turn()
                session_id = (await client.call("session/create", {}))["id"]
                cpu = CpuMeter(server.pid)
                for _ in range(turns):
                    cpu.lap()
                    start = time.perf_counter()
                    await served_turn(client, session_id)
                    served_times.append(time.perf_counter() - start)
                    if floor:
                        start = time.perf_counter()
                        history = await raw.turn(history)
                        raw_times.append(time.perf_counter() - start)
                    # Everything the server did since this turn started, including work it finished after the
                    # client saw the turn end (it is idle while the raw floor runs).
                    served_cpu.append(cpu.lap())
                rss_end = psutil.Process(server.pid).memory_info().rss
                await client.close()
            await raw.aclose()
        finally:
            stop_mock(mock)
    early, late = window(turns, *EARLY), window(turns, *LATE)
    served_early, served_late = median_ms(pick(served_times, early)), median_ms(pick(served_times, late))
    cpu_early, cpu_late = median_ms(pick(served_cpu, early)), median_ms(pick(served_cpu, late))
    ratio = served_late / served_early
    if floor:
        assert history is not None
        request_kb = len(json.dumps({"messages": history, "tools": raw.tools})) / 1024
        print(
            f"session: {turns} turns in one session, 4 streamed requests and 3 tool calls each; the raw floor runs its "
            f"own growing session, interleaved turn by turn; last request ~{request_kb:.0f} KB ({len(history)} messages)"
        )
    else:
        print(
            f"session: {turns} turns in one session over the {wire} wire format, 4 streamed requests and 3 tool calls "
            f"each; no raw floor (it speaks Chat Completions only)"
        )
    print(
        f"server: turns {span(early)}: {served_early:.1f} ms, turns {span(late)}: {served_late:.1f} ms, "
        f"ratio late/early: {ratio:.2f} (target <= 1.3)"
    )
    print(
        f"server CPU per turn: turns {span(early)}: {cpu_early:.1f} ms, turns {span(late)}: {cpu_late:.1f} ms, "
        f"ratio late/early: {cpu_late / cpu_early:.2f}; mean over all turns {statistics.mean(served_cpu) * 1e3:.1f} ms"
    )
    if floor:
        raw_early, raw_late = median_ms(pick(raw_times, early)), median_ms(pick(raw_times, late))
        print(
            f"raw floor: turns {span(early)}: {raw_early:.1f} ms, turns {span(late)}: {raw_late:.1f} ms, "
            f"ratio late/early: {raw_late / raw_early:.2f}"
        )
        print(f"ratio server/raw (early|late): {served_early / raw_early:.2f} | {served_late / raw_late:.2f}")
    print(f"server RSS: {rss_start / 2**20:.0f} MB at the start, {rss_end / 2**20:.0f} MB after {turns} turns")
    return ratio


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100, help="turns in the session")
    parser.add_argument(
        "--wire", choices=WIRES, default="openai", help="the wire format the server speaks (the raw floor: openai only)"
    )
    args = parser.parse_args()
    if args.turns < 1:
        parser.error("--turns must be at least 1")
    asyncio.run(main(args.turns, args.wire))

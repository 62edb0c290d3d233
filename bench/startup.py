"""Start-up: spawn to the first `initialize` answered, and the first turn on a fresh server against a warm turn.

Each spawn is a real `python -m cowork serve` process (`cowork.testing.server.ServerProcess`). "Spawn to
initialize" runs from `Popen` until the first `initialize` over a WebSocket is answered, the client connecting as
soon as the server prints that it listens; it is measured twice per home: the very first start on a fresh COWORK
home (the database is created and migrated), then a start of the same home again (every later start; the target
applies to this one). Its floor is the interpreter itself: spawn to exit of `python -c pass`. The turns run on the
second server.

The turns run against the zero-latency mock LLM (`bench/_mock.py`: glob, grep, read, answer) through the OpenAI
chat adapter. The first turn is timed twice: started right after `initialize` (what `cowork run` does on a cold
server) and started once the server logged its background warm-up done (a person typing a first prompt); the
floor is a warm turn on the same server (median of the turns after). Prints medians over the spawns and ratios.

    uv run python bench/startup.py [--spawns 7] [--warm-turns 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import server_env, start_mock
from cowork.testing.client import EventClient
from cowork.testing.server import ServerProcess

WARMED = "provider stack warmed"
"""What the server logs (logs/server.log) when its background warm-up is done."""


def python_start(count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return times


def make_workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("def main():\n    return 42\n", encoding="utf-8")
    return ws


async def turn(client: EventClient) -> float:
    """One turn in a fresh session (timed from `turn/start` to its end)."""
    session_id = (await client.call("session/create", {}))["id"]
    start = time.perf_counter()
    started = await client.call(
        "turn/start", {"sessionId": session_id, "text": "where is main?", "clientMessageId": session_id}
    )
    status = await client.wait_turn_end(started["operationId"], within=60)
    assert status == "done", status
    return time.perf_counter() - start


async def wait_warmed(home: Path, within: float) -> bool:
    log = home / "logs" / "server.log"
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if log.exists() and WARMED in log.read_text(encoding="utf-8", errors="replace"):
            return True
        await asyncio.sleep(0.02)
    return False


async def to_initialize(server: ServerProcess) -> tuple[EventClient, float]:
    """Start `server`: a client that has had its `initialize` answered, and how long that took from the spawn."""
    start = time.perf_counter()
    server.start()
    client = await EventClient.connect(server.address)
    await client.call("initialize", {"clientInfo": {"name": "bench", "version": "0"}})
    return client, time.perf_counter() - start


async def one_spawn(
    root: Path, url: str, warm_turns: int, *, wait_warm_up: float | None
) -> tuple[float, float, float, list[float]]:
    """Spawn to initialize answered on a fresh home and on that home again, then the second server's first turn
    and the warm turns after it."""
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        home = Path(tmp) / "home"
        workspace = make_workspace(Path(tmp))
        first_start = ServerProcess(home, workspace, env=server_env(url + "/v1"))
        try:
            client, fresh = await to_initialize(first_start)
            await client.close()
        finally:
            first_start.stop()
        server = ServerProcess(home, workspace, env=server_env(url + "/v1"))
        try:
            client, again = await to_initialize(server)
            if wait_warm_up is not None and not await wait_warmed(home, wait_warm_up):
                print("warning: the server never logged its warm-up done", file=sys.stderr)
            first = await turn(client)
            warm = [await turn(client) for _ in range(warm_turns)]
            await client.close()
        finally:
            server.stop()
    return fresh, again, first, warm


async def main(spawns: int, warm_turns: int, warm_up_timeout: float) -> None:
    floor = statistics.median(python_start(max(3, spawns)))
    mock, url = start_mock()
    initialize: list[float] = []
    fresh_initialize: list[float] = []
    cold_first: list[float] = []
    typed_first: list[float] = []
    warm: list[float] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for index in range(spawns):
                # Alternate, so drift in the machine's load hits both kinds of first turn alike.
                for typed in (index % 2 == 0, index % 2 != 0):
                    fresh, again, first, warm_times = await one_spawn(
                        Path(tmp), url, warm_turns, wait_warm_up=warm_up_timeout if typed else None
                    )
                    fresh_initialize.append(fresh)
                    initialize.append(again)
                    (typed_first if typed else cold_first).append(first)
                    warm += warm_times
    finally:
        mock.terminate()
        mock.wait()
    init_s = statistics.median(initialize)
    fresh_s = statistics.median(fresh_initialize)
    warm_s = statistics.median(warm)
    cold_s = statistics.median(cold_first)
    typed_s = statistics.median(typed_first)
    print(f"spawns: {len(initialize)} homes, each started fresh and then again; {len(warm)} warm turns in all")
    print(f"spawn to initialize: {init_s:.3f} s (floor python start {floor:.3f} s; ratio {init_s / floor:.2f})")
    print(f"spawn to initialize on a fresh home (the first start: database created and migrated): {fresh_s:.3f} s")
    print(f"warm turn (glob, grep, read, answer): {warm_s * 1e3:.1f} ms (median)")
    print(f"first turn right after initialize: {cold_s * 1e3:.1f} ms (median)")
    print(f"first turn after the background warm-up: {typed_s * 1e3:.1f} ms (median)")
    print(f"first turn / warm turn: {typed_s / warm_s:.2f} (right after initialize: {cold_s / warm_s:.2f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spawns", type=int, default=7, help="servers per kind of first turn")
    parser.add_argument("--warm-turns", type=int, default=5, help="warm turns after the first, per server")
    parser.add_argument(
        "--warm-up-timeout", type=float, default=30, help="longest wait for the warm-up before the first turn (s)"
    )
    args = parser.parse_args()
    asyncio.run(main(args.spawns, args.warm_turns, args.warm_up_timeout))

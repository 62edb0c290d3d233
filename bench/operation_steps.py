"""Agent steps per second with persistence (SQLite file, WAL) against the same loop on an in-memory store.

Same core, same zero-latency mock process, same tools; only the store differs. Each operation is ten model
steps, each calling the read-only `glob` tool, then an answer. Prints both rates and their ratio (target: the
persisted loop keeps at least half the in-memory rate).

    uv run python bench/operation_steps.py [--operations 20]
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

from _harness import server_env
from cowork.config import load_config
from cowork.core import Core
from cowork.protocol import SessionCreateParams, TurnStartParams
from cowork.store import Database

STEPS = 11  # ten tool steps and the answer


def start_mock() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("_mock.py")), "--script", "steps"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().rsplit(" ", 1)[1].strip()


async def run_operations(core: Core, count: int) -> list[float]:
    """Seconds per step of each operation."""
    times = []
    for i in range(count):
        session = await core.sessions.create(SessionCreateParams())
        start = time.perf_counter()
        await core.runtime.start_turn(
            TurnStartParams(session_id=session.id, text="ten steps", client_message_id=str(i))
        )
        await core.runtime.wait(session.id)
        times.append((time.perf_counter() - start) / STEPS)
    return times


async def main(operations: int, rounds: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = root / "ws"
        (workspace / "src").mkdir(parents=True)
        for i in range(20):
            (workspace / "src" / f"m{i}.py").write_text("x = 1\n", encoding="utf-8")
        mock, url = start_mock()
        try:
            env = {"COWORK_HOME": str(root / "home"), "COWORK_AGENT__MAX_STEPS": "100"}
            env |= server_env(url + "/v1")
            loaded = load_config(workspace, env=env)
            persisted = Core(loaded, env=env)
            in_memory = Core(loaded, env=env, database=Database.memory())
            await persisted.start()
            await in_memory.start()
            await run_operations(persisted, 2)  # warm-up
            await run_operations(in_memory, 2)
            file_times: list[float] = []
            memory_times: list[float] = []
            for _ in range(rounds):  # interleaved, so the machine's drift hits both alike
                file_times += await run_operations(persisted, operations)
                memory_times += await run_operations(in_memory, operations)
            await persisted.stop()
            await in_memory.stop()
        finally:
            mock.terminate()
            mock.wait()
    file_rate = 1 / statistics.median(file_times)
    memory_rate = 1 / statistics.median(memory_times)
    ratio = file_rate / memory_rate
    print(f"operations: {len(file_times)} per store, {STEPS} steps each, zero-latency mock")
    print(f"persisted (SQLite file, WAL):  {file_rate:7.1f} steps/s (median)")
    print(f"in-memory store:               {memory_rate:7.1f} steps/s (median)")
    print(f"ratio persisted/in-memory: {ratio:.2f} (target >= 0.5)")
    return ratio


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--operations", type=int, default=10, help="operations per round and store")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.operations, args.rounds))

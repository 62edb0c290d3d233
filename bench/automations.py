"""What running a flow costs on top of what its steps do: a persisted run of tool steps against the same calls made
directly.

    uv run python bench/automations.py [--steps 50] [--rounds 5]

- run: one automation of `--steps` `read` steps (each of a different small file), run through `AutomationService` in
  a core over a real SQLite file: each step resolved, judged by the approval policy in automation context, recorded
  as started before and as finished after (two transactions), announced as `automation/run` (the run and its steps
  read back and published; no connection listens). Timed from `automation/run` until the run is `done`.
- floor: the same `read` calls made with `run_tool` on the same tool context, one after another, nothing recorded.

Prints milliseconds per step for both (the median of `--rounds` rounds after a warm-up round) and their ratio.
The difference is the price of "a finished step is never run again" (the two commits per step) and of live progress.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from cowork.automations import parse_definition
from cowork.config import load_config
from cowork.core import Core
from cowork.tools import run_tool


def flow_text(steps: int) -> str:
    lines = ["name: bench", "steps:"]
    for i in range(steps):
        lines += [f"  - id: s{i}", "    type: toolCall", "    tool: read", f"    arguments: {{filePath: src/m{i}.py}}"]
    return "\n".join(lines) + "\n"


async def one_run(core: Core) -> float:
    started = time.perf_counter()
    run = await core.automations.run("bench", {})
    await core.automations.wait(run.id)
    elapsed = time.perf_counter() - started
    [done] = await core.automations.runs(run_id=run.id)
    if done.status != "done":
        raise SystemExit(f"the benchmark's run ended {done.status}: {done.error}")
    return elapsed


async def one_floor(core: Core, steps: int) -> float:
    tool = core.tools.get("read")
    assert tool is not None
    context = core.automations.run_log.host.tool_context("floor", "s")
    started = time.perf_counter()
    for i in range(steps):
        await run_tool(tool, {"filePath": f"src/m{i}.py"}, context)
    return time.perf_counter() - started


async def main(steps: int, rounds: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = root / "ws"
        (workspace / "src").mkdir(parents=True)
        for i in range(steps):
            (workspace / "src" / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n" * 10, encoding="utf-8")
        env = {"COWORK_HOME": str(root / "home"), "COWORK_NOTIFICATIONS__DESKTOP": "false"}
        core = Core(load_config(workspace, env=env), env=env)
        await core.start()
        try:
            await core.automations.create(parse_definition(None, flow_text(steps)))
            await one_run(core)  # warm-up: imports, the first policy decisions, the statements' caches
            await one_floor(core, steps)
            runs, floors = [], []
            for _ in range(rounds):
                runs.append(await one_run(core))
                floors.append(await one_floor(core, steps))
        finally:
            await core.stop()
    return statistics.median(runs) / steps * 1000, statistics.median(floors) / steps * 1000


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    run_ms, floor_ms = asyncio.run(main(args.steps, args.rounds))
    print(f"run: {run_ms:.2f} ms per step ({args.steps} read steps, persisted and announced)")
    print(f"floor: {floor_ms:.2f} ms per step (the same read calls, direct)")
    print(f"ratio run/floor: {run_ms / floor_ms:.1f}")
    print(f"overhead: {run_ms - floor_ms:.2f} ms per step")

"""Tool overheads: command classifications per second, and the bash tool against a bare subprocess.run.

    uv run python bench/tools.py [--runs 100]

Prints the classifier's rate over the labelled corpus, and the bash tool's time per command unsandboxed and
under bubblewrap, each with its ratio to `subprocess.run` of the same command measured in the same run.
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

from cowork.policy import PathPolicy, classify
from cowork.sandbox import SandboxSpec, bwrap_command, find_bwrap, shell_argv
from cowork.tools import ToolContext
from cowork.tools._bash import BashTool

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from policy.corpus import CORPUS  # type: ignore[import-not-found]  # tests/ is on sys.path, not a package root

COMMAND = "echo hello && ls / > /dev/null"


def classifier_rate(rounds: int) -> float:
    commands = [command for _label, command in CORPUS]
    start = time.perf_counter()
    for _ in range(rounds):
        for command in commands:
            classify(command)
    return rounds * len(commands) / (time.perf_counter() - start)


def bare(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def through_tool(ctx: ToolContext, runs: int) -> float:
    tool = BashTool()
    params = tool.parse({"command": COMMAND})
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        await tool.run(params, ctx)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def main(runs: int) -> None:
    rate = classifier_rate(rounds=20)
    print(f"classifier: {rate:,.0f} commands/s over the {len(CORPUS)}-command corpus")
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        plain = ToolContext(workspace=workspace, paths=PathPolicy.build(workspace))
        bare_plain = bare(shell_argv(COMMAND), runs)
        tool_plain = await through_tool(plain, runs)
        print(
            f"bash unsandboxed: {tool_plain * 1e3:.2f} ms vs subprocess.run {bare_plain * 1e3:.2f} ms "
            f"(ratio {tool_plain / bare_plain:.2f})"
        )
        bwrap = find_bwrap()
        if bwrap is None:
            print("bash sandboxed: skipped (bubblewrap not installed)")
            return
        sandboxed = ToolContext(workspace=workspace, paths=PathPolicy.build(workspace), bwrap=bwrap)
        policy = sandboxed.paths
        assert policy is not None
        spec = SandboxSpec(workspace, writable=policy.write_roots, hidden=policy.deny)
        bare_box = bare(bwrap_command(bwrap, spec, shell_argv(COMMAND)), runs)
        tool_box = await through_tool(sandboxed, runs)
        print(
            f"bash sandboxed:   {tool_box * 1e3:.2f} ms vs subprocess.run of the same bwrap line "
            f"{bare_box * 1e3:.2f} ms (ratio {tool_box / bare_box:.2f}); "
            f"sandbox cost over unsandboxed: {tool_box / tool_plain:.2f}x"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    asyncio.run(main(parser.parse_args().runs))

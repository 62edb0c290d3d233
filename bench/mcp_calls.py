"""MCP tool calls: one call through Cowork against the `mcp` SDK's own client on the same stdio server, same run.

Both sides call the `echo` tool of the test server (`python -m cowork.testing.mcp_servers normal`), each started
once. The direct side is `ClientSession.call_tool` over `mcp.client.stdio`. The Cowork side is the path a turn's
tool call takes: the tool from the registry (`mcp__bench__echo`), its `parse` (the inputSchema check) and `run`
(the hypervisor's live-connection check, the SDK call, the result wrapped as untrusted content). Prints both
figures (ms per call, median over interleaved rounds) and the ratio.

With `--turns N` (default 20; 0 skips it) it also times whole turns through a `cowork serve` process against the
mock LLM: a turn with one MCP call and the answer, against the same turn calling the built-in `glob` instead.

    uv run python bench/mcp_calls.py [--calls 200] [--rounds 5] [--turns 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters, stdio_client

from _harness import server_env
from cowork.config import load_config
from cowork.core import Core
from cowork.protocol import McpAddParams
from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer, MockRequest, MockResponse, MockToolCall, MockUsage
from cowork.testing.server import ServerProcess
from cowork.tools import ToolContext
from mcp import ClientSession

SERVER_ARGS = ["-m", "cowork.testing.mcp_servers", "normal"]
TOOL = "mcp__bench__echo"
ARGUMENTS = {"text": "hello"}
USAGE = MockUsage(input_tokens=1000, output_tokens=20)


async def timed(call: Callable[[], Awaitable[Any]], count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        await call()
        times.append(time.perf_counter() - start)
    return times


async def interleaved(
    first: Callable[[], Awaitable[Any]], second: Callable[[], Awaitable[Any]], *, rounds: int, count: int, warmup: int
) -> tuple[list[float], list[float]]:
    """Times of `count` calls of each per round, alternating rounds so drift in the machine's load hits both alike,
    after `warmup` untimed calls of each (first-call costs, imports and caches, are not per-call overhead)."""
    await timed(first, warmup)
    await timed(second, warmup)
    first_times: list[float] = []
    second_times: list[float] = []
    for _ in range(rounds):
        first_times += await timed(first, count)
        second_times += await timed(second, count)
    return first_times, second_times


async def wait_running(status: Callable[[], Awaitable[str]], within: float = 30) -> None:
    deadline = time.monotonic() + within
    while (current := await status()) != "running":
        if time.monotonic() > deadline:
            raise RuntimeError(f"the MCP server did not reach running (status {current})")
        await asyncio.sleep(0.05)


async def calls(root: Path, rounds: int, count: int) -> tuple[list[float], list[float]]:
    """Times of direct SDK calls and of calls through Cowork's registry and hypervisor, interleaved by round."""
    workspace = root / "ws"
    workspace.mkdir()
    env = {"COWORK_HOME": str(root / "home")}
    core = Core(load_config(workspace, env=env), env=env)
    await core.start()
    try:
        await core.mcp.add(
            McpAddParams(name="bench", transport="stdio", command=sys.executable, args=SERVER_ARGS, policy="auto-run")
        )

        async def status() -> str:
            return core.mcp.info("bench").status

        await wait_running(status)
        tool = core.tools.get(TOOL)
        assert tool is not None, core.tools.names()
        ctx = ToolContext(workspace=workspace)

        async def through_cowork() -> None:
            await tool.run(tool.parse(dict(ARGUMENTS)), ctx)

        params = StdioServerParameters(command=sys.executable, args=SERVER_ARGS)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()

            async def direct() -> None:
                result = await session.call_tool("echo", dict(ARGUMENTS))
                assert not result.is_error

            direct_times, cowork_times = await interleaved(
                direct, through_cowork, rounds=rounds, count=count, warmup=10
            )
    finally:
        await core.stop()
    return direct_times, cowork_times


def turn_script(request: MockRequest) -> MockResponse:
    """One tool call (the MCP echo or the built-in glob, as the user message says), then the answer."""
    for message in reversed(request.messages):
        if message["role"] == "tool":
            return MockResponse(text="Done.", usage=USAGE)
        if message["role"] == "user":
            text = str(message["content"])
            if "mcp" in text:
                return MockResponse(tool_calls=[MockToolCall(name=TOOL, arguments=ARGUMENTS)], usage=USAGE)
            return MockResponse(tool_calls=[MockToolCall(name="glob", arguments={"pattern": "*.txt"})], usage=USAGE)
    raise AssertionError("no user message")


async def turns(root: Path, rounds: int, count: int) -> tuple[list[float], list[float]]:
    """Times of whole turns through a server process: one MCP call, and one built-in call, interleaved by round."""
    workspace = root / "turn-ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n", encoding="utf-8")
    with (
        MockLLMServer(turn_script) as mock,
        ServerProcess(root / "turn-home", workspace, env=server_env(mock.openai_base_url)) as server,
    ):
        client = await EventClient.connect(server.address)
        try:
            await client.call(
                "mcp/add",
                {
                    "name": "bench",
                    "transport": "stdio",
                    "command": sys.executable,
                    "args": SERVER_ARGS,
                    "policy": "auto-run",
                },
            )

            async def status() -> str:
                listed = await client.call("mcp/list", {})
                return str(next(s["status"] for s in listed["servers"] if s["name"] == "bench"))

            await wait_running(status)
            sessions = iter([(await client.call("session/create", {}))["id"] for _ in range(2 * (rounds * count + 2))])

            def turn(text: str) -> Callable[[], Awaitable[None]]:
                async def run() -> None:
                    # A fresh session per turn, so the history (and the request encoding) stays the same size.
                    session_id = next(sessions)
                    started = await client.call(
                        "turn/start", {"sessionId": session_id, "text": text, "clientMessageId": session_id}
                    )
                    result = await client.wait_turn_end(started["operationId"], within=60)
                    assert result == "done", result

                return run

            with_mcp, with_builtin = turn("call the mcp echo"), turn("list the text files")
            mcp_times, builtin_times = await interleaved(with_mcp, with_builtin, rounds=rounds, count=count, warmup=2)
        finally:
            await client.close()
    return mcp_times, builtin_times


async def main(calls_per_round: int, rounds: int, turns_per_round: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        direct_times, cowork_times = await calls(root, rounds, calls_per_round)
        direct_ms = statistics.median(direct_times) * 1e3
        cowork_ms = statistics.median(cowork_times) * 1e3
        ratio = cowork_ms / direct_ms
        print(
            f"calls: {len(direct_times)} per side in {rounds} interleaved rounds, tool `echo` of the stdio test server"
        )
        print(f"direct (mcp SDK ClientSession.call_tool over stdio):       {direct_ms:.3f} ms/call (median)")
        print(f"cowork (registry tool -> parse -> run -> hypervisor -> SDK): {cowork_ms:.3f} ms/call (median)")
        print(f"cowork overhead per call: {cowork_ms - direct_ms:.3f} ms")
        print(f"ratio cowork/direct: {ratio:.2f}")
        if turns_per_round > 0:
            mcp_turns, builtin_turns = await turns(root, rounds, turns_per_round)
            mcp_ms = statistics.median(mcp_turns) * 1e3
            builtin_ms = statistics.median(builtin_turns) * 1e3
            print(
                f"full turns through `cowork serve` ({len(mcp_turns)} per side; 2 model requests and 1 tool call each):"
            )
            print(f"  with the MCP echo call:        {mcp_ms:.2f} ms/turn (median)")
            print(f"  with a built-in glob instead:  {builtin_ms:.2f} ms/turn (median)")
            print(f"  ratio mcp-turn/builtin-turn: {mcp_ms / builtin_ms:.2f}")
    return ratio


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=int(os.environ.get("BENCH_CALLS", "200")), help="calls per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=20, help="full turns per round and side (0 skips them)")
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.rounds, args.turns))

"""Time per turn through the server, against a raw client running the same turn on the same zero-latency mock.

Every side makes the same streamed Chat Completions requests to the same mock process (each turn: glob → grep →
read → answer, four requests) and runs the same tool objects on the same workspace:

- the raw floor (`bench/_floor.py`): httpx, its own SSE parsing, wire dicts appended to a list;
- pydantic-ai's direct API with the same tools (the floor this bench used to have; printed for reference);
- the Cowork server: JSON-RPC over a WebSocket, the runtime, the event log in SQLite (write before tell), message
  history, fan-out to the client.

Each side runs pairs of turns: a turn in a fresh session, then a second turn in the same session (its requests
carry the first turn's history). Rounds are interleaved so drift in the machine's load hits every side alike.
Prints the medians and the ratios (target: a turn through the server within 15x the raw floor).

    uv run python bench/turn_overhead.py [--rounds 5] [--turns 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from pydantic_ai import direct
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.tools import ToolDefinition

from _floor import QUESTION, RawLoop, system_prompt
from _harness import make_workspace, served_turn, server_env, start_mock, stop_mock
from cowork.testing.client import EventClient
from cowork.testing.server import ServerProcess
from cowork.tools import ToolContext, builtin_tools

STEPS_PER_TURN = 4  # three tool steps and the answer


class BareLoop:
    """pydantic-ai's direct API and the same tool objects, in this process, no server."""

    def __init__(self, base_url: str, workspace: Path, home: Path) -> None:
        self.registry = builtin_tools()
        tool_defs = [
            ToolDefinition(name=s.name, description=s.description, parameters_json_schema=s.parameters_json_schema)
            for s in self.registry.specs()
        ]
        self.params = ModelRequestParameters(function_tools=tool_defs)
        self.ctx = ToolContext(workspace=workspace)
        # The same system prompt the server sends, so every side makes the same requests.
        self.prompt = system_prompt(workspace, home)
        self.provider = OpenAIProvider(base_url=base_url, api_key="bench")
        self.model = OpenAIChatModel("mock-model", provider=self.provider)

    async def turn(self, history: list[ModelMessage] | None = None) -> list[ModelMessage]:
        history = [] if history is None else history
        history.append(ModelRequest(parts=[UserPromptPart(QUESTION)], instructions=self.prompt))
        while True:
            async with direct.model_request_stream(self.model, history, model_request_parameters=self.params) as stream:
                async for _event in stream:
                    pass
                response: ModelResponse = stream.get()
            history.append(response)
            calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
            if not calls:
                return history
            results = []
            for call in calls:
                tool = self.registry.get(call.tool_name)
                assert tool is not None
                content = await tool.run(tool.parse(call.args_as_dict()), self.ctx)
                results.append(ToolReturnPart(call.tool_name, content, call.tool_call_id))
            history.append(ModelRequest(parts=results, instructions=self.prompt))


class ServedLoop:
    """The same turns through a real Cowork server process and a WebSocket client."""

    def __init__(self, client: EventClient, sessions: list[str]) -> None:
        self.client = client
        self.sessions = iter(sessions)

    async def turn(self, session_id: str | None = None) -> str:
        session_id = next(self.sessions) if session_id is None else session_id
        await served_turn(self.client, session_id, within=60)
        return session_id


T = TypeVar("T")


async def timed_pair(
    first: Callable[[], Awaitable[T]], second: Callable[[T], Awaitable[object]]
) -> tuple[float, float]:
    """Times a turn in a fresh session, then a second turn in the same session (`second` gets what `first` returned)."""
    start = time.perf_counter()
    state = await first()
    middle = time.perf_counter()
    await second(state)
    return middle - start, time.perf_counter() - middle


class Times:
    def __init__(self) -> None:
        self.fresh: list[float] = []
        self.second: list[float] = []

    async def add(self, pair: Callable[[], Awaitable[tuple[float, float]]], count: int) -> None:
        for _ in range(count):
            fresh, second = await pair()
            self.fresh.append(fresh)
            self.second.append(second)

    def medians_ms(self) -> tuple[float, float]:
        return statistics.median(self.fresh) * 1e3, statistics.median(self.second) * 1e3


async def main(rounds: int, turns: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = make_workspace(root)
        home = root / "home"
        mock, url = start_mock()
        raw_times, bare_times, served_times = Times(), Times(), Times()
        by_round: list[float] = []
        try:
            raw = RawLoop(url + "/v1", workspace, home=home)
            bare = BareLoop(url + "/v1", workspace, home)

            def raw_pair() -> Awaitable[tuple[float, float]]:
                return timed_pair(raw.turn, raw.turn)

            def bare_pair() -> Awaitable[tuple[float, float]]:
                return timed_pair(bare.turn, bare.turn)

            with ServerProcess(home, workspace, env=server_env(url + "/v1")) as server:
                client = await EventClient.connect(server.address)
                sessions = [(await client.call("session/create", {}))["id"] for _ in range(rounds * turns + 2)]
                served = ServedLoop(client, sessions)

                def served_pair() -> Awaitable[tuple[float, float]]:
                    return timed_pair(served.turn, served.turn)

                # Warm-up: imports, connection pools and first-request costs are not per-turn overhead.
                await Times().add(raw_pair, 2)
                await Times().add(bare_pair, 2)
                await Times().add(served_pair, 2)
                raw.tool_seconds = 0.0
                for _ in range(rounds):
                    await raw_times.add(raw_pair, turns)
                    await bare_times.add(bare_pair, turns)
                    await served_times.add(served_pair, turns)
                    by_round.append(statistics.median(served_times.fresh[-turns:]) * 1e3)
                await client.close()
            await raw.aclose()
            await bare.provider.__aexit__(None, None, None)
        finally:
            stop_mock(mock)
    raw_fresh, raw_second = raw_times.medians_ms()
    bare_fresh, bare_second = bare_times.medians_ms()
    served_fresh, served_second = served_times.medians_ms()
    print(
        f"turns: {len(raw_times.fresh)} pairs per side in {rounds} interleaved rounds (a turn in a fresh session, then "
        f"a 2nd turn in it); {STEPS_PER_TURN} streamed requests and 3 tool calls per turn"
    )
    print(f"raw floor (httpx, own SSE parsing, same tools):   fresh {raw_fresh:7.2f} ms, 2nd turn {raw_second:7.2f} ms")
    tools_ms = raw.tool_seconds / (2 * len(raw_times.fresh)) * 1e3
    print(f"  of which the tools (the same on every side): {tools_ms:.2f} ms per turn (mean)")
    print(
        f"pydantic-ai loop (direct API, same tools):        fresh {bare_fresh:7.2f} ms, 2nd turn {bare_second:7.2f} ms"
    )
    print(
        f"cowork server (WebSocket, event log, history):    fresh {served_fresh:7.2f} ms, 2nd turn {served_second:7.2f} ms"
    )
    # A server that slows down as its database fills up shows it here (every turn adds a session and its events).
    print(f"server fresh turn by round: {', '.join(f'{ms:.0f}' for ms in by_round)} ms (median)")
    print(f"server per step (median / {STEPS_PER_TURN}): fresh {served_fresh / STEPS_PER_TURN:.2f} ms")
    print(f"server overhead per turn over the raw floor: 2nd turn {served_second - raw_second:.2f} ms")
    ratio_raw = served_second / raw_second
    print(f"ratio server/raw: 2nd turn {ratio_raw:.2f}, fresh {served_fresh / raw_fresh:.2f} (target <= 15)")
    print(f"ratio server/bare: {served_fresh / bare_fresh:.2f}, 2nd turn {served_second / bare_second:.2f}")
    print(f"ratio bare/raw: {bare_fresh / raw_fresh:.2f}, 2nd turn {bare_second / raw_second:.2f}")
    return ratio_raw


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--turns", type=int, default=int(os.environ.get("BENCH_TURNS", "20")), help="turn pairs per round and side"
    )
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.turns))

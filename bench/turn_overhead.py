"""Server overhead per agent step, against a bare in-process loop on the same zero-latency mock.

Both sides make the same model requests (streamed, through pydantic-ai's OpenAI chat adapter) to the same mock
process and run the same tool objects on the same workspace; each turn is three tool steps and a final answer.
The server side adds everything Cowork does: JSON-RPC over a WebSocket, the event log in SQLite (write before
tell), message history, fan-out to the client. Prints the figure and the ratio (target for the foundation: ≤ 2.0).

    uv run python bench/turn_overhead.py [--turns 30]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from pydantic_ai import direct
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.tools import ToolDefinition

from cowork.prompts import PromptVariables, render_system_prompt
from cowork.testing.client import EventClient
from cowork.testing.server import ServerProcess, provider_env
from cowork.tools import ToolContext, builtin_tools

STEPS_PER_TURN = 4  # three tool steps and the answer


def make_workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("def main():\n    return 42\n", encoding="utf-8")
    for i in range(30):
        (ws / "src" / f"mod{i}.py").write_text(f"def f{i}():\n    return {i}\n" * 20, encoding="utf-8")
    return ws


def start_mock() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("_mock.py"))], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, line.rsplit(" ", 1)[1].strip()


class BareLoop:
    """The baseline: pydantic-ai's direct API and the same tool objects, in this process, no server."""

    def __init__(self, base_url: str, workspace: Path) -> None:
        self.registry = builtin_tools()
        tool_defs = [
            ToolDefinition(name=s.name, description=s.description, parameters_json_schema=s.parameters_json_schema)
            for s in self.registry.specs()
        ]
        self.params = ModelRequestParameters(function_tools=tool_defs)
        self.ctx = ToolContext(workspace=workspace)
        # The same system prompt the server sends, so both sides make identical requests.
        self.prompt = render_system_prompt(
            PromptVariables(
                str(workspace), str(workspace), str(workspace / "uploads"), "openai:mock-model", date.today()
            )
        )
        self.provider = OpenAIProvider(base_url=base_url, api_key="bench")
        self.model = OpenAIChatModel("mock-model", provider=self.provider)

    async def turn(self) -> None:
        history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("where is main?")], instructions=self.prompt)]
        while True:
            async with direct.model_request_stream(self.model, history, model_request_parameters=self.params) as stream:
                async for _event in stream:
                    pass
                response: ModelResponse = stream.get()
            history.append(response)
            calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
            if not calls:
                return
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

    async def turn(self) -> None:
        # A fresh session per turn, as the bare loop starts each turn with a fresh history (the SDK's request
        # encoding grows with the history, which would otherwise swamp what is measured here).
        session_id = next(self.sessions)
        started = await self.client.call(
            "turn/start", {"sessionId": session_id, "text": "where is main?", "clientMessageId": session_id}
        )
        status = await self.client.wait_turn_end(started["operationId"], within=60)
        assert status == "done", status


async def timed_turns(loop: BareLoop | ServedLoop, count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        await loop.turn()
        times.append(time.perf_counter() - start)
    return times


async def main(rounds: int, turns: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = make_workspace(root)
        mock, url = start_mock()
        bare_times: list[float] = []
        served_times: list[float] = []
        try:
            bare = BareLoop(url + "/v1", workspace)
            with ServerProcess(root / "home", workspace, env=provider_env("openai", url + "/v1")) as server:
                client = await EventClient.connect(server.address)
                sessions = [(await client.call("session/create", {}))["id"] for _ in range(rounds * turns + 2)]
                served = ServedLoop(client, sessions)
                # Warm-up: imports, connection pools and first-request costs are not per-step overhead.
                await timed_turns(bare, 2)
                await timed_turns(served, 2)
                # Interleaved rounds, so drift in the machine's load affects both sides alike.
                for _ in range(rounds):
                    bare_times += await timed_turns(bare, turns)
                    served_times += await timed_turns(served, turns)
                await client.close()
            await bare.provider.__aexit__(None, None, None)
        finally:
            mock.terminate()
            mock.wait()
    bare_step = statistics.median(bare_times) / STEPS_PER_TURN * 1e3
    served_step = statistics.median(served_times) / STEPS_PER_TURN * 1e3
    ratio = served_step / bare_step
    print(
        f"turns: {len(bare_times)} per side in {rounds} interleaved rounds, {STEPS_PER_TURN} steps and 3 tool calls each"
    )
    print(f"bare loop (pydantic_ai.direct + the same tools, in process): {bare_step:.2f} ms/step (median)")
    print(f"cowork server (WebSocket, event log, history):             {served_step:.2f} ms/step (median)")
    print(f"server overhead per step: {served_step - bare_step:.2f} ms")
    print(f"ratio server/bare: {ratio:.2f} (target <= 2.0)")
    return ratio


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=int(os.environ.get("BENCH_TURNS", "20")), help="turns per round")
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.turns))

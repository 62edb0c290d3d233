"""Streaming throughput: chunks per second from the mock through the adapter, the runtime and the server to a
WebSocket client, against the adapter alone, in the same run; and the complexity router's decisions per second.

Both sides stream the same long answer (5-character deltas, no delay) from the same mock process through
pydantic-ai's OpenAI chat adapter. The adapter side only iterates the deltas in process; the full side adds what
Cowork does with each one: the runtime's normalisation, the event log in SQLite (write before tell, group commit),
fan-out to the WebSocket and the client's JSON decoding. Prints both rates and the ratio (target at least 0.5).

    uv run python bench/streaming.py [--chunks 5000] [--rounds 5]
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

from pydantic_ai.messages import ModelRequest, UserPromptPart
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from cowork.models import TextDelta, stream_model
from cowork.routing import Router, RouteRequest, Tier
from cowork.testing.client import EventClient
from cowork.testing.server import ServerProcess, provider_env


def start_mock(chunks: int) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("_mock.py")), "--script", "stream", "--chunks", str(chunks)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().rsplit(" ", 1)[1].strip()


async def adapter_rate(model: OpenAIChatModel) -> tuple[float, int]:
    """Chunks per second through the adapter alone (Cowork's normalised stream, nothing else)."""
    messages = [ModelRequest(parts=[UserPromptPart("stream please")])]
    start = time.perf_counter()
    chunks = 0
    async for event in stream_model(model, messages, []):
        if isinstance(event, TextDelta):
            chunks += 1
    return chunks / (time.perf_counter() - start), chunks


async def served_rate(client: EventClient, session_id: str) -> tuple[float, int]:
    """Chunks per second from `turn/start` until the client has the turn's end, counting what it received."""
    start = time.perf_counter()
    started = await client.call(
        "turn/start", {"sessionId": session_id, "text": "stream please", "clientMessageId": session_id}
    )
    status = await client.wait_turn_end(started["operationId"], within=300)
    elapsed = time.perf_counter() - start
    assert status == "done", status
    chunks = sum(1 for e in client.of_session(session_id) if e.type == "model_stream_chunk")
    return chunks / elapsed, chunks


def router_rate(seconds: float = 0.5) -> tuple[float, float]:
    router = Router(
        [
            Tier("local", "ollama", "qwen3:8b", local=True),
            Tier("fast", "anthropic", "claude-haiku-5-5"),
            Tier("strong", "anthropic", "claude-sonnet-5-5"),
            Tier("max", "anthropic", "claude-opus-5-5"),
        ]
    )
    requests = [
        RouteRequest(text="What's the capital of France?", preference="local"),
        RouteRequest(text="Summarise this paragraph: " + "lorem ipsum " * 200, preference="local"),
        RouteRequest(text="Run the tests, then fix the failing ones and commit.", preference="local"),
        RouteRequest(text="Design the architecture for a sync engine.", preference="local", history_tokens=3000),
        RouteRequest(text="hello", preference="cloud"),
        RouteRequest(text="again, harder", try_harder=True, previous_tier="fast"),
    ]
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for request in requests:
            router.route(request)
        decisions += len(requests)
    mixed = decisions / (time.perf_counter() - start)
    # The slowest kind: a long pasted message, where the heuristics read EDGE_CHARS at each end.
    long = RouteRequest(
        text="Please look at this log and tell me what failed:\n" + "x=1 ok\n" * 5000, preference="local"
    )
    runs, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds / 2:
        router.route(long)
        runs += 1
    slowest_ms = (time.perf_counter() - start) / runs * 1000
    return mixed, slowest_ms


async def main(chunks: int, rounds: int) -> float:
    adapter_rates: list[float] = []
    served_rates: list[float] = []
    received: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = root / "ws"
        workspace.mkdir()
        mock, url = start_mock(chunks)
        try:
            provider = OpenAIProvider(base_url=url + "/v1", api_key="bench")
            model = OpenAIChatModel("mock-model", provider=provider)
            # Deltas are never dropped for this client: a slow consumer's backlog is part of what is measured.
            env = provider_env("openai", url + "/v1") | {"COWORK_SERVER__OUTBOUND_QUEUE_LIMIT": str(chunks * 4)}
            with ServerProcess(root / "home", workspace, env=env) as server:
                client = await EventClient.connect(server.address)
                sessions = [(await client.call("session/create", {}))["id"] for _ in range(rounds + 1)]
                await adapter_rate(model)  # warm-up: imports, connection pools
                await served_rate(client, sessions[0])
                for session_id in sessions[1:]:  # interleaved, so drift in the machine's load hits both alike
                    rate, _ = await adapter_rate(model)
                    adapter_rates.append(rate)
                    rate, count = await served_rate(client, session_id)
                    served_rates.append(rate)
                    received.append(count)
                await client.close()
            await provider.__aexit__(None, None, None)
        finally:
            mock.terminate()
            mock.wait()
    adapter = statistics.median(adapter_rates)
    served = statistics.median(served_rates)
    ratio = served / adapter
    print(f"answer: {chunks} deltas of 5 characters; {rounds} interleaved rounds; client received {min(received)}")
    print(f"adapter alone (pydantic-ai + cowork.models.stream_model):   {adapter:,.0f} chunks/s (median)")
    print(f"mock → adapter → runtime → event log → WebSocket → client: {served:,.0f} chunks/s (median)")
    print(f"ratio served/adapter: {ratio:.2f} (target >= 0.5)")
    mixed, slowest_ms = router_rate()
    print(
        f"router: {mixed:,.0f} decisions/s mixed ({1000 / mixed:.3f} ms each, ratio to a 1 ms budget {1 / mixed * 1000:.2f})"
    )
    print(f"router, long pasted message: {slowest_ms:.3f} ms per decision (ratio to a 1 ms budget {slowest_ms:.2f})")
    return ratio


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.chunks, args.rounds))

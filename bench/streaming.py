"""Streaming: deltas per second from the mock through the adapter, the runtime and the server to a WebSocket
client, against the adapter alone, in the same run; the server's CPU time per delta; how long after the mock's
last byte the client has the whole text, against a raw client's; and the complexity router's decisions per second.

All sides stream the same long answer (5-character deltas, no delay) from the same mock process. The adapter side
iterates the deltas in process through pydantic-ai's OpenAI chat adapter; the full side adds what Cowork does with
them: the runtime's normalisation and coalescing, the event log in SQLite (write before tell, group commit),
fan-out to the WebSocket and the client's JSON decoding. Prints both rates and the ratio (target at least 0.5).

Server CPU per delta is the server process's CPU time (user + system, psutil) over one served answer, divided by
its deltas. Text-complete lag is the time from the mock handing its last byte to the socket to the WebSocket client
holding the full text (the arrival of its last `model_stream_chunk`); the floor is the same for a raw httpx client
that reads the mock's SSE and parses the deltas itself. Both clocks are `time.monotonic()`, shared by processes.

    uv run python bench/streaming.py [--chunks 5000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
from pydantic_ai.messages import ModelRequest, UserPromptPart
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from _harness import server_env
from cowork.models import TextDelta, stream_model
from cowork.routing import Router, RouteRequest, Tier
from cowork.testing.client import EventClient
from cowork.testing.server import ServerProcess

PROMPT = "stream please"


class Mock:
    """The mock process; `sent()` reads when its next stream's last byte went to the socket."""

    def __init__(self, chunks: int) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(Path(__file__).with_name("_mock.py")),
                *("--script", "stream", "--chunks", str(chunks), "--report-sent"),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        self.url = self._line().rsplit(" ", 1)[1].strip()
        self.text = "word " * chunks  # what bench/_mock.py's stream script answers

    def _line(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline()

    async def sent(self) -> float:
        """Every stream prints one line; call this once per streamed request, in order."""
        line = await asyncio.to_thread(self._line)
        assert line.startswith("stream sent "), line
        return float(line.rsplit(" ", 1)[1])

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait()


async def adapter_rate(model: OpenAIChatModel, mock: Mock) -> tuple[float, float]:
    """Deltas per second through the adapter alone (Cowork's normalised stream, nothing else), and its CPU ms each."""
    messages = [ModelRequest(parts=[UserPromptPart(PROMPT)])]
    start, cpu = time.perf_counter(), time.process_time()
    chunks = 0
    async for event in stream_model(model, messages, []):
        if isinstance(event, TextDelta):
            chunks += 1
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    await mock.sent()
    return chunks / elapsed, cpu / chunks * 1000


async def floor_lag(http: httpx.AsyncClient, mock: Mock) -> float:
    """Seconds from the mock's last byte until a raw client that parses the SSE itself has the whole text."""
    body = {"model": "mock-model", "stream": True, "messages": [{"role": "user", "content": PROMPT}]}
    received, complete = 0, None
    async with http.stream("POST", mock.url + "/v1/chat/completions", json=body) as response:
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            for choice in json.loads(line[6:]).get("choices") or []:
                received += len(choice.get("delta", {}).get("content") or "")
            if complete is None and received >= len(mock.text):
                complete = time.monotonic()
    assert complete is not None and received == len(mock.text), received
    return complete - await mock.sent()


@dataclass(slots=True)
class Served:
    rate: float
    """The model's deltas per second, from `turn/start` until the client has the turn's end."""
    chunk_events: int
    cpu_ms_per_delta: float
    lag: float
    """Seconds from the mock's last byte until the client has the whole text."""


async def served(client: EventClient, session_id: str, server: psutil.Process, mock: Mock, deltas: int) -> Served:
    """One streamed answer through the server: its rate, the chunk events that carried it, CPU, lag."""
    last_chunk_at: list[float] = []
    original = client.rpc.on_notification
    assert original is not None

    def on_notification(method: str, params: dict[str, Any]) -> None:
        original(method, params)
        if method == "session/event" and params.get("type") == "model_stream_chunk":
            last_chunk_at.append(time.monotonic())

    client.rpc.on_notification = on_notification
    cpu = server.cpu_times()
    start = time.perf_counter()
    try:
        started = await client.call(
            "turn/start", {"sessionId": session_id, "text": PROMPT, "clientMessageId": session_id}
        )
        status = await client.wait_turn_end(started["operationId"], within=300)
    finally:
        client.rpc.on_notification = original
    elapsed = time.perf_counter() - start
    after = server.cpu_times()
    assert status == "done", status
    chunks = [e for e in client.of_session(session_id) if e.type == "model_stream_chunk"]
    text = "".join(getattr(e.payload, "text", "") for e in chunks)
    assert text == mock.text, f"the client has {len(text)} of {len(mock.text)} characters"
    used = (after.user - cpu.user) + (after.system - cpu.system)
    return Served(deltas / elapsed, len(chunks), used / deltas * 1000, last_chunk_at[-1] - await mock.sent())


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
    adapter_cpu: list[float] = []
    floors: list[float] = []
    runs: list[Served] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = root / "ws"
        workspace.mkdir()
        mock = Mock(chunks)
        try:
            provider = OpenAIProvider(base_url=mock.url + "/v1", api_key="bench")
            model = OpenAIChatModel("mock-model", provider=provider)
            # Deltas are never dropped for this client: a slow consumer's backlog is part of what is measured.
            env = server_env(mock.url + "/v1") | {"COWORK_SERVER__OUTBOUND_QUEUE_LIMIT": str(chunks * 4)}
            with ServerProcess(root / "home", workspace, env=env) as server:
                process = psutil.Process(server.pid)
                client = await EventClient.connect(server.address)
                async with httpx.AsyncClient(headers={"authorization": "Bearer bench"}, timeout=300) as http:
                    sessions = [(await client.call("session/create", {}))["id"] for _ in range(rounds + 1)]
                    # Warm-up: imports, connection pools.
                    await adapter_rate(model, mock)
                    await floor_lag(http, mock)
                    await served(client, sessions[0], process, mock, chunks)
                    for session_id in sessions[1:]:  # interleaved, so drift in the machine's load hits all alike
                        rate, cpu = await adapter_rate(model, mock)
                        adapter_rates.append(rate)
                        adapter_cpu.append(cpu)
                        floors.append(await floor_lag(http, mock))
                        runs.append(await served(client, session_id, process, mock, chunks))
                await client.close()
            await provider.__aexit__(None, None, None)
        finally:
            mock.stop()
    adapter = statistics.median(adapter_rates)
    rate = statistics.median(r.rate for r in runs)
    ratio = rate / adapter
    cpu = statistics.median(r.cpu_ms_per_delta for r in runs)
    lag = statistics.median(r.lag for r in runs) * 1000
    floor = statistics.median(floors) * 1000
    print(
        f"answer: {chunks} deltas of 5 characters; {rounds} interleaved rounds; "
        f"the client got them in {min(r.chunk_events for r in runs)}-{max(r.chunk_events for r in runs)} chunk events"
    )
    print(f"adapter alone (pydantic-ai + cowork.models.stream_model):   {adapter:,.0f} deltas/s (median)")
    print(f"mock → adapter → runtime → event log → WebSocket → client: {rate:,.0f} deltas/s (median)")
    print(f"ratio served/adapter: {ratio:.2f} (target >= 0.5)")
    print(
        f"server CPU per delta: {cpu:.3f} ms (median; the adapter alone, in this process: "
        f"{statistics.median(adapter_cpu):.3f} ms)"
    )
    print(
        f"text-complete lag: {lag:.1f} ms, floor {floor:.1f} ms (raw httpx SSE client), ratio {lag / max(floor, 0.001):.1f}"
    )
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

"""A zero-latency mock LLM for benchmarks, in its own process: each turn is glob → grep → read → answer.

Run as `python bench/_mock.py`; prints `mockllm listening on URL`. With `--report-sent` it also prints
`stream sent T` (T from `time.monotonic()`, the same clock in every process on the machine) each time a streamed
answer's last byte went to the socket; whoever passes it must read those lines.
"""

from __future__ import annotations

import time

from cowork.testing.mockllm import MockLLMServer, MockRequest, MockResponse, MockToolCall, MockUsage

STEPS = [
    MockToolCall(name="glob", arguments={"pattern": "**/*.py"}),
    MockToolCall(name="grep", arguments={"pattern": "def main", "outputMode": "content"}),
    MockToolCall(name="read", arguments={"filePath": "src/app.py"}),
]
USAGE = MockUsage(input_tokens=1000, output_tokens=20)


def script(request: MockRequest) -> MockResponse:
    # How far this turn has got = tool results since the last user message.
    done = 0
    for message in reversed(request.messages):
        if message["role"] == "user":
            break
        if message["role"] == "tool":
            done += 1
    if done < len(STEPS):
        return MockResponse(tool_calls=[STEPS[done]], usage=USAGE)
    return MockResponse(text="The answer is 42, from `src/app.py`: `main()` returns it.", chunk_size=8, usage=USAGE)


def steps_script(request: MockRequest) -> MockResponse:
    """Ten steps of one `glob` call each, then an answer (bench/operation_steps.py)."""
    done = 0
    for message in reversed(request.messages):
        if message["role"] == "user":
            break
        if message["role"] == "tool":
            done += 1
    if done < 10:
        return MockResponse(tool_calls=[MockToolCall(name="glob", arguments={"pattern": "src/*.py"})], usage=USAGE)
    return MockResponse(text="Ten steps done.", usage=USAGE)


def short_script(request: MockRequest) -> MockResponse:
    """One `glob` call, then a short answer in a few deltas (bench/replicas.py)."""
    for message in reversed(request.messages):
        if message["role"] == "user":
            break
        if message["role"] == "tool":
            return MockResponse(text="Found them: src/app.py has main().", chunk_size=8, usage=USAGE)
    return MockResponse(tool_calls=[MockToolCall(name="glob", arguments={"pattern": "src/*.py"})], usage=USAGE)


STREAM_CHUNKS = 5000


def stream_script(request: MockRequest) -> MockResponse:
    """One long streamed answer of `STREAM_CHUNKS` deltas of five characters (bench/streaming.py)."""
    return MockResponse(text="word " * STREAM_CHUNKS, chunk_size=5, usage=USAGE)


SCRIPTS = {"turn": script, "steps": steps_script, "stream": stream_script, "short": short_script}

if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--script", choices=sorted(SCRIPTS), default="turn")
    parser.add_argument("--chunks", type=int, default=STREAM_CHUNKS, help="deltas per answer (stream script)")
    parser.add_argument("--report-sent", action="store_true", help="print `stream sent T` after each stream")
    args = parser.parse_args()
    STREAM_CHUNKS = args.chunks
    chosen = SCRIPTS[args.script]

    def report_sent() -> None:
        print(f"stream sent {time.monotonic()!r}", flush=True)

    # Nothing here reads the recorded requests, and a long benchmark would otherwise keep every one of them. A server
    # with many sessions leaves connections idle for seconds between requests; at uvicorn's 5 s keep-alive one is
    # now and then closed just as it is reused, and the benchmark servers do not retry (a real provider keeps
    # connections open for longer).
    # The scripts read only the current turn (at most seven messages back for `turn`, 21 for `steps`): the mock's
    # time per request does not grow with a session, so a long session's growth is the client's own.
    server = MockLLMServer(
        chosen,
        record=False,
        keep_alive_s=120,
        on_stream_sent=report_sent if args.report_sent else None,
        history_tail=32,
    )
    server.run(on_started=lambda url: print(f"mockllm listening on {url}", flush=True))

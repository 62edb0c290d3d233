"""One Cowork turn end to end: a real server process, a real WebSocket, the real provider adapters, the mock LLM."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cowork.protocol import SessionEvent
from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer, MockResponse, MockToolCall, MockUsage
from cowork.testing.server import ServerProcess, provider_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SCRIPT = [
    MockResponse(
        tool_calls=[MockToolCall(name="glob", arguments={"pattern": "**/*.md"})],
        usage=MockUsage(input_tokens=100, output_tokens=10),
    ),
    MockResponse(
        tool_calls=[MockToolCall(name="read", arguments={"filePath": "docs/notes.md"})],
        usage=MockUsage(input_tokens=150, output_tokens=12),
    ),
    MockResponse(
        text="The code word is **PELICAN**.", chunk_size=8, usage=MockUsage(input_tokens=200, output_tokens=9)
    ),
]


def _usage(step: int, input_tokens: int, output_tokens: int) -> dict[str, Any]:
    # mock-model has no price: its cost is unknown, counted as 0 in the request's and the day's totals.
    return {
        "step": step,
        "inputTokens": input_tokens,
        "outputTokens": output_tokens,
        "cachedTokens": 0,
        "reasoningTokens": 0,
        "costUsd": 0.0,
        "costKnown": False,
        "interactionCostUsd": 0.0,
        "dayCostUsd": 0.0,
    }


EXPECTED = [
    ("user_message", {"text": "What is the code word in my notes?", "clientMessageId": "m1", "steer": False}),
    ("session_updated", {"title": "What is the code word in my notes?"}),
    ("operation_status", {"status": "running"}),
    (
        "tool_call",
        {"step": 1, "name": "glob", "arguments": {"pattern": "**/*.md"}, "sideEffects": False, "needsApproval": False},
    ),
    (
        "usage",
        _usage(1, 100, 10),
    ),
    ("tool_result", {"step": 1, "name": "glob", "isError": False, "rejected": False, "files": []}),
    (
        "tool_call",
        {
            "step": 2,
            "name": "read",
            "arguments": {"filePath": "docs/notes.md"},
            "sideEffects": False,
            "needsApproval": False,
        },
    ),
    (
        "usage",
        _usage(2, 150, 12),
    ),
    ("tool_result", {"step": 2, "name": "read", "isError": False, "rejected": False, "files": []}),
    # The stream's chunks, joined (see `transcript`).
    ("model_stream_chunk", {"step": 3, "text": "The code word is **PELICAN**."}),
    ("assistant_message", {"step": 3, "text": "The code word is **PELICAN**."}),
    (
        "usage",
        _usage(3, 200, 9),
    ),
    ("operation_status", {"status": "done"}),
]


def transcript(events: list[SessionEvent]) -> list[tuple[str, dict[str, Any]]]:
    """The events with ids, timestamps and tool output left out, for whole-sequence comparison.

    A step's chunks are joined: how many events carry a stream depends on how its bytes arrived (the first delta
    goes out at once, the rest is coalesced; chunks that arrived together are one delta).
    """
    out: list[tuple[str, dict[str, Any]]] = []
    for event in events:
        payload = event.payload.wire()
        for volatile in ("operationId", "messageId", "toolCallId", "content", "provider", "model", "traceId"):
            payload.pop(volatile, None)
        if event.type == "operation_status":
            assert len(event.payload.wire()["traceId"]) == 32  # every status names the turn's trace
        if event.type == "model_stream_chunk" and out and out[-1][0] == event.type:
            out[-1][1]["text"] += payload["text"]
            continue
        out.append((event.type, payload))
    return out


@pytest.mark.parametrize("adapter", ["openai", "anthropic"])
async def test_turn_with_tools_streams_persists_and_replays(
    adapter: str, tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script(SCRIPT)
    base_url = mock_llm.openai_base_url if adapter == "openai" else mock_llm.anthropic_base_url
    server = ServerProcess(tmp_path / "home", workspace, env=provider_env(adapter, base_url))
    with server:
        client = await EventClient.connect(server.address)
        session = await client.call("session/create", {"title": None})
        started = await client.call(
            "turn/start",
            {"sessionId": session["id"], "text": "What is the code word in my notes?", "clientMessageId": "m1"},
        )
        assert await client.wait_turn_end(started["operationId"]) == "done"
        received = client.of_session(session["id"])
        assert transcript(received) == EXPECTED
        assert [e.seq for e in received] == list(range(1, len(received) + 1))
        results = [e.payload for e in received if e.type == "tool_result"]
        assert "docs/notes.md" in results[0].content  # type: ignore[union-attr]
        assert "PELICAN" in results[1].content  # type: ignore[union-attr]

        # The model saw each tool's result in its next request, in its own wire format.
        requests = mock_llm.requests
        assert [r.format for r in requests] == [adapter] * 3
        assert "docs/notes.md" in requests[1].last_tool_results[0]["content"]
        assert "PELICAN" in requests[2].last_tool_results[0]["content"]
        assert requests[0].tools == [
            "bash",
            "read",
            "write",
            "edit",
            "glob",
            "grep",
            "searchDocuments",
            "recall",
            "activity",
            "webSearch",
            "webFetch",
            "ask",
            "todoWrite",
            "spawnAgent",
            "notebookEdit",
            "skill",
            "memory",
            "profile",
            "proposeAutomation",
        ]
        assert str(workspace) in (requests[0].system or "")

        # A second connection replays the identical sequence from the log.
        other = await EventClient.connect(server.address)
        replay = await other.call("events/replay", {"sessionId": session["id"], "afterSeq": 0})
        assert replay["events"] == [e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in received]
        assert replay["lastSeq"] == len(received) and replay["hasMore"] is False

        # Re-sending the same clientMessageId does not start another turn.
        again = await client.call(
            "turn/start",
            {"sessionId": session["id"], "text": "What is the code word in my notes?", "clientMessageId": "m1"},
        )
        assert again == {"operationId": started["operationId"], "status": "done", "duplicate": True}
        assert len(mock_llm.requests) == 3
        await client.close()
        await other.close()

    # Restart on the same home: the session and its whole history are still there.
    with server:
        client = await EventClient.connect(server.address)
        listed = await client.call("session/list", {})
        assert [s["id"] for s in listed["sessions"]] == [session["id"]]
        assert listed["sessions"][0]["title"] == "What is the code word in my notes?"
        replay_after = await client.call("events/replay", {"sessionId": session["id"]})
        assert replay_after["events"] == replay["events"]
        got = await client.call("session/get", {"sessionId": session["id"]})
        assert [(m["role"], m["text"]) for m in got["messages"]] == [
            ("user", "What is the code word in my notes?"),
            ("assistant", "The code word is **PELICAN**."),
        ]
        await client.close()


async def test_subscribe_with_after_seq_replays_then_streams_without_gap_or_duplicate(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([MockResponse(text="first answer"), MockResponse(text="second answer", chunk_size=3)])
    with ServerProcess(tmp_path / "home", workspace, env=provider_env("openai", mock_llm.openai_base_url)) as server:
        starter = await EventClient.connect(server.address)
        session = await starter.call("session/create", {})
        sid = session["id"]
        first = await starter.call("turn/start", {"sessionId": sid, "text": "one", "clientMessageId": "a"})
        await starter.wait_turn_end(first["operationId"])
        seen_first = len(starter.of_session(sid))

        watcher = await EventClient.connect(server.address)
        subscribed = await watcher.call("session/subscribe", {"sessionId": sid, "afterSeq": 2})
        assert subscribed["lastSeq"] == seen_first
        second = await starter.call("turn/start", {"sessionId": sid, "text": "two", "clientMessageId": "b"})
        await watcher.wait_turn_end(second["operationId"])
        seqs = [e.seq for e in watcher.of_session(sid)]
        assert seqs == list(range(3, seqs[-1] + 1))
        full = await watcher.call("events/replay", {"sessionId": sid})
        assert [e["seq"] for e in full["events"]][2:] == seqs
        await starter.close()
        await watcher.close()

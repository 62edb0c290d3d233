"""A long streamed answer through a real server: few chunk events, the whole text live and in replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowork.protocol import AssistantMessage, ModelStreamChunk
from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer, MockResponse
from cowork.testing.server import ServerProcess, provider_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

DELTAS = 2000
ANSWER = "word " * DELTAS  # 2,000 deltas of five characters, sent without pause


async def test_a_long_answer_arrives_in_few_chunk_events_live_and_in_replay(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([MockResponse(text=ANSWER, chunk_size=5)])
    with ServerProcess(tmp_path / "home", workspace, env=provider_env("openai", mock_llm.openai_base_url)) as server:
        client = await EventClient.connect(server.address)
        sid = (await client.call("session/create", {}))["id"]
        started = await client.call("turn/start", {"sessionId": sid, "text": "talk", "clientMessageId": "a"})
        assert await client.wait_turn_end(started["operationId"]) == "done"

        live = client.of_session(sid)
        chunks = [e.payload for e in live if isinstance(e.payload, ModelStreamChunk)]
        (message,) = [e.payload for e in live if isinstance(e.payload, AssistantMessage)]
        assert "".join(c.text for c in chunks) == ANSWER == message.text
        # The first delta goes alone and at once (several of the model's chunks when they arrived in one read: they
        # are joined before the runtime sees them, see `cowork.models._raw`).
        assert chunks[0].text and ANSWER.startswith(chunks[0].text) and len(chunks) > 1
        assert len(chunks) * 4 <= DELTAS, f"{len(chunks)} chunk events for {DELTAS} deltas"
        assert [e.seq for e in live] == list(range(1, len(live) + 1))

        other = await EventClient.connect(server.address)
        replay = await other.call("events/replay", {"sessionId": sid, "afterSeq": 0, "limit": 10_000})
        assert replay["events"] == [e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in live]
        replayed = "".join(e["payload"]["text"] for e in replay["events"] if e["type"] == "model_stream_chunk")
        assert replayed == ANSWER
        await client.close()
        await other.close()

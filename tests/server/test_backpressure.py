"""A slow client: stream deltas are dropped before anything else, the gaps show in `seq`, and replay fills them."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import pytest
import websockets

from cowork.protocol import UserMessage
from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer, MockResponse
from cowork.testing.server import ServerProcess, provider_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

# 1,500 deltas of 4,000 characters, a few milliseconds apart: 6 MB, more than the sockets' buffers hold (up to 4 MB
# on Linux), in many events (chunks that arrive together would be joined into a few large ones).
ANSWER = "0123456789" * 600_000


async def test_slow_client_loses_only_deltas_and_replay_recovers_them(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([MockResponse(text=ANSWER, chunk_size=4000, chunk_delay_s=0.002)])
    env = provider_env("openai", mock_llm.openai_base_url) | {"COWORK_SERVER__OUTBOUND_QUEUE_LIMIT": "16"}
    with ServerProcess(tmp_path / "home", workspace, env=env) as server:
        control = await EventClient.connect(server.address)
        session = await control.call("session/create", {})
        await control.call("session/subscribe", {"sessionId": session["id"]})

        # A tiny receive buffer and a one-frame queue: this client stops reading almost at once.
        host, port = server.address.url.removeprefix("http://").split(":")
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect((host, int(port)))
        slow = await websockets.connect(
            server.address.ws_url,
            sock=sock,
            additional_headers={"Authorization": f"Bearer {server.token}"},
            max_queue=1,
            # Its pongs would queue behind the data it is not reading; keepalive would close it on a slow machine.
            ping_interval=None,
            max_size=None,
            compression=None,
        )
        await slow.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "turn/start",
                    "params": {"sessionId": session["id"], "text": "talk a lot", "clientMessageId": "slow"},
                }
            )
        )
        # Let the whole turn run while the slow client reads nothing. (Waited for, not slept on: a fresh server's first
        # turn may still be loading the model layer.)
        await control.wait_for(lambda events: any(isinstance(e.payload, UserMessage) for e in events), within=60)
        operation = next(e.payload.operation_id for e in control.events if isinstance(e.payload, UserMessage))
        assert await control.wait_turn_end(operation, within=120) == "done"

        received: list[dict[str, Any]] = []
        response: dict[str, Any] | None = None
        while not any(e["type"] == "operation_status" and e["payload"]["status"] == "done" for e in received):
            message = json.loads(await asyncio.wait_for(slow.recv(), 30))
            if message.get("method") == "session/event":
                received.append(message["params"])
            elif message.get("id") == 1:
                response = message
        assert response is not None and response["result"]["operationId"] == operation

        seqs = [e["seq"] for e in received]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        types_by_seq: dict[int, str] = {}
        after = 0
        while True:
            page = await control.call("events/replay", {"sessionId": session["id"], "afterSeq": after, "limit": 10000})
            types_by_seq |= {e["seq"]: e["type"] for e in page["events"]}
            after = page["events"][-1]["seq"]
            if not page["hasMore"]:
                break
        last_seq = after
        missing = set(range(1, last_seq + 1)) - set(seqs)
        assert missing, "the client was never slow enough for the server to drop anything"
        assert {types_by_seq[seq] for seq in missing} == {"model_stream_chunk"}
        kinds = [e["type"] for e in received if e["type"] != "model_stream_chunk"]
        assert kinds == [
            "user_message",
            "session_updated",
            "operation_status",
            "assistant_message",
            "usage",
            "operation_status",
        ]

        # Replay on the same connection gives back everything that was dropped.
        await slow.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "events/replay",
                    "params": {"sessionId": session["id"], "afterSeq": 0, "limit": 10000},
                }
            )
        )
        text = ""
        after = 0
        while True:
            reply = json.loads(await asyncio.wait_for(slow.recv(), 30))
            if reply.get("id") != 2:
                continue
            events = reply["result"]["events"]
            text += "".join(e["payload"]["text"] for e in events if e["type"] == "model_stream_chunk")
            after = events[-1]["seq"]
            if not reply["result"]["hasMore"]:
                break
            await slow.send(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 2,
                        "method": "events/replay",
                        "params": {"sessionId": session["id"], "afterSeq": after, "limit": 10000},
                    }
                )
            )
        assert text == ANSWER and after == last_seq
        await slow.close()
        await control.close()

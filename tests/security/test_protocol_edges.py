"""Defects 6, 9, 10 and 11 at the protocol: integer bounds, an oversized batch, a hostile Host header, NUL bytes.

Each against a real server: bad input gets a clear JSON-RPC error (`invalid_params`, `frame_too_large`) or a
400, changes nothing, and the connection stays usable.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import websockets

from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer
from cowork.testing.server import ServerProcess, provider_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

FRAME_LIMIT = 4096


@pytest.fixture(scope="module")
def mock() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, mock: MockLLMServer) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("edges")
    (root / "ws").mkdir()
    env = provider_env("openai", mock.openai_base_url) | {"COWORK_SERVER__MAX_FRAME_BYTES": str(FRAME_LIMIT)}
    with ServerProcess(root / "home", root / "ws", env=env) as proc:
        yield proc


@pytest.fixture
async def raw(server: ServerProcess) -> AsyncIterator[websockets.ClientConnection]:
    async with websockets.connect(
        server.address.ws_url, additional_headers={"Authorization": f"Bearer {server.token}"}, max_size=None
    ) as ws:
        yield ws


async def exchange(ws: websockets.ClientConnection, frame: Any) -> Any:
    await ws.send(json.dumps(frame))
    return json.loads(await asyncio.wait_for(ws.recv(), 10))


@pytest.mark.parametrize("after", [2**63, 2**63 + 5, 10**30])
async def test_sequence_numbers_beyond_int64_are_invalid_params(raw: websockets.ClientConnection, after: int) -> None:
    sid = (await exchange(raw, {"jsonrpc": "2.0", "id": 1, "method": "session/create", "params": {}}))["result"]["id"]
    for method in ("events/replay", "session/subscribe"):
        reply = await exchange(
            raw, {"jsonrpc": "2.0", "id": 2, "method": method, "params": {"sessionId": sid, "afterSeq": after}}
        )
        assert reply["error"]["data"]["code"] == "invalid_params", reply
        assert "afterSeq" in reply["error"]["message"]
    largest = await exchange(
        raw,
        {"jsonrpc": "2.0", "id": 3, "method": "events/replay", "params": {"sessionId": sid, "afterSeq": 2**63 - 1}},
    )
    assert largest["result"]["events"] == []  # the largest allowed value works
    listed = await exchange(raw, {"jsonrpc": "2.0", "id": 4, "method": "session/list", "params": {"offset": 2**64}})
    assert listed["error"]["data"]["code"] == "invalid_params"


async def test_an_oversized_batch_gets_an_error_per_request(raw: websockets.ClientConnection) -> None:
    padding = "x" * FRAME_LIMIT
    batch = [
        {"jsonrpc": "2.0", "id": 10, "method": "ping", "params": {}},
        {"jsonrpc": "2.0", "id": "eleven", "method": "session/list", "params": {"query": padding[:400]}},
        {"jsonrpc": "2.0", "method": "ping", "params": {}},  # a notification: no reply, as the spec says
        {"jsonrpc": "2.0", "id": 12, "method": "session/create", "params": {"title": padding[:450]}},
        {"jsonrpc": "2.0", "id": 13, "method": "ping", "params": {}, "pad": padding},
    ]
    replies = await exchange(raw, batch)
    assert isinstance(replies, list) and [r["id"] for r in replies] == [10, "eleven", 12, 13]
    assert all(r["error"]["data"]["code"] == "frame_too_large" for r in replies)
    single = await exchange(raw, {"jsonrpc": "2.0", "id": 14, "method": "ping", "params": {}, "pad": padding})
    assert single["id"] == 14 and single["error"]["data"]["code"] == "frame_too_large"
    listed = await exchange(raw, {"jsonrpc": "2.0", "id": 15, "method": "session/list", "params": {}})
    # Nothing in the oversized batch ran (no session with its title), and the connection still works.
    assert all(s["title"] != padding[:450] for s in listed["result"]["sessions"])


@pytest.mark.parametrize(
    "host",
    ["evil.com; script-src *", "x' 'unsafe-inline", "a b", "127.0.0.1:1/ws", "[::1]:1 evil", "h\tx"],
)
def test_a_hostile_host_header_is_refused_before_use(server: ServerProcess, host: str) -> None:
    port = int(server.address.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(f"GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode("latin-1"))
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    assert head.startswith("HTTP/1.1 400"), head
    assert host not in head


def test_a_plain_host_header_gets_the_page_with_its_socket_in_the_policy(server: ServerProcess) -> None:
    response = httpx.get(server.address.url + "/", headers={"Host": "localhost:1234"}, timeout=10)
    assert response.status_code == 200
    assert "ws://localhost:1234" in response.headers["content-security-policy"]


async def test_nul_bytes_in_paths_are_invalid_params(server: ServerProcess) -> None:
    client = await EventClient.connect(server.address)
    try:
        attempts: list[tuple[str, dict[str, Any]]] = [
            ("session/create", {"workspace": "/tmp\x00/evil"}),
            ("mcp/trust", {"workspace": "/tmp\x00"}),
            ("mcp/add", {"name": "n", "transport": "stdio", "command": "echo\x00x"}),
            ("mcp/add", {"name": "n", "transport": "stdio", "command": "echo", "args": ["a\x00b"]}),
            ("mcp/add", {"name": "n", "transport": "stdio", "command": "echo", "env": {"A": "b\x00"}}),
            ("mcp/install/start", {"manifestPath": "/tmp/m\x00.json"}),
        ]
        for method, params in attempts:
            with pytest.raises(Exception) as caught:
                await client.call(method, params)
            assert getattr(caught.value, "code", None) == "invalid_params", (method, caught.value)
            assert "NUL" in str(caught.value)
        assert all(s["name"] != "n" for s in (await client.call("mcp/list", {}))["servers"])
    finally:
        await client.close()

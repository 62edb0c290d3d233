"""Bad input gets a JSON-RPC error with a stable code, changes nothing, and never hurts another connection."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cowork.protocol import METHODS
from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer, MockResponse
from cowork.testing.server import ServerProcess, provider_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture(scope="module")
def mock() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, mock: MockLLMServer) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("badinput")
    (root / "ws").mkdir()
    env = provider_env("openai", mock.openai_base_url)
    with ServerProcess(root / "home", root / "ws", env=env) as proc:
        yield proc


@pytest.fixture
async def raw(server: ServerProcess) -> AsyncIterator[websockets.ClientConnection]:
    async with websockets.connect(
        server.address.ws_url, additional_headers={"Authorization": f"Bearer {server.token}"}, max_size=None
    ) as ws:
        yield ws


async def exchange(ws: websockets.ClientConnection, frame: str | bytes) -> Any:
    await ws.send(frame)
    return json.loads(await asyncio.wait_for(ws.recv(), 10))


def code_of(response: dict[str, Any]) -> str:
    return str(response["error"]["data"]["code"])


async def test_malformed_json(raw: websockets.ClientConnection) -> None:
    response = await exchange(raw, "{not json")
    assert response["id"] is None
    assert response["error"]["code"] == -32700 and code_of(response) == "parse_error"
    assert response["error"]["data"]["source"] == "protocol"


async def test_not_a_request(raw: websockets.ClientConnection) -> None:
    for frame in ("42", '"x"', '{"id":1,"method":"ping"}', '{"jsonrpc":"2.0","id":{},"method":"ping"}', "[]"):
        response = await exchange(raw, frame)
        assert code_of(response) == "invalid_request", frame


async def test_unknown_method(raw: websockets.ClientConnection) -> None:
    response = await exchange(raw, '{"jsonrpc":"2.0","id":7,"method":"session/explode"}')
    assert response["id"] == 7 and response["error"]["code"] == -32601 and code_of(response) == "method_not_found"


async def test_wrong_params_names_each_problem(raw: websockets.ClientConnection) -> None:
    frame = json.dumps(
        {"jsonrpc": "2.0", "id": 3, "method": "turn/start", "params": {"sessionId": 5, "text": "", "bogus": 1}}
    )
    response = await exchange(raw, frame)
    assert response["error"]["code"] == -32602 and code_of(response) == "invalid_params"
    fields = {e["field"] for e in response["error"]["data"]["details"]["errors"]}
    assert fields == {"sessionId", "text", "clientMessageId", "bogus"}
    positional = await exchange(raw, '{"jsonrpc":"2.0","id":4,"method":"ping","params":[1]}')
    assert code_of(positional) == "invalid_params"


async def test_oversized_frame_is_refused_and_connection_stays_up(raw: websockets.ClientConnection) -> None:
    big = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"pad": "x" * (2 << 20)}})
    response = await exchange(raw, big)
    assert code_of(response) == "frame_too_large"
    assert (await exchange(raw, '{"jsonrpc":"2.0","id":10,"method":"ping"}'))["result"]["pong"] is True


async def test_batch_answers_each_element_and_skips_notifications(raw: websockets.ClientConnection) -> None:
    frame = json.dumps(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "ping"},
            {"jsonrpc": "2.0", "id": 2, "method": "nope"},
            17,
        ]
    )
    response = await exchange(raw, frame)
    assert isinstance(response, list) and len(response) == 3
    by_id = {r["id"]: r for r in response}
    assert by_id[1]["result"]["pong"] is True
    assert code_of(by_id[2]) == "method_not_found"
    assert code_of(by_id[None]) == "invalid_request"


async def test_too_many_requests_in_flight_get_overloaded(raw: websockets.ClientConnection) -> None:
    frame = json.dumps([{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(40)])
    response = await exchange(raw, frame)
    assert {code_of(r) for r in response} == {"overloaded"}
    assert (await exchange(raw, '{"jsonrpc":"2.0","id":1,"method":"ping"}'))["result"]["pong"] is True


async def test_unknown_session_changes_nothing(server: ServerProcess) -> None:
    client = await EventClient.connect(server.address)
    before = await client.call("session/list", {"limit": 500})
    for method, params in [
        ("session/get", {"sessionId": "ses_missing"}),
        ("turn/start", {"sessionId": "ses_missing", "text": "hi", "clientMessageId": "x"}),
        ("events/replay", {"sessionId": "ses_missing"}),
        ("model/set", {"sessionId": "ses_missing", "model": "m"}),
    ]:
        with pytest.raises(Exception) as info:
            await client.call(method, params)
        assert getattr(info.value, "code", None) == "session_not_found", method
    with pytest.raises(Exception) as info:
        await client.call("session/create", {"workspace": "/definitely/not/here"})
    assert getattr(info.value, "code", None) == "workspace_not_found"
    assert await client.call("session/list", {"limit": 500}) == before
    await client.close()


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
_frames = st.one_of(
    st.text(max_size=200),
    _json_values.map(json.dumps),
    st.fixed_dictionaries(
        {
            "jsonrpc": st.sampled_from(["2.0", "1.0", 2]),
            "id": st.one_of(st.integers(), st.text(max_size=8), st.none()),
            "method": st.one_of(st.sampled_from(sorted(METHODS)), st.text(max_size=20)),
            "params": st.one_of(
                _json_values,
                st.dictionaries(
                    st.sampled_from(["sessionId", "text", "afterSeq", "limit", "model", "clientMessageId", "x"]),
                    _json_values,
                    max_size=4,
                ),
            ),
        }
    ).map(json.dumps),
)


def test_generated_frames_never_break_the_server(server: ServerProcess, mock: MockLLMServer) -> None:
    """1,000+ generated frames on one connection while a turn streams on another: each frame is answered with a
    result or an error carrying a code; the other session's turn completes untouched."""
    mock.set_script(lambda request: MockResponse(text="steady " * 200, chunk_size=5))
    sent = {"frames": 0, "answered": 0}

    async def scenario(frames: list[str]) -> None:
        bystander = await EventClient.connect(server.address)
        try:
            session = await bystander.call("session/create", {})
            turn = await bystander.call(
                "turn/start", {"sessionId": session["id"], "text": "go", "clientMessageId": "k"}
            )
            async with websockets.connect(
                server.address.ws_url, additional_headers={"Authorization": f"Bearer {server.token}"}, max_size=None
            ) as ws:
                for frame in frames:
                    await ws.send(frame)
                    sent["frames"] += 1
                    try:
                        raw_reply = await asyncio.wait_for(ws.recv(), 0.5)
                    except TimeoutError:
                        # Only a notification (a request without an id) may go unanswered; anything else must still
                        # be answered, however loaded the machine is.
                        try:
                            parsed = json.loads(frame)
                        except ValueError:
                            parsed = None  # not JSON: a parse error must come back
                        if isinstance(parsed, dict) and "id" not in parsed:
                            continue
                        raw_reply = await asyncio.wait_for(ws.recv(), 20)
                    reply = json.loads(raw_reply)
                    for item in reply if isinstance(reply, list) else [reply]:
                        if "method" in item:
                            continue  # a notification from a subscription a generated request created
                        assert "result" in item or isinstance(item["error"]["data"]["code"], str), item
                    sent["answered"] += 1
            status = await bystander.wait_turn_end(turn["operationId"], within=60)
            assert status == "done"
            text = [e.payload for e in bystander.of_session(session["id"]) if e.type == "assistant_message"]
            assert text[0].text == "steady " * 200  # type: ignore[union-attr]
        finally:
            await bystander.close()

    @settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(st.lists(_frames, min_size=110, max_size=110))
    def run(frames: list[str]) -> None:
        asyncio.run(scenario(frames))

    run()
    assert sent["frames"] >= 1000
    print(f"sent {sent['frames']} generated frames, {sent['answered']} answered")

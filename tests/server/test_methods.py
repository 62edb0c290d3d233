"""Each method's contract over the wire: initialize, ping, sessions, models, and the HTTP endpoint."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from cowork.clients.connection import RpcError
from cowork.protocol import METHODS, PROTOCOL_VERSION
from cowork.testing.client import EventClient
from cowork.testing.server import ServerProcess

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("methods")
    (root / "ws").mkdir()
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-secret-value",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "COWORK_PROVIDER": "anthropic",
    }
    with ServerProcess(root / "home", root / "ws", env=env) as proc:
        yield proc


@pytest.fixture
async def client(server: ServerProcess) -> AsyncIterator[EventClient]:
    c = await EventClient.connect(server.address)
    yield c
    await c.close()


async def test_initialize(client: EventClient, server: ServerProcess) -> None:
    result = await client.call("initialize", {"clientInfo": {"name": "test", "version": "1"}, "protocolVersion": 1})
    assert result["protocolVersion"] == PROTOCOL_VERSION
    assert result["serverInfo"]["name"] == "cowork"
    assert sorted(result["capabilities"]["methods"]) == sorted(METHODS)
    assert result["capabilities"]["tools"] == [
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
    assert "tool_call" in result["capabilities"]["eventTypes"]
    assert result["config"] == {
        "workspace": str(server.workspace),
        "provider": "anthropic",
        "model": "claude-sonnet-5-5",
        "home": str(server.home),
        "baseUrl": "http://127.0.0.1:9",
        "warnings": [],
    }
    assert "sk-ant-secret-value" not in str(result)  # no secret in the public config
    # Which process answered, since when, and a fingerprint of the provider settings it was started with.
    info = result["serverInfo"]
    assert info["pid"] == server.pid and info["startedAt"] and len(info["environment"]) == 16
    assert [c["name"] for c in result["commands"]][:2] == ["help", "new"]


async def test_session_create_list_get(client: EventClient, server: ServerProcess) -> None:
    sub = server.workspace / "sub"
    sub.mkdir(exist_ok=True)
    created = await client.call("session/create", {"title": "Quarterly numbers", "workspace": "sub"})
    assert created["workspace"] == str(sub) and created["lastSeq"] == 0
    other = await client.call("session/create", {})
    listed = await client.call("session/list", {"query": "quarterly"})
    assert [s["id"] for s in listed["sessions"]] == [created["id"]]
    recent = await client.call("session/list", {"limit": 2})
    assert [s["id"] for s in recent["sessions"]] == [other["id"], created["id"]]
    got = await client.call("session/get", {"sessionId": created["id"]})
    assert got == {"session": created, "messages": [], "pending": {"approvals": [], "questions": []}, "todos": []}


async def test_model_list_and_set(client: EventClient) -> None:
    session = await client.call("session/create", {})
    listed = await client.call("model/list", {"sessionId": session["id"]})
    providers = {p["id"]: p for p in listed["providers"]}
    assert providers["anthropic"]["configured"] is True
    assert providers["openai"]["configured"] is False and providers["openai"]["keyEnv"] == ["OPENAI_API_KEY"]
    assert providers["ollama"]["configured"] is True  # local servers need no key
    assert (listed["currentProvider"], listed["currentModel"]) == ("anthropic", "claude-sonnet-5-5")
    assert any(m["id"] == "claude-opus-5-5" for m in listed["models"])

    updated = await client.call("model/set", {"sessionId": session["id"], "model": "openai:gpt-6.1-terra"})
    assert (updated["provider"], updated["model"]) == ("openai", "gpt-6.1-terra")
    now = await client.call("model/list", {"sessionId": session["id"]})
    assert (now["currentProvider"], now["currentModel"]) == ("openai", "gpt-6.1-terra")
    replay = await client.call("events/replay", {"sessionId": session["id"]})
    assert [(e["type"], e["payload"]) for e in replay["events"]] == [
        ("session_updated", {"provider": "openai", "model": "gpt-6.1-terra", "autoModel": False})
    ]
    # The switched-to provider has no key: the next turn says so, and records nothing.
    with pytest.raises(RpcError) as info:
        await client.call("turn/start", {"sessionId": session["id"], "text": "hi", "clientMessageId": "x"})
    assert info.value.code == "no_provider" and "OPENAI_API_KEY" in info.value.message

    with pytest.raises(RpcError) as info:
        await client.call("model/set", {"sessionId": session["id"], "model": "m", "provider": "acme"})
    assert info.value.code == "unknown_provider" and "ollama" in info.value.message
    assert (await client.call("session/get", {"sessionId": session["id"]}))["session"]["model"] == "gpt-6.1-terra"


async def test_cancel_with_nothing_running(client: EventClient) -> None:
    session = await client.call("session/create", {})
    assert await client.call("turn/cancel", {"sessionId": session["id"]}) == {"cancelled": False}
    with pytest.raises(RpcError) as info:
        await client.call("turn/cancel", {"sessionId": session["id"], "operationId": "op_nope"})
    assert info.value.code == "operation_not_found"


async def test_unsubscribe(client: EventClient) -> None:
    session = await client.call("session/create", {})
    assert await client.call("session/subscribe", {"sessionId": session["id"]}) == {
        "lastSeq": 0,
        "pending": {"approvals": [], "questions": []},
    }
    assert await client.call("session/unsubscribe", {"sessionId": session["id"]}) == {"unsubscribed": True}
    assert await client.call("session/unsubscribe", {"sessionId": session["id"]}) == {"unsubscribed": False}
    with pytest.raises(RpcError) as info:
        await client.call("session/subscribe", {"sessionId": "ses_missing"})
    assert info.value.code == "session_not_found"


async def test_http_rpc_batch_and_websocket_only_methods(server: ServerProcess) -> None:
    headers = {"Authorization": f"Bearer {server.token}"}
    async with httpx.AsyncClient(base_url=server.address.url, headers=headers) as http:
        health = await http.get("/healthz")
        body = health.json()
        assert isinstance(body.pop("subsystems"), dict)  # (what it holds: tests/server/test_health.py)
        assert body == {"status": "ok", "pid": server.pid, "idle": True}
        batch = await http.post(
            "/rpc",
            json=[
                {"jsonrpc": "2.0", "id": 1, "method": "session/create", "params": {"title": "over http"}},
                {"jsonrpc": "2.0", "id": 2, "method": "session/subscribe", "params": {"sessionId": "x"}},
                {"jsonrpc": "2.0", "method": "ping"},
            ],
        )
        replies = {r["id"]: r for r in batch.json()}
        assert replies[1]["result"]["title"] == "over http"
        assert replies[2]["error"]["data"]["code"] == "invalid_request"
        assert len(replies) == 2
        notification_only = await http.post("/rpc", json={"jsonrpc": "2.0", "method": "ping"})
        assert notification_only.status_code == 204
        too_big = await http.post("/rpc", content=b"[" + b" " * (2 << 20) + b"]")
        assert too_big.status_code == 413 and too_big.json()["error"]["data"]["code"] == "frame_too_large"


def test_server_json_points_at_the_running_server(server: ServerProcess) -> None:
    import json

    info = json.loads((server.home / "server.json").read_text(encoding="utf-8"))
    assert info["url"] == server.address.url and info["pid"] == server.pid and info["auth"] is True
    assert Path(info["workspace"]) == server.workspace


async def test_session_list_by_folder_and_without_empty_sessions(client: EventClient, server: ServerProcess) -> None:
    sub = server.workspace / "elsewhere"
    sub.mkdir(exist_ok=True)
    here = await client.call("session/create", {"title": "here"})
    there = await client.call("session/create", {"title": "there", "workspace": str(sub)})
    in_sub = await client.call("session/list", {"workspace": str(sub / ".." / "elsewhere")})
    assert [s["id"] for s in in_sub["sessions"]] == [there["id"]]
    in_root = await client.call("session/list", {"workspace": str(server.workspace)})
    assert here["id"] in [s["id"] for s in in_root["sessions"]] and there["id"] not in [
        s["id"] for s in in_root["sessions"]
    ]
    # Nobody wrote in either: a client that hides empty sessions lists neither.
    hidden = await client.call("session/list", {"includeEmpty": False})
    assert not {here["id"], there["id"]} & {s["id"] for s in hidden["sessions"]}

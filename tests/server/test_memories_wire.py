"""`memory/list|get|update|delete` through a real server: people see, correct and forget what the agent remembers,
with the `memory` tool's own key rules; the next turn's prompt has the corrected hot cache."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from cowork.clients.connection import RpcError
from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer, MockResponse
from cowork.testing.server import ServerProcess, provider_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def server(tmp_path: Path, workspace: Path, mock_llm: MockLLMServer) -> Iterator[ServerProcess]:
    with ServerProcess(tmp_path / "home", workspace, env=provider_env("openai", mock_llm.openai_base_url)) as proc:
        yield proc


@pytest.fixture
async def client(server: ServerProcess) -> AsyncIterator[EventClient]:
    c = await EventClient.connect(server.address)
    yield c
    await c.close()


async def test_see_correct_and_forget_what_is_remembered(
    client: EventClient, server: ServerProcess, workspace: Path, mock_llm: MockLLMServer, tmp_path: Path
) -> None:
    assert (await client.call("memory/list", {}))["memories"] == []
    hot = await client.call("memory/update", {"scope": "project", "key": "AGENT.md", "content": "Sarah is the CFO.\n"})
    assert (hot["key"], hot["hot"], hot["lines"]) == ("AGENT.md", True, 1)
    assert (workspace / "AGENT.md").read_text() == "Sarah is the CFO.\n"
    note = await client.call("memory/update", {"scope": "user", "key": "people/tom.md", "content": "Tom: design.\n"})
    assert note["key"] == "people/tom" and Path(note["path"]) == tmp_path / "home" / "memory" / "people" / "tom.md"

    listed = (await client.call("memory/list", {}))["memories"]
    assert [(m["scope"], m["key"]) for m in listed] == [("project", "AGENT.md"), ("user", "people/tom")]
    got = await client.call("memory/get", {"scope": "user", "key": "people/tom"})
    assert got["content"] == "Tom: design.\n" and got["memory"]["sizeBytes"] == 13

    # Corrected by a person: the next turn's prompt has the new text.
    await client.call("memory/update", {"scope": "project", "key": "AGENT.md", "content": "Sarah is the CEO.\n"})
    mock_llm.set_script([MockResponse(text="ok")])
    session = await client.call("session/create", {})
    started = await client.call(
        "turn/start", {"sessionId": session["id"], "text": "who is Sarah?", "clientMessageId": "c1"}
    )
    await client.wait_turn_end(started["operationId"])
    assert "Sarah is the CEO." in (mock_llm.requests[-1].system or "")
    assert "Sarah is the CFO." not in (mock_llm.requests[-1].system or "")

    gone = await client.call("memory/delete", {"scope": "user", "key": "people/tom"})
    assert gone["deleted"]["key"] == "people/tom"
    assert not (tmp_path / "home" / "memory" / "people" / "tom.md").exists()
    with pytest.raises(RpcError) as missing:
        await client.call("memory/delete", {"scope": "user", "key": "people/tom"})
    assert missing.value.code == "memory_not_found"
    with pytest.raises(RpcError) as missing:
        await client.call("memory/get", {"scope": "project", "key": "nothing/here"})
    assert missing.value.code == "memory_not_found"


def _tree(root: Path) -> list[str]:
    """The folder's files and the names beside it (not the server's home, which writes as it runs)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if "home" not in p.relative_to(root).parts)


@pytest.mark.parametrize("key", ["../escape", "/etc/passwd", "a/../../b", "~/x", "a\\b"])
async def test_keys_that_leave_the_store_are_refused_and_write_nothing(
    client: EventClient, workspace: Path, tmp_path: Path, key: str
) -> None:
    before = _tree(tmp_path)
    for method, extra in (("memory/update", {"content": "x"}), ("memory/get", {}), ("memory/delete", {})):
        with pytest.raises(RpcError) as refused:
            await client.call(method, {"scope": "project", "key": key, **extra})
        assert refused.value.code == "invalid_params", method
    assert _tree(tmp_path) == before


async def test_a_link_out_of_the_store_is_neither_listed_nor_read(
    client: EventClient, workspace: Path, tmp_path: Path
) -> None:
    (tmp_path / "secret.md").write_text("the vault code\n")
    store = workspace / ".cowork" / "memory"
    store.mkdir(parents=True)
    (store / "leak.md").symlink_to(tmp_path / "secret.md")
    (store / "fine.md").write_text("kept\n")
    listed = (await client.call("memory/list", {}))["memories"]
    assert [m["key"] for m in listed] == ["fine"]
    with pytest.raises(RpcError) as refused:
        await client.call("memory/get", {"scope": "project", "key": "leak"})
    assert refused.value.code == "invalid_params"
    assert (tmp_path / "secret.md").read_text() == "the vault code\n"


async def test_bad_params(client: EventClient) -> None:
    for params in (
        {"scope": "team", "key": "x"},
        {"scope": "project", "key": ""},
        {"scope": "project", "key": "x", "content": "y" * 200_001},
    ):
        with pytest.raises(RpcError) as refused:
            await client.call("memory/update", {"content": "", **params})
        assert refused.value.code == "invalid_params"
    with pytest.raises(RpcError) as refused:
        await client.call("memory/list", {"workspace": "relative/path"})
    assert refused.value.code == "workspace_not_found"


async def test_the_profile_over_the_wire(client: EventClient) -> None:
    empty = await client.call("memory/profile", {})
    assert empty["entries"] == [] and empty["maxEntries"] == 40
    got = await client.call("memory/profile/set", {"key": "Communication style", "value": "short answers"})
    assert [(e["key"], e["value"], e["source"]) for e in got["entries"]] == [
        ("communication_style", "short answers", "user")
    ]
    for method, params, code in [
        ("memory/profile/set", {"key": "a/b", "value": "x"}, "invalid_params"),
        ("memory/profile/set", {"key": "name", "value": "x" * 501}, "invalid_params"),
        ("memory/profile/set", {"key": "name"}, "invalid_params"),
        ("memory/profile/delete", {"key": "nickname"}, "memory_not_found"),
    ]:
        with pytest.raises(RpcError) as refused:
            await client.call(method, params)
        assert refused.value.code == code, params
    assert (await client.call("memory/profile", {}))["entries"] == got["entries"]  # refusals changed nothing
    gone = await client.call("memory/profile/delete", {"key": "communication_style"})
    assert gone["entries"] == []


async def test_observations_over_the_wire(client: EventClient, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([MockResponse(text="Hi Ada."), MockResponse(text="- Ada prefers tea to coffee.")])
    session = await client.call("session/create", {})
    started = await client.call(
        "turn/start", {"sessionId": session["id"], "text": "I'm Ada; tea, never coffee.", "clientMessageId": "c9"}
    )
    await client.wait_turn_end(started["operationId"])
    assert (await client.call("memory/observations", {"sessionId": session["id"]}))["observations"] == []
    observing = await client.call("memory/observe", {"sessionId": session["id"]})
    await client.wait_turn_end(observing["operationId"])
    (noted,) = (await client.call("memory/observations", {"sessionId": session["id"]}))["observations"]
    assert (
        noted["id"] == f"{session['id']}/{observing['operationId']}" and "Ada prefers tea to coffee." in noted["text"]
    )

    for method, params, code in [
        ("memory/observe", {"sessionId": "ses_nope"}, "session_not_found"),
        ("memory/observations/delete", {"id": "ses_nope/op_x", "sessionId": session["id"]}, "memory_not_found"),
        ("memory/observations", {"workspace": "relative/path"}, "workspace_not_found"),
    ]:
        with pytest.raises(RpcError) as refused:
            await client.call(method, params)
        assert refused.value.code == code, method
    left = await client.call("memory/observations/delete", {"id": noted["id"], "sessionId": session["id"]})
    assert left["observations"] == []

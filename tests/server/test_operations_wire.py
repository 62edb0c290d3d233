"""The operations methods over a real WebSocket: ask/respond, turn/steer, agent/list|wait|cancel, operation/get."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cowork.clients.connection import RpcError
from cowork.testing.client import EventClient
from cowork.testing.core import TEST_TOOLS_PLUGIN
from cowork.testing.mockllm import MockLLMServer, MockRequest, MockResponse, MockToolCall
from cowork.testing.server import ServerProcess, provider_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def of_type(client: EventClient, kind: str) -> list[object]:
    return [e.payload for e in client.events if e.type == kind]


async def test_question_steer_and_sub_agents_over_the_wire(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    def script(request: MockRequest) -> MockResponse:
        if "working for another agent" in (request.system or ""):
            return MockResponse(tool_calls=[MockToolCall(name="child_sleep", arguments={"seconds": 30})])
        tools_done = [m for m in request.messages if m["role"] == "tool"]
        if not tools_done:
            return MockResponse(
                tool_calls=[MockToolCall(name="ask", arguments={"question": "Go deep?", "options": ["yes", "no"]})]
            )
        if len(tools_done) == 1:
            return MockResponse(
                tool_calls=[MockToolCall(name="spawnAgent", arguments={"agentType": "explore", "task": "dig"})]
            )
        users = [m["content"] for m in request.messages if m["role"] == "user"]
        return MockResponse(
            text=f"answer={tools_done[0]['content']} agent={tools_done[1]['content'][:40]} last={users[-1]}"
        )

    mock_llm.set_script(script)
    env = provider_env("openai", mock_llm.openai_base_url) | {"COWORK_TOOLS__PLUGINS": json.dumps([TEST_TOOLS_PLUGIN])}
    with ServerProcess(tmp_path / "home", workspace, env=env) as server:
        client = await EventClient.connect(server.address)
        sid = (await client.call("session/create", {}))["id"]
        op = (await client.call("turn/start", {"sessionId": sid, "text": "start", "clientMessageId": "1"}))[
            "operationId"
        ]
        await client.wait_for(lambda evs: any(e.type == "ask" for e in evs))
        (ask,) = of_type(client, "ask")
        answered = await client.call("ask/respond", {"requestId": ask.request_id, "answer": "yes"})  # type: ignore[attr-defined]
        assert answered == {"requestId": ask.request_id, "duplicate": False}  # type: ignore[attr-defined]
        await client.wait_for(lambda evs: any(e.type == "agent_spawned" for e in evs))
        (spawned,) = of_type(client, "agent_spawned")
        child = spawned.child_operation_id  # type: ignore[attr-defined]
        steered = await client.call("turn/steer", {"sessionId": sid, "text": "and be quick", "clientMessageId": "s"})
        assert steered == {"operationId": op, "duplicate": False}

        listed = await client.call("agent/list", {"sessionId": sid})
        assert [a["id"] for a in listed["agents"]] == [child] and listed["agents"][0]["parentOperationId"] == op
        waited = await client.call("agent/wait", {"operationId": child, "timeoutSeconds": 0.2})
        assert waited["status"] == "running"
        assert await client.call("agent/cancel", {"operationId": child}) == {"cancelled": True}
        assert await client.wait_turn_end(op) == "done"
        final = await client.call("operation/get", {"operationId": op})
        assert final["summary"].startswith("answer=yes agent=Error: The sub-agent was cancelled")
        assert final["summary"].endswith("last=and be quick")
        assert [c["name"] for c in final["toolCalls"]] == ["ask", "spawnAgent"]
        assert (await client.call("agent/wait", {"operationId": child}))["status"] == "cancelled"
        with pytest.raises(RpcError) as info:
            await client.call("agent/cancel", {"operationId": op})  # not a sub-agent
        assert info.value.code == "operation_not_found"
        with pytest.raises(RpcError) as info:
            await client.call("operation/resume", {"operationId": op})
        assert info.value.code == "not_resumable"
        with pytest.raises(RpcError) as info:
            await client.call("ask/respond", {"requestId": ask.request_id, "answer": "no"})  # type: ignore[attr-defined]
        assert info.value.code == "already_resolved"
        await client.close()


async def test_session_compact_summarises_all_but_the_latest_exchange(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script(
        [
            MockResponse(text="noted alpha-7"),
            MockResponse(text="noted beta-9"),
            MockResponse(text="They talked about two codes."),  # the summary
            MockResponse(text="after the summary"),
        ]
    )
    with ServerProcess(tmp_path / "home", workspace, env=provider_env("openai", mock_llm.openai_base_url)) as server:
        client = await EventClient.connect(server.address)
        sid = (await client.call("session/create", {}))["id"]

        # Too short to compress: refused, and nothing is recorded.
        with pytest.raises(RpcError) as short:
            await client.call("session/compact", {"sessionId": sid})
        assert (short.value.code, short.value.message) == (
            "nothing_to_compact",
            "Nothing to compact yet: the conversation is too short to summarise.",
        )
        assert (
            mock_llm.requests == []
            and (await client.call("session/get", {"sessionId": sid}))["session"]["lastSeq"] == 0
        )

        for n, text in enumerate(["remember alpha-7", "remember beta-9"]):
            op = await client.call("turn/start", {"sessionId": sid, "text": text, "clientMessageId": str(n)})
            assert await client.wait_turn_end(op["operationId"]) == "done"
        compact = await client.call("session/compact", {"sessionId": sid, "instructions": "keep the codes"})
        assert await client.wait_turn_end(compact["operationId"]) == "done"

        summarising = mock_llm.requests[-1]
        assert "keep in particular: keep the codes" in (summarising.system or "")
        assert "alpha-7" in summarising.messages[-1]["content"]
        (compressed,) = of_type(client, "context_compressed")
        assert compressed.operation_id == compact["operationId"]  # type: ignore[attr-defined]
        info = await client.call("operation/get", {"operationId": compact["operationId"]})
        assert info["origin"] == "compact" and info["summary"].startswith(
            "Compressed 3 earlier messages into a summary"
        )

        op = await client.call("turn/start", {"sessionId": sid, "text": "and now?", "clientMessageId": "3"})
        assert await client.wait_turn_end(op["operationId"]) == "done"
        sent = json.dumps(mock_llm.requests[-1].messages)
        # The earlier turns reach the model as the summary, the latest answer verbatim, then the new message.
        assert "They talked about two codes." in sent and "remember alpha-7" not in sent
        assert [m["content"] for m in mock_llm.requests[-1].messages[-2:]] == ["noted beta-9", "and now?"]

        # Refused while a turn waits for an answer; an unknown session is refused too.
        mock_llm.set_script([MockResponse(tool_calls=[MockToolCall(name="ask", arguments={"question": "Which?"})])])
        await client.call("turn/start", {"sessionId": sid, "text": "ask me", "clientMessageId": "4"})
        await client.wait_for(lambda evs: any(e.type == "ask" for e in evs))
        with pytest.raises(RpcError) as busy:
            await client.call("session/compact", {"sessionId": sid})
        assert busy.value.code == "busy"
        with pytest.raises(RpcError) as missing:
            await client.call("session/compact", {"sessionId": "ses_nope"})
        assert missing.value.code == "session_not_found"
        await client.close()


async def test_session_export_as_markdown_and_json(tmp_path: Path, workspace: Path, mock_llm: MockLLMServer) -> None:
    (workspace / "notes.md").write_text("Intro\n```js\nalert(1)\n```\n", encoding="utf-8")
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="read", arguments={"filePath": "notes.md"})]),
            MockResponse(text="It has a `js` block."),
        ]
    )
    with ServerProcess(tmp_path / "home", workspace, env=provider_env("openai", mock_llm.openai_base_url)) as server:
        client = await EventClient.connect(server.address)
        sid = (await client.call("session/create", {}))["id"]
        op = await client.call("turn/start", {"sessionId": sid, "text": "Show me: notes/*", "clientMessageId": "1"})
        assert await client.wait_turn_end(op["operationId"]) == "done"

        markdown = await client.call("session/export", {"sessionId": sid})
        assert (markdown["filename"], markdown["mediaType"]) == ("show-me-notes.md", "text/markdown")
        text = markdown["content"]
        assert text.startswith("# Show me: notes/*\n") and f"session `{sid}`" in text
        assert '## You\n\nShow me: notes/*\n\n## Cowork\n\n**read** ` {"filePath": "notes.md"} `\n' in text
        # The file's own fence cannot end the block that holds it: the block's fence is longer.
        assert "result:\n````text\n" in text and "```js\n" in text and text.count("````") == 2
        assert text.rstrip().endswith("It has a `js` block.")

        exported = await client.call("session/export", {"sessionId": sid, "format": "json"})
        document = json.loads(exported["content"])
        assert (document["format"], document["version"], document["session"]["id"]) == ("cowork.session", 1, sid)
        replayed = await client.call("events/replay", {"sessionId": sid, "afterSeq": 0, "limit": 10_000})
        assert document["events"] == replayed["events"] and exported["events"] == len(replayed["events"])
        assert exported["filename"] == "show-me-notes.json"

        for params, code in (
            ({"sessionId": "ses_nope"}, "session_not_found"),
            ({"sessionId": sid, "format": "pdf"}, "invalid_params"),
        ):
            with pytest.raises(RpcError) as refused:
                await client.call("session/export", params)
            assert refused.value.code == code
        await client.close()


async def test_session_delete(tmp_path: Path, workspace: Path, mock_llm: MockLLMServer) -> None:
    env = provider_env("openai", mock_llm.openai_base_url) | {"COWORK_TOOLS__PLUGINS": json.dumps([TEST_TOOLS_PLUGIN])}
    with ServerProcess(tmp_path / "home", workspace, env=env) as server:
        client = await EventClient.connect(server.address)
        keep = (await client.call("session/create", {}))["id"]
        doomed = (await client.call("session/create", {}))["id"]
        mock_llm.set_script([MockResponse(text="kept")])
        op = await client.call("turn/start", {"sessionId": keep, "text": "stay", "clientMessageId": "k"})
        assert await client.wait_turn_end(op["operationId"]) == "done"

        # A turn waiting for an approval is cancelled, then everything of the session goes.
        mock_llm.set_script([MockResponse(tool_calls=[MockToolCall(name="mark", arguments={"label": "x"})])])
        waiting = await client.call("turn/start", {"sessionId": doomed, "text": "go", "clientMessageId": "d"})
        await client.wait_for(lambda evs: any(e.type == "approval_requested" for e in evs))
        outputs = tmp_path / "home" / "tool-output" / doomed
        outputs.mkdir(parents=True)
        (outputs / "big.txt").write_text("kept output", encoding="utf-8")
        assert await client.call("session/delete", {"sessionId": doomed}) == {"sessionId": doomed, "deleted": True}
        assert not outputs.exists()
        for method, params in (
            ("session/get", {"sessionId": doomed}),
            ("events/replay", {"sessionId": doomed, "afterSeq": 0}),
            ("operation/get", {"operationId": waiting["operationId"]}),
            ("session/delete", {"sessionId": doomed}),
            ("session/delete", {"sessionId": "../../etc"}),
        ):
            with pytest.raises(RpcError) as gone:
                await client.call(method, params)
            assert gone.value.code in ("session_not_found", "operation_not_found"), method
        listed = await client.call("session/list", {})
        assert [s["id"] for s in listed["sessions"]] == [keep]
        assert (await client.call("session/get", {"sessionId": keep}))["messages"][-1]["text"] == "kept"

        # A running turn is not cut off by a delete: cancel it first.
        mock_llm.set_script([MockResponse(text="slow " * 400, chunk_size=5, chunk_delay_s=0.01)])
        running = await client.call("turn/start", {"sessionId": keep, "text": "talk", "clientMessageId": "r"})
        with pytest.raises(RpcError) as busy:
            await client.call("session/delete", {"sessionId": keep})
        assert busy.value.code == "busy"
        await client.call("turn/cancel", {"sessionId": keep})
        assert await client.wait_turn_end(running["operationId"]) == "cancelled"
        assert (await client.call("session/delete", {"sessionId": keep}))["deleted"] is True
        await client.close()


async def test_session_search_finds_a_tool_result_in_another_folders_session(
    tmp_path: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    other = tmp_path / "other-project"
    other.mkdir()
    (other / "notes.txt").write_text("The flux capacitor needs 1.21 gigawatts.\n", encoding="utf-8")
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="read", arguments={"filePath": "notes.txt"})]),
            MockResponse(text="Noted the power figure."),
            MockResponse(text="Unrelated answer about retries."),
        ]
    )
    with ServerProcess(tmp_path / "home", workspace, env=provider_env("openai", mock_llm.openai_base_url)) as server:
        client = await EventClient.connect(server.address)
        there = (await client.call("session/create", {"workspace": str(other)}))["id"]
        here = (await client.call("session/create", {}))["id"]
        for sid, text in ((there, "What does the machine need?"), (here, "How do retries work?")):
            op = await client.call("turn/start", {"sessionId": sid, "text": text, "clientMessageId": sid})
            assert await client.wait_turn_end(op["operationId"]) == "done"

        found = await client.call("session/search", {"query": "flux CAPACITOR"})
        (hit,) = found["hits"]
        assert (hit["sessionId"], hit["kind"], hit["workspace"]) == (there, "tool", str(other.resolve()))
        start, end = hit["matches"][0]
        assert hit["snippet"][start:end] == "flux" and "gigawatts" in hit["snippet"]
        assert hit["title"] == "What does the machine need?"
        assert (await client.call("session/search", {"query": "flux", "workspace": str(workspace)}))["hits"] == []
        words = await client.call("session/search", {"query": 'retries" OR "NEAR(x'})  # no query syntax gets through
        assert words["hits"] == []
        said = await client.call("session/search", {"query": "retries work"})
        assert [(h["sessionId"], h["kind"]) for h in said["hits"]] == [(here, "user")]

        await client.call("session/delete", {"sessionId": there})
        assert (await client.call("session/search", {"query": "flux"}))["hits"] == []
        with pytest.raises(RpcError) as empty:
            await client.call("session/search", {"query": ""})
        assert empty.value.code == "invalid_params"
        await client.close()

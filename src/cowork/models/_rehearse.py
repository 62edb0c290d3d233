"""A rehearsal of one streamed Chat Completions request, in this process, for the server's warm-up.

Importing the provider stack is not all a first request pays for: pydantic builds the validators and serializers of
the streamed chunk and of the usage on their first use, the price library reads its extraction rules, pydantic-ai
and the SDK take code paths for the first time. `rehearse` sends one request through the same classes the target's
model is made of (`ChatModel` over `RawAsyncOpenAI`), with the same tools, to a transport inside this process that
answers a canned stream: some text, a tool call and the usage. Nothing goes on the network and nothing is recorded;
the first turn then finds all of that done (`bench/startup.py`: the first turn against a warm one).

Only the Chat Completions families are rehearsed (every OpenAI-compatible server, and the mock the benchmarks use);
the others keep what the warm-up's imports give them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from cowork.tools import ToolSpec

from ._resolve import ModelTarget

__all__ = ["rehearse"]

_FAMILIES = frozenset({"openai-chat"})


def _chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None) -> bytes:
    body: dict[str, Any] = {
        "id": "chatcmpl-rehearsal",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "rehearsal",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if delta or finish else [],
    }
    if usage is not None:
        body["usage"] = usage
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def _stream(tool: str | None) -> bytes:
    chunks = [_chunk({"role": "assistant", "content": "Looking."})]
    if tool is not None:
        call = {"index": 0, "id": "call_rehearsal", "type": "function", "function": {"name": tool, "arguments": "{}"}}
        chunks.append(_chunk({"tool_calls": [call]}))
    chunks.append(_chunk({}, finish="tool_calls" if tool is not None else "stop"))
    chunks.append(_chunk({}, usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}))
    return b"".join(chunks) + b"data: [DONE]\n\n"


async def rehearse(target: ModelTarget, tools: Sequence[ToolSpec]) -> bool:
    """Run one canned request through `target`'s model classes, in process; whether its family is rehearsed."""
    if target.family not in _FAMILIES:
        return False
    import httpx2
    from pydantic_ai.messages import ModelRequest, UserPromptPart
    from pydantic_ai.providers.openai import OpenAIProvider

    from ._adapters import ChatModel
    from ._raw import RawAsyncOpenAI
    from ._stream import stream_model, with_instructions

    body = _stream(tools[0].name if tools else None)

    def answer(_request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
    client = RawAsyncOpenAI(
        base_url="http://rehearsal.invalid/v1", api_key="rehearsal", max_retries=0, http_client=http
    )
    try:
        model = ChatModel(target.model, provider=OpenAIProvider(openai_client=client))
        messages = with_instructions([ModelRequest(parts=[UserPromptPart("Rehearsal.")])], "Rehearsal.")
        async for _event in stream_model(model, messages, tools, settings={"max_tokens": 16}):
            pass
    finally:
        await client.close()
    return True

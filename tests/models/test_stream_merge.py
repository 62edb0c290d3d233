"""Plain text chunks that arrive in one read are joined before the SDK and pydantic-ai see them (`_raw`), and the
response pydantic-ai makes of the stream is the same as without joining: text, thinking in tags, reasoning,
tool calls, usage and finish reason."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from openai import AsyncOpenAI
from openai._streaming import ServerSentEvent
from pydantic_ai.messages import ModelRequest, ModelResponse, UserPromptPart
from pydantic_ai.models import Model
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from cowork.models import Finished, TextDelta, stream_model
from cowork.models._adapters import ChatModel
from cowork.models._raw import RawAsyncOpenAI, merge_text_chunks

pytestmark = pytest.mark.anyio

STREAM = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1767225600, "model": "mock-model"}


def chunk(delta: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta or {}, "finish_reason": fields.pop("finish_reason", None)}
    return STREAM | {"choices": [choice]} | fields


def text(content: str, **fields: Any) -> dict[str, Any]:
    return chunk({"content": content}, **fields)


def event(data: dict[str, Any] | str) -> ServerSentEvent:
    return ServerSentEvent(data=data if isinstance(data, str) else json.dumps(data))


def contents(events: list[ServerSentEvent]) -> list[Any]:
    """Each event's text, or the event's data when it is not a text chunk."""
    out: list[Any] = []
    for sse in events:
        value = sse.json() if sse.data.startswith("{") else sse.data
        delta = value["choices"][0]["delta"] if isinstance(value, dict) and value.get("choices") else {}
        out.append(delta["content"] if isinstance(delta.get("content"), str) else sse.data)
    return out


def test_a_run_of_text_chunks_becomes_one_and_everything_else_stays_in_place() -> None:
    tool = chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "f"}}]})
    events = [
        event(chunk({"role": "assistant", "content": ""})),
        event(text("Hello")),
        event(text(", ")),
        event(text("world.")),
        event(tool),
        event(text("More ")),
        event(text("text")),
        event("[DONE]"),
    ]
    merged = merge_text_chunks(events)
    assert contents(merged) == ["", "Hello, world.", events[4].data, "More text", "[DONE]"]
    # The joined chunk keeps the stream's fields; what was not joined is handed on as it was.
    assert merged[1].json() == text("Hello, world.")
    assert merged[0] is events[0] and merged[2] is events[4] and merged[4] is events[-1]


@pytest.mark.parametrize(
    "boundary",
    [
        text("Hi", finish_reason="stop"),
        text("Hi", usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}),
        text("<think>"),
        text("a > b"),
        text("\n\n"),
        text("Hi", obfuscation="xyz"),
        chunk({"content": "Hi", "reasoning_content": "hmm"}),
        chunk({"content": "Hi", "role": "assistant"}),
        text("Hi", model="other-model"),
        text("Hi", id="chatcmpl-2"),
        chunk({"content": "Hi"}) | {"choices": [{"index": 1, "delta": {"content": "Hi"}, "finish_reason": None}]},
    ],
)
def test_chunks_that_are_not_plain_text_of_the_same_stream_are_never_joined(boundary: dict[str, Any]) -> None:
    events = [event(text("before ")), event(boundary), event(text("after"))]
    merged = merge_text_chunks(events)
    if boundary["choices"][0]["delta"].get("role"):
        # A role starts a run of its own (text after it joins it); it never joins the one before it.
        assert len(merged) == 2 and merged[0].json() == text("before ")
    else:
        assert len(merged) == 3 and merged[1].data == events[1].data


def test_events_with_a_name_an_id_or_bad_json_are_passed_on() -> None:
    events = [
        event(text("a ")),
        ServerSentEvent(event="message", data=json.dumps(text("b "))),
        ServerSentEvent(id="7", data=json.dumps(text("c "))),
        event('{"content": not json'),
        event(text("d ")),
    ]
    merged = merge_text_chunks(events)
    assert merged[1:4] == events[1:4] and len(merged) == 5


def sse_body(chunks: list[dict[str, Any]]) -> bytes:
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"


BURST = [
    chunk({"role": "assistant", "content": ""}),
    *[text(word) for word in ["The ", "plan", ": ", "read ", "it", "."]],
    text("\n\n"),
    text("<think>"),
    text("Which file"),
    text("? notes"),
    text("</think>"),
    text("Then ", model="mock-model"),
    text("answer"),
    chunk({"reasoning_content": "thinking aloud"}),
    text("After reasoning."),
    chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "read"}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"filePath": '}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"notes.md"}'}}]}),
    chunk({}, finish_reason="tool_calls"),
    STREAM | {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 34, "total_tokens": 46}},
]


async def streamed(model: Model) -> tuple[list[str], ModelResponse]:
    deltas: list[str] = []
    response = None
    async for item in stream_model(model, [ModelRequest(parts=[UserPromptPart("go")])], []):
        if isinstance(item, TextDelta):
            deltas.append(item.text)
        elif isinstance(item, Finished):
            response = item.response
    assert response is not None
    return deltas, response


def client(openai_class: type[AsyncOpenAI]) -> AsyncOpenAI:
    """A client whose server sends the whole burst at once (one read holds every chunk)."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=sse_body(BURST), headers={"content-type": "text/event-stream"})

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    return openai_class(base_url="http://mock/v1", api_key="k", http_client=http, max_retries=0)


async def test_a_burst_makes_the_same_response_with_fewer_deltas() -> None:
    stock = OpenAIChatModel("mock-model", provider=OpenAIProvider(openai_client=client(AsyncOpenAI)))
    ours = ChatModel("mock-model", provider=OpenAIProvider(openai_client=client(RawAsyncOpenAI)))
    stock_deltas, stock_response = await streamed(stock)
    our_deltas, our_response = await streamed(ours)
    assert "".join(our_deltas) == "".join(stock_deltas)
    assert len(our_deltas) < len(stock_deltas)
    assert our_response.parts == stock_response.parts
    assert (our_response.usage, our_response.finish_reason) == (stock_response.usage, stock_response.finish_reason)
    kinds = [part.part_kind for part in our_response.parts]
    assert "thinking" in kinds and "tool-call" in kinds and "text" in kinds

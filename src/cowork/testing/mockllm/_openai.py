"""The OpenAI Chat Completions wire format: parse a request, render a response, a stream or an error."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from json.encoder import encode_basestring as _quote
from typing import Any

from ._script import MockError, MockRequest, MockResponse, MockUsage, split_arguments, split_text

_SYSTEM_ROLES = ("system", "developer")

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}


def _dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def _text(content: Any) -> str:
    """The text of a message's content, which may be a string or a list of typed parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def _arguments(raw: Any) -> Any:
    try:
        return json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return raw


def parse_request(body: dict[str, Any], headers: dict[str, str]) -> MockRequest:
    """Read a `/v1/chat/completions` body into a `MockRequest`."""
    messages: list[dict[str, Any]] = []
    system: list[str] = []
    for message in body.get("messages") or []:
        role = message.get("role")
        if role in _SYSTEM_ROLES:
            system.append(_text(message.get("content")))
            continue
        normalised: dict[str, Any] = {"role": role, "content": _text(message.get("content"))}
        if message.get("tool_calls"):
            normalised["tool_calls"] = [
                {
                    "id": call.get("id"),
                    "name": call["function"]["name"],
                    "arguments": _arguments(call["function"].get("arguments")),
                }
                for call in message["tool_calls"]
                if call.get("type", "function") == "function"
            ]
        if role == "tool":
            normalised["tool_call_id"] = message.get("tool_call_id")
        messages.append(normalised)
    tools = [tool["function"]["name"] for tool in body.get("tools") or [] if tool.get("type") == "function"]
    return MockRequest(
        format="openai",
        model=str(body.get("model", "")),
        stream=bool(body.get("stream", False)),
        body=body,
        headers=headers,
        messages=messages,
        tools=tools,
        system="\n\n".join(system) if system else None,
    )


def _usage(usage: MockUsage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }


def _tool_calls(response: MockResponse, ids: Iterator[int]) -> list[tuple[str, str, str]]:
    """`(id, name, arguments JSON)` per scripted call, numbering the calls that have no id."""
    return [(call.id or f"call_{next(ids)}", call.name, _dumps(call.arguments)) for call in response.tool_calls]


def _finish_reason(response: MockResponse) -> str:
    return "tool_calls" if response.tool_calls else "stop"


def render_json(response: MockResponse, request: MockRequest, usage: MockUsage, ids: Iterator[int]) -> dict[str, Any]:
    """A complete `chat.completion` object."""
    message: dict[str, Any] = {"role": "assistant", "content": response.text}
    if response.reasoning:
        # The DeepSeek/vLLM field; pydantic-ai reads it (and `reasoning`) into a ThinkingPart.
        message["reasoning_content"] = response.reasoning
    if response.tool_calls:
        message["tool_calls"] = [
            {"id": id_, "type": "function", "function": {"name": name, "arguments": arguments}}
            for id_, name, arguments in _tool_calls(response, ids)
        ]
    return {
        "id": f"chatcmpl-mock-{secrets.token_hex(12)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(response), "logprobs": None}],
        "usage": _usage(usage),
    }


def render_stream(response: MockResponse, request: MockRequest, usage: MockUsage, ids: Iterator[int]) -> list[bytes]:
    """The SSE events of a streamed completion, ending with `data: [DONE]`."""
    # Chunks are spliced from string templates: a stream has many and `json.dumps` per dict dominates the cost.
    head = (
        f'data: {{"id":"chatcmpl-mock-{secrets.token_hex(12)}","object":"chat.completion.chunk",'
        f'"created":{int(time.time())},"model":{_quote(request.model)},'
    )

    def chunk(delta: str, finish_reason: str = "null") -> bytes:
        return f'{head}"choices":[{{"index":0,"delta":{delta},"finish_reason":{finish_reason}}}]}}\n\n'.encode()

    events = [chunk('{"role":"assistant","content":""}')]
    size = response.chunk_size
    events += [chunk(f'{{"reasoning_content":{_quote(p)}}}') for p in split_text(response.reasoning or "", size)]
    events += [chunk(f'{{"content":{_quote(p)}}}') for p in split_text(response.text or "", size)]
    for index, (id_, name, arguments) in enumerate(_tool_calls(response, ids)):
        start = {"index": index, "id": id_, "type": "function", "function": {"name": name, "arguments": ""}}
        events.append(chunk(_dumps({"tool_calls": [start]})))
        events += [
            chunk(f'{{"tool_calls":[{{"index":{index},"function":{{"arguments":{_quote(piece)}}}}}]}}')
            for piece in split_arguments(arguments, size)
        ]
    events.append(chunk("{}", f'"{_finish_reason(response)}"'))
    if (request.body.get("stream_options") or {}).get("include_usage"):
        events.append(f'{head}"choices":[],"usage":{_dumps(_usage(usage))}}}\n\n'.encode())
    events.append(b"data: [DONE]\n\n")
    return events


def error_body(error: MockError) -> dict[str, Any]:
    """The `{"error": {...}}` body OpenAI answers a failed request with."""
    default_type, default_code = _ERROR_TYPES.get(error.status, ("server_error", None))
    return {
        "error": {
            "message": error.message,
            "type": error.type or default_type,
            "param": None,
            "code": error.code or default_code,
        }
    }

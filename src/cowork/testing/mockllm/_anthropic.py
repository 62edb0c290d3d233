"""The Anthropic Messages wire format: parse a request, render a message, a stream or an error."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Iterator
from json.encoder import encode_basestring as _quote
from typing import Any

from ._script import MockError, MockRequest, MockResponse, MockUsage, split_arguments, split_text

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def _dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def _text(content: Any) -> str:
    """The text of a content field, which may be a string or a list of blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(
        block.get("text", "") for block in content if isinstance(block, dict) and block.get("type") == "text"
    )


def _normalise(message: dict[str, Any]) -> list[dict[str, Any]]:
    """One Anthropic message as normalised messages: a user turn's tool results become `tool` messages."""
    role, content = message.get("role"), message.get("content")
    if isinstance(content, str):
        return [{"role": role, "content": content}]
    blocks = [block for block in content or [] if isinstance(block, dict)]
    if role == "assistant":
        normalised: dict[str, Any] = {"role": "assistant", "content": _text(blocks)}
        calls = [
            {"id": block.get("id"), "name": block.get("name"), "arguments": block.get("input")}
            for block in blocks
            if block.get("type") == "tool_use"
        ]
        if calls:
            normalised["tool_calls"] = calls
        return [normalised]
    out = [
        {"role": "tool", "content": _text(block.get("content")), "tool_call_id": block.get("tool_use_id")}
        for block in blocks
        if block.get("type") == "tool_result"
    ]
    if any(block.get("type") != "tool_result" for block in blocks) or not out:
        out.append({"role": role, "content": _text(blocks)})
    return out


def parse_request(body: dict[str, Any], headers: dict[str, str]) -> MockRequest:
    """Read a `/v1/messages` body into a `MockRequest`."""
    system = body.get("system")
    return MockRequest(
        format="anthropic",
        model=str(body.get("model", "")),
        stream=bool(body.get("stream", False)),
        body=body,
        headers=headers,
        messages=[normalised for message in body.get("messages") or [] for normalised in _normalise(message)],
        tools=[tool["name"] for tool in body.get("tools") or [] if "name" in tool],
        system=_text(system) if system else None,
    )


def _usage(usage: MockUsage) -> dict[str, Any]:
    # Anthropic's `input_tokens` leaves out the cached part, which it reports on its own.
    return {
        "input_tokens": usage.input_tokens - usage.cached_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cached_tokens,
        "cache_creation_input_tokens": 0,
    }


def _signature(reasoning: str) -> str:
    return base64.b64encode(hashlib.sha256(reasoning.encode()).digest()).decode()


def _tool_uses(response: MockResponse, ids: Iterator[int]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(call.id or f"toolu_{next(ids)}", call.name, call.arguments) for call in response.tool_calls]


def _stop_reason(response: MockResponse) -> str:
    return "tool_use" if response.tool_calls else "end_turn"


def _message(
    request: MockRequest, content: list[dict[str, Any]], stop_reason: str | None, usage: dict[str, Any]
) -> dict[str, Any]:
    return {
        "id": f"msg_mock_{secrets.token_hex(12)}",
        "type": "message",
        "role": "assistant",
        "model": request.model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }


def render_json(response: MockResponse, request: MockRequest, usage: MockUsage, ids: Iterator[int]) -> dict[str, Any]:
    """A complete `message` object."""
    content: list[dict[str, Any]] = []
    if response.reasoning:
        content.append(
            {"type": "thinking", "thinking": response.reasoning, "signature": _signature(response.reasoning)}
        )
    if response.text:
        content.append({"type": "text", "text": response.text})
    content += [
        {"type": "tool_use", "id": id_, "name": name, "input": args} for id_, name, args in _tool_uses(response, ids)
    ]
    return _message(request, content, _stop_reason(response), _usage(usage))


def _event(type_: str, data: dict[str, Any]) -> bytes:
    return f"event: {type_}\ndata: {_dumps({'type': type_, **data})}\n\n".encode()


def _block(index: int, start: dict[str, Any], kind: str, field: str, pieces: list[str]) -> list[bytes]:
    # Deltas are spliced from a template: a stream has many and `json.dumps` per dict dominates the cost.
    delta = f'event: content_block_delta\ndata: {{"type":"content_block_delta","index":{index},"delta":{{"type":"{kind}","{field}":'
    return [
        _event("content_block_start", {"index": index, "content_block": start}),
        *(f"{delta}{_quote(piece)}}}}}\n\n".encode() for piece in pieces),
        _event("content_block_stop", {"index": index}),
    ]


def render_stream(response: MockResponse, request: MockRequest, usage: MockUsage, ids: Iterator[int]) -> list[bytes]:
    """The SSE events of a streamed message, from `message_start` to `message_stop`."""
    size = response.chunk_size
    start_usage = {**_usage(usage), "output_tokens": 1}
    events = [_event("message_start", {"message": _message(request, [], None, start_usage)})]
    index = 0
    if response.reasoning:
        start: dict[str, Any] = {"type": "thinking", "thinking": "", "signature": ""}
        block = _block(index, start, "thinking_delta", "thinking", split_text(response.reasoning, size))
        signature = {"type": "signature_delta", "signature": _signature(response.reasoning)}
        block.insert(-1, _event("content_block_delta", {"index": index, "delta": signature}))
        events += block
        index += 1
    if response.text:
        events += _block(index, {"type": "text", "text": ""}, "text_delta", "text", split_text(response.text, size))
        index += 1
    for id_, name, args in _tool_uses(response, ids):
        tool_use = {"type": "tool_use", "id": id_, "name": name, "input": {}}
        events += _block(index, tool_use, "input_json_delta", "partial_json", split_arguments(_dumps(args), size))
        index += 1
    stop = {"stop_reason": _stop_reason(response), "stop_sequence": None}
    events.append(_event("message_delta", {"delta": stop, "usage": {"output_tokens": usage.output_tokens}}))
    events.append(_event("message_stop", {}))
    return events


def error_body(error: MockError) -> dict[str, Any]:
    """The `{"type": "error", ...}` body Anthropic answers a failed request with."""
    error_type = error.type or _ERROR_TYPES.get(error.status, "api_error")
    return {"type": "error", "error": {"type": error_type, "message": error.message}}

"""The OpenAI Responses wire format: parse a request, render a response object or its stream (errors: `_openai`)."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from collections.abc import Iterator
from json.encoder import encode_basestring as _quote
from typing import Any

from ._script import MockRequest, MockResponse, MockUsage, split_arguments, split_text

_SYSTEM_ROLES = ("system", "developer")
_ASSISTANT_ITEMS = ("function_call", "reasoning")


def _dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def _text(content: Any) -> str:
    """The text of a message's content or a call's output: a string, or a list of typed parts."""
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


class _Conversation:
    """Folds `input` items into normalised messages: a run of assistant-side items is one assistant turn."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.system: list[str] = []
        self._assistant: dict[str, Any] | None = None

    def _turn(self) -> dict[str, Any]:
        if self._assistant is None:
            self._assistant = {"role": "assistant", "content": ""}
            self.messages.append(self._assistant)
        return self._assistant

    def add(self, item: dict[str, Any]) -> None:
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role == "assistant":
                self._turn()["content"] += _text(item.get("content"))
                return
            self._assistant = None
            if role in _SYSTEM_ROLES:
                self.system.append(_text(item.get("content")))
            else:
                self.messages.append({"role": role, "content": _text(item.get("content"))})
        elif kind == "function_call":
            call = {"id": item.get("call_id"), "name": item.get("name"), "arguments": _arguments(item.get("arguments"))}
            self._turn().setdefault("tool_calls", []).append(call)
        elif kind == "function_call_output":
            self._assistant = None
            self.messages.append(
                {"role": "tool", "content": _text(item.get("output")), "tool_call_id": item.get("call_id")}
            )
        elif kind in _ASSISTANT_ITEMS:
            # Reasoning is the model's own: it opens the assistant turn but adds no content to compare.
            self._turn()


def parse_request(body: dict[str, Any], headers: dict[str, str]) -> MockRequest:
    """Read a `/v1/responses` body into a `MockRequest`."""
    conversation = _Conversation()
    if body.get("instructions"):
        conversation.system.append(str(body["instructions"]))
    items = body.get("input") or []
    for item in [{"role": "user", "content": items}] if isinstance(items, str) else items:
        conversation.add(item)
    tools = [tool["name"] for tool in body.get("tools") or [] if tool.get("type") == "function"]
    return MockRequest(
        format="responses",
        model=str(body.get("model", "")),
        stream=bool(body.get("stream", False)),
        body=body,
        headers=headers,
        messages=conversation.messages,
        tools=tools,
        system="\n\n".join(conversation.system) if conversation.system else None,
    )


def _usage(usage: MockUsage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def _item_id(prefix: str) -> str:
    return f"{prefix}_mock_{secrets.token_hex(12)}"


def _output(response: MockResponse, request: MockRequest, ids: Iterator[int]) -> list[dict[str, Any]]:
    """The finished output items: reasoning, then the message, then one `function_call` per tool call."""
    items: list[dict[str, Any]] = []
    if response.reasoning:
        reasoning: dict[str, Any] = {
            "id": _item_id("rs"),
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": response.reasoning}],
        }
        if "reasoning.encrypted_content" in (request.body.get("include") or []):
            digest = hashlib.sha256(response.reasoning.encode()).digest()
            reasoning["encrypted_content"] = base64.b64encode(digest).decode()
        items.append(reasoning)
    if response.text:
        items.append(
            {
                "id": _item_id("msg"),
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": response.text, "annotations": [], "logprobs": []}],
            }
        )
    items += [
        {
            "id": _item_id("fc"),
            "type": "function_call",
            "status": "completed",
            "arguments": _dumps(call.arguments),
            "call_id": call.id or f"call_{next(ids)}",
            "name": call.name,
        }
        for call in response.tool_calls
    ]
    return items


def _response(
    request: MockRequest, response_id: str, status: str, output: list[dict[str, Any]], usage: MockUsage | None
) -> dict[str, Any]:
    body = request.body
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": request.model,
        "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": _usage(usage) if usage is not None else None,
        "user": None,
        "metadata": {},
    }


def render_json(response: MockResponse, request: MockRequest, usage: MockUsage, ids: Iterator[int]) -> dict[str, Any]:
    """A complete `response` object."""
    return _response(request, _item_id("resp"), "completed", _output(response, request, ids), usage)


class _Events:
    """Numbers SSE events in order, as the Responses API does with `sequence_number`."""

    def __init__(self) -> None:
        self.out: list[bytes] = []

    def add(self, type_: str, data: dict[str, Any]) -> None:
        event = {"type": type_, "sequence_number": len(self.out), **data}
        self.out.append(f"event: {type_}\ndata: {_dumps(event)}\n\n".encode())

    def deltas(self, type_: str, where: dict[str, Any], pieces: list[str]) -> None:
        # Spliced from a template: a stream has many deltas and `json.dumps` per dict dominates the cost.
        fields = _dumps(where)[1:-1]
        for piece in pieces:
            self.out.append(
                f'event: {type_}\ndata: {{"type":"{type_}","sequence_number":{len(self.out)},{fields},'
                f'"delta":{_quote(piece)}}}\n\n'.encode()
            )


def _reasoning_events(events: _Events, index: int, item: dict[str, Any], size: int | None) -> None:
    text = item["summary"][0]["text"]
    where = {"item_id": item["id"], "output_index": index, "summary_index": 0}
    events.add("response.output_item.added", {"output_index": index, "item": {**item, "summary": []}})
    events.add("response.reasoning_summary_part.added", {**where, "part": {"type": "summary_text", "text": ""}})
    events.deltas("response.reasoning_summary_text.delta", where, split_text(text, size))
    events.add("response.reasoning_summary_text.done", {**where, "text": text})
    events.add("response.reasoning_summary_part.done", {**where, "part": {"type": "summary_text", "text": text}})
    events.add("response.output_item.done", {"output_index": index, "item": item})


def _message_events(events: _Events, index: int, item: dict[str, Any], size: int | None) -> None:
    part = item["content"][0]
    where = {"item_id": item["id"], "output_index": index, "content_index": 0}
    started = {**item, "status": "in_progress", "content": []}
    events.add("response.output_item.added", {"output_index": index, "item": started})
    events.add("response.content_part.added", {**where, "part": {**part, "text": ""}})
    events.deltas("response.output_text.delta", {**where, "logprobs": []}, split_text(part["text"], size))
    events.add("response.output_text.done", {**where, "text": part["text"], "logprobs": []})
    events.add("response.content_part.done", {**where, "part": part})
    events.add("response.output_item.done", {"output_index": index, "item": item})


def _function_call_events(events: _Events, index: int, item: dict[str, Any], size: int | None) -> None:
    where = {"item_id": item["id"], "output_index": index}
    started = {**item, "status": "in_progress", "arguments": ""}
    events.add("response.output_item.added", {"output_index": index, "item": started})
    events.deltas("response.function_call_arguments.delta", where, split_arguments(item["arguments"], size))
    events.add("response.function_call_arguments.done", {**where, "name": item["name"], "arguments": item["arguments"]})
    events.add("response.output_item.done", {"output_index": index, "item": item})


_ITEM_EVENTS = {"reasoning": _reasoning_events, "message": _message_events, "function_call": _function_call_events}


def render_stream(response: MockResponse, request: MockRequest, usage: MockUsage, ids: Iterator[int]) -> list[bytes]:
    """The SSE events of a streamed response, from `response.created` to `response.completed`."""
    response_id = _item_id("resp")
    output = _output(response, request, ids)
    events = _Events()
    events.add("response.created", {"response": _response(request, response_id, "in_progress", [], None)})
    events.add("response.in_progress", {"response": _response(request, response_id, "in_progress", [], None)})
    for index, item in enumerate(output):
        _ITEM_EVENTS[item["type"]](events, index, item, response.chunk_size)
    events.add("response.completed", {"response": _response(request, response_id, "completed", output, usage)})
    return events.out

"""The Google Gemini `generateContent` wire format: parse a request, render a response, a stream or an error."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Iterator
from typing import Any

from ._script import MockError, MockRequest, MockResponse, MockUsage, split_text

_STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
# What a tool's return value is wrapped in: pydantic-ai sends `{"return_value": ...}`, Google's samples `result`.
_RESULT_KEYS = ("return_value", "result", "output", "content", "error")


def _dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def _field(data: dict[str, Any], camel: str, snake: str) -> Any:
    # The REST API takes both spellings; google-genai sends camelCase, hand-written requests often snake_case.
    return data[camel] if camel in data else data.get(snake)


def _text(parts: list[dict[str, Any]]) -> str:
    return "".join(part["text"] for part in parts if isinstance(part.get("text"), str) and not part.get("thought"))


def _tool_result(response: Any) -> str:
    if isinstance(response, dict) and len(response) == 1:
        [(key, value)] = response.items()
        if key in _RESULT_KEYS:
            response = value
    return response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)


def _normalise(content: dict[str, Any]) -> list[dict[str, Any]]:
    """One `Content` as normalised messages: a user turn's function responses become `tool` messages."""
    parts = [part for part in content.get("parts") or [] if isinstance(part, dict)]
    if content.get("role") == "model":
        normalised: dict[str, Any] = {"role": "assistant", "content": _text(parts)}
        calls = [
            # Gemini's calls may carry no id; the function name is what pairs a call with its response then.
            {"id": call.get("id") or call.get("name"), "name": call.get("name"), "arguments": call.get("args") or {}}
            for part in parts
            if (call := _field(part, "functionCall", "function_call")) is not None
        ]
        if calls:
            normalised["tool_calls"] = calls
        return [normalised]
    out = [
        {
            "role": "tool",
            "content": _tool_result(result.get("response")),
            "tool_call_id": result.get("id") or result.get("name"),
        }
        for part in parts
        if (result := _field(part, "functionResponse", "function_response")) is not None
    ]
    if len(out) < len(parts) or not out:
        out.append({"role": "user", "content": _text(parts)})
    return out


def parse_request(
    body: dict[str, Any], headers: dict[str, str], *, model: str, stream: bool, query: dict[str, str]
) -> MockRequest:
    """Read a `models/{model}:generateContent` body into a `MockRequest`; the model, mode and query are the URL's."""
    system = _field(body, "systemInstruction", "system_instruction")
    if isinstance(system, dict):
        system = _text([part for part in system.get("parts") or [] if isinstance(part, dict)])
    tools = [
        declaration["name"]
        for tool in body.get("tools") or []
        for declaration in _field(tool, "functionDeclarations", "function_declarations") or []
        if "name" in declaration
    ]
    return MockRequest(
        format="gemini",
        model=model,
        stream=stream,
        body=body,
        headers=headers,
        messages=[normalised for content in body.get("contents") or [] for normalised in _normalise(content)],
        tools=tools,
        system=system or None,
        query=query,
    )


def _usage(usage: MockUsage) -> dict[str, Any]:
    # Gemini counts thoughts apart from the answer (`candidatesTokenCount`); the prompt count includes the cache.
    metadata: dict[str, Any] = {
        "promptTokenCount": usage.input_tokens,
        "candidatesTokenCount": usage.output_tokens - usage.reasoning_tokens,
        "totalTokenCount": usage.input_tokens + usage.output_tokens,
    }
    if usage.cached_tokens:
        metadata["cachedContentTokenCount"] = usage.cached_tokens
    if usage.reasoning_tokens:
        metadata["thoughtsTokenCount"] = usage.reasoning_tokens
    return metadata


def _signature(reasoning: str) -> str:
    return base64.b64encode(hashlib.sha256(reasoning.encode()).digest()).decode()


def _function_calls(response: MockResponse) -> list[dict[str, Any]]:
    # The Gemini API sends no call ids, so the mock only sends the ones a script chose.
    calls: list[dict[str, Any]] = []
    for call in response.tool_calls:
        function_call: dict[str, Any] = {"name": call.name, "args": call.arguments}
        if call.id is not None:
            function_call["id"] = call.id
        calls.append({"functionCall": function_call})
    return calls


def _chunk(
    request: MockRequest, response_id: str, parts: list[dict[str, Any]], usage: MockUsage | None = None
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    chunk: dict[str, Any] = {"candidates": [candidate]}
    if usage is not None:
        candidate["finishReason"] = "STOP"
        chunk["usageMetadata"] = _usage(usage)
    chunk["modelVersion"] = request.model
    chunk["responseId"] = response_id
    return chunk


def render_json(response: MockResponse, request: MockRequest, usage: MockUsage, ids: Iterator[int]) -> dict[str, Any]:
    """A complete `GenerateContentResponse`."""
    parts: list[dict[str, Any]] = []
    if response.reasoning:
        parts.append({"text": response.reasoning, "thought": True, "thoughtSignature": _signature(response.reasoning)})
    if response.text:
        parts.append({"text": response.text})
    parts += _function_calls(response)
    return _chunk(request, secrets.token_urlsafe(16), parts or [{"text": ""}], usage)


def render_stream(response: MockResponse, request: MockRequest, usage: MockUsage, ids: Iterator[int]) -> list[bytes]:
    """The SSE events of `streamGenerateContent?alt=sse`: partial responses, the last with usage and `STOP`."""
    size = response.chunk_size
    chunks: list[list[dict[str, Any]]] = [
        [{"text": piece, "thought": True}] for piece in split_text(response.reasoning or "", size)
    ]
    if chunks:
        chunks[-1][0]["thoughtSignature"] = _signature(response.reasoning or "")
    chunks += [[{"text": piece}] for piece in split_text(response.text or "", size)]
    chunks += [[call] for call in _function_calls(response)]
    if not chunks:
        chunks.append([{"text": ""}])
    response_id = secrets.token_urlsafe(16)
    last = len(chunks) - 1
    return [
        f"data: {_dumps(_chunk(request, response_id, parts, usage if index == last else None))}\r\n\r\n".encode()
        for index, parts in enumerate(chunks)
    ]


def models_body(names: list[str]) -> dict[str, Any]:
    """The `GET /v1beta/models` body: one page holding every model, named `models/<id>` as Google names them."""
    return {
        "models": [
            {
                "name": f"models/{name}",
                "version": "001",
                "displayName": name,
                "inputTokenLimit": 1048576,
                "outputTokenLimit": 65536,
                "supportedGenerationMethods": ["generateContent", "countTokens"],
            }
            for name in names
        ]
    }


def error_body(error: MockError) -> dict[str, Any]:
    """The `{"error": {code, message, status}}` body Google answers a failed request with."""
    status = error.type or _STATUSES.get(error.status, "UNKNOWN")
    return {"error": {"code": error.status, "message": error.message, "status": status}}

"""JSON-RPC 2.0 framing: parsing incoming frames (single or batch) and building outgoing messages."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeAlias

from ._errors import ErrorCode, ErrorSource, ProtocolError

__all__ = [
    "Frame",
    "Incoming",
    "Invalid",
    "Request",
    "RequestId",
    "error_response",
    "notification",
    "parse_frame",
    "request",
    "success_response",
]

RequestId: TypeAlias = int | str
JSONRPC = "2.0"


@dataclass(frozen=True, slots=True)
class Request:
    """One call from a peer. `id` is None for a notification, which gets no response."""

    method: str
    params: dict[str, Any] | list[Any] | None
    id: RequestId | None
    is_notification: bool


@dataclass(frozen=True, slots=True)
class Invalid:
    """A frame element that is not a valid request; answered with this error and the id, if one was readable."""

    id: RequestId | None
    error: ProtocolError


Incoming: TypeAlias = Request | Invalid


@dataclass(frozen=True, slots=True)
class Frame:
    """A parsed frame: its elements and whether it was a batch (a batch is answered with an array)."""

    items: list[Incoming]
    is_batch: bool


def _invalid(message: str, id_: RequestId | None = None) -> Invalid:
    return Invalid(id_, ProtocolError(ErrorCode.INVALID_REQUEST, message, source=ErrorSource.PROTOCOL))


def _readable_id(obj: dict[str, Any]) -> RequestId | None:
    value = obj.get("id")
    if isinstance(value, bool):
        return None
    return value if isinstance(value, int | str) else None


def _parse_item(obj: Any) -> Incoming:
    if not isinstance(obj, dict):
        return _invalid("A JSON-RPC request must be an object.")
    id_ = _readable_id(obj)
    if obj.get("jsonrpc") != JSONRPC:
        return _invalid('The "jsonrpc" member must be exactly "2.0".', id_)
    if "id" in obj and obj["id"] is not None and id_ is None:
        return _invalid('The "id" member must be a string, an integer or null.')
    method = obj.get("method")
    if not isinstance(method, str) or not method:
        return _invalid('The "method" member must be a non-empty string.', id_)
    params = obj.get("params")
    if params is not None and not isinstance(params, dict | list):
        return _invalid('The "params" member must be an object or an array.', id_)
    extra = set(obj) - {"jsonrpc", "id", "method", "params"}
    if extra:
        return _invalid(f"Unexpected members in request: {', '.join(sorted(extra))}.", id_)
    return Request(method=method, params=params, id=id_, is_notification="id" not in obj)


def parse_frame(data: str | bytes) -> Frame:
    """Parse one WebSocket frame or HTTP body.

    Raises:
        ProtocolError: `parse_error` when the frame is not JSON, `invalid_request` for an empty batch.
    """
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(ErrorCode.PARSE_ERROR, f"Invalid JSON: {exc}", source=ErrorSource.PROTOCOL) from None
    if isinstance(obj, list):
        if not obj:
            raise ProtocolError(
                ErrorCode.INVALID_REQUEST, "An empty batch is not a request.", source=ErrorSource.PROTOCOL
            )
        return Frame(items=[_parse_item(item) for item in obj], is_batch=True)
    return Frame(items=[_parse_item(obj)], is_batch=False)


def success_response(id_: RequestId | None, result: Any) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC, "id": id_, "result": result}


def error_response(id_: RequestId | None, error: ProtocolError) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC, "id": id_, "error": error.to_error_object()}


def notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC, "method": method, "params": params}


def request(id_: RequestId, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": JSONRPC, "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message

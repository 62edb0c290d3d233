"""From a frame to responses: parse, validate params against the method's model, call the handler, map errors.

Shared by the WebSocket and `POST /rpc`; nothing here knows which one a frame came from.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from pydantic import ValidationError

from cowork.core import Core
from cowork.protocol import (
    METHODS,
    ErrorCode,
    ErrorSource,
    Invalid,
    ProtocolError,
    Request,
    RequestId,
    WireModel,
    error_response,
    parse_frame,
)

from ._peer import Peer
from ._registry import HANDLERS

__all__ = ["Dispatcher", "encode_error", "encode_result"]

log = logging.getLogger(__name__)


def encode_result(id_: RequestId | None, result: WireModel) -> str:
    body = result.model_dump_json(by_alias=True, exclude_none=True)
    return f'{{"jsonrpc":"2.0","id":{json.dumps(id_)},"result":{body}}}'


def encode_error(id_: RequestId | None, error: ProtocolError) -> str:
    return json.dumps(error_response(id_, error), separators=(",", ":"))


def _params_error(method: str, exc: ValidationError) -> ProtocolError:
    problems = [
        {"field": ".".join(str(p) for p in err["loc"]) or "(params)", "problem": err["msg"]} for err in exc.errors()
    ]
    summary = "; ".join(f"{p['field']}: {p['problem']}" for p in problems)
    return ProtocolError(
        ErrorCode.INVALID_PARAMS,
        f"Invalid params for {method}: {summary}",
        source=ErrorSource.PROTOCOL,
        details={"errors": problems},
    )


class Dispatcher:
    """Answers frames for one core."""

    def __init__(self, core: Core) -> None:
        self._core = core

    def parse(self, data: str | bytes) -> tuple[list[Request | Invalid], bool]:
        """Parse a frame. Raises ProtocolError (`parse_error`, `invalid_request`) for the frame as a whole."""
        frame = parse_frame(data)
        return frame.items, frame.is_batch

    async def call(self, request: Request, peer: Peer | None) -> str | None:
        """Run one request; returns the encoded response, or None for a notification."""
        try:
            result = await self._invoke(request, peer)
        except ProtocolError as exc:
            return None if request.is_notification else encode_error(request.id, exc)
        except Exception as exc:
            log.exception("unhandled error in %s", request.method)
            error = ProtocolError(
                ErrorCode.INTERNAL_ERROR, f"Internal error: {type(exc).__name__}", source=ErrorSource.SERVER
            )
            return None if request.is_notification else encode_error(request.id, error)
        return None if request.is_notification else encode_result(request.id, result)

    async def _invoke(self, request: Request, peer: Peer | None) -> WireModel:
        spec = METHODS.get(request.method)
        if spec is None:
            raise ProtocolError(
                ErrorCode.METHOD_NOT_FOUND, f"Unknown method {request.method!r}.", source=ErrorSource.PROTOCOL
            )
        raw: Any = {} if request.params is None else request.params
        if not isinstance(raw, dict):
            raise ProtocolError(
                ErrorCode.INVALID_PARAMS,
                f"Params for {request.method} must be an object with named fields.",
                source=ErrorSource.PROTOCOL,
            )
        try:
            params = spec.params.model_validate(raw)
        except ValidationError as exc:
            raise _params_error(request.method, exc) from None
        # Every protocol method has a handler (tests/server/test_registry.py), so a KeyError here is a bug.
        return await HANDLERS[request.method](self._core, peer, params)

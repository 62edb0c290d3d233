"""Activity capture and context (`capture/status|configure`, `context/query|delete`; see `cowork.capture`)."""

from __future__ import annotations

from cowork.capture import ConsentError
from cowork.core import Core
from cowork.protocol import (
    CaptureConfigureParams,
    CaptureStatus,
    ContextDeleteParams,
    ContextDeleteResult,
    ContextQueryParams,
    ContextQueryResult,
    EmptyParams,
    ErrorCode,
    ProtocolError,
)

from .._peer import Peer

__all__ = ["capture_configure", "capture_status", "context_delete", "context_query"]


async def capture_status(core: Core, peer: Peer | None, params: EmptyParams) -> CaptureStatus:
    return core.capture.status()


async def capture_configure(core: Core, peer: Peer | None, params: CaptureConfigureParams) -> CaptureStatus:
    try:
        return await core.capture.configure(params)
    except ConsentError as error:
        raise ProtocolError(ErrorCode.INVALID_PARAMS, str(error)) from None


async def context_query(core: Core, peer: Peer | None, params: ContextQueryParams) -> ContextQueryResult:
    return await core.capture.query(
        params.since, params.until, app=params.app, title=params.title, query=params.query, limit=params.limit
    )


async def context_delete(core: Core, peer: Peer | None, params: ContextDeleteParams) -> ContextDeleteResult:
    return ContextDeleteResult(deleted=await core.capture.delete(params.since, params.until))

"""Sessions, their event streams and turns: `session/*`, `events/replay`, `turn/*`, `approval/respond`,
`ask/respond`."""

from __future__ import annotations

from cowork.core import Core
from cowork.protocol import (
    ApprovalRespondParams,
    AskRespondParams,
    CheckpointListResult,
    EventsReplayParams,
    EventsReplayResult,
    RespondResult,
    SessionCompactParams,
    SessionCreateParams,
    SessionDeleteResult,
    SessionDiffResult,
    SessionExportParams,
    SessionExportResult,
    SessionForkParams,
    SessionForkResult,
    SessionGetParams,
    SessionGetResult,
    SessionImportParams,
    SessionImportResult,
    SessionInfo,
    SessionListParams,
    SessionListResult,
    SessionRef,
    SessionRestoreResult,
    SessionRewindParams,
    SessionSearchParams,
    SessionSearchResult,
    SessionUndoParams,
    SessionUpdateParams,
    SubscribeParams,
    SubscribeResult,
    TurnCancelParams,
    TurnCancelResult,
    TurnRetryParams,
    TurnRetryResult,
    TurnStartParams,
    TurnStartResult,
    TurnSteerParams,
    TurnSteerResult,
    UnsubscribeResult,
)

from .._peer import Peer, needs_websocket

__all__ = [
    "approval_respond",
    "ask_respond",
    "events_replay",
    "session_compact",
    "session_create",
    "session_delete",
    "session_diff",
    "session_export",
    "session_get",
    "session_list",
    "session_search",
    "session_subscribe",
    "session_unsubscribe",
    "session_update",
    "turn_cancel",
    "turn_retry",
    "turn_start",
    "turn_steer",
]


async def session_create(core: Core, peer: Peer | None, params: SessionCreateParams) -> SessionInfo:
    if params.provider is not None:
        core.selector.preset(params.provider)  # raises unknown_provider before anything is created
    return await core.sessions.create(params)


async def session_diff(core: Core, peer: Peer | None, params: SessionRef) -> SessionDiffResult:
    return await core.runtime.session_diff(params.session_id)


async def session_list(core: Core, peer: Peer | None, params: SessionListParams) -> SessionListResult:
    return SessionListResult(sessions=await core.sessions.list_sessions(params))


async def session_update(core: Core, peer: Peer | None, params: SessionUpdateParams) -> SessionInfo:
    return await core.settings.update(params)


async def session_search(core: Core, peer: Peer | None, params: SessionSearchParams) -> SessionSearchResult:
    return await core.sessions.search(params)


async def session_fork(core: Core, peer: Peer | None, params: SessionForkParams) -> SessionForkResult:
    return await core.runtime.fork_session(params)


async def checkpoint_list(core: Core, peer: Peer | None, params: SessionRef) -> CheckpointListResult:
    return await core.runtime.list_checkpoints(params.session_id)


async def session_undo(core: Core, peer: Peer | None, params: SessionUndoParams) -> SessionRestoreResult:
    return await core.runtime.undo(params)


async def session_rewind(core: Core, peer: Peer | None, params: SessionRewindParams) -> SessionRestoreResult:
    return await core.runtime.rewind(params)


async def session_import(core: Core, peer: Peer | None, params: SessionImportParams) -> SessionImportResult:
    return await core.runtime.import_session(params)


async def session_delete(core: Core, peer: Peer | None, params: SessionRef) -> SessionDeleteResult:
    deleted = await core.runtime.delete_session(params.session_id)
    await core.recall.forget_session(params.session_id)  # its turns leave the conversations index too
    return deleted


async def session_export(core: Core, peer: Peer | None, params: SessionExportParams) -> SessionExportResult:
    return await core.sessions.export(params)


async def session_get(core: Core, peer: Peer | None, params: SessionGetParams) -> SessionGetResult:
    session = await core.sessions.get(params.session_id)
    return SessionGetResult(
        session=session,
        messages=await core.sessions.messages(params.session_id),
        pending=await core.runtime.pending(params.session_id),
        todos=await core.todos.get(params.session_id),
    )


async def session_subscribe(core: Core, peer: Peer | None, params: SubscribeParams) -> SubscribeResult:
    target = needs_websocket(peer, "session/subscribe")
    last_seq = await target.subscribe(params.session_id, params.after_seq)
    # Whatever the session waits on is handed over now, however long ago it was asked.
    return SubscribeResult(last_seq=last_seq, pending=await core.runtime.pending(params.session_id))


async def session_unsubscribe(core: Core, peer: Peer | None, params: SessionRef) -> UnsubscribeResult:
    target = needs_websocket(peer, "session/unsubscribe")
    return UnsubscribeResult(unsubscribed=target.unsubscribe(params.session_id))


async def events_replay(core: Core, peer: Peer | None, params: EventsReplayParams) -> EventsReplayResult:
    return await core.sessions.replay(params.session_id, params.after_seq, params.limit)


async def turn_start(core: Core, peer: Peer | None, params: TurnStartParams) -> TurnStartResult:
    if peer is not None:
        # Subscribe first (live only), so not one event of this turn can slip past the connection that started it.
        await peer.subscribe(params.session_id, None)
    return await core.runtime.start_turn(params)


async def session_compact(core: Core, peer: Peer | None, params: SessionCompactParams) -> TurnStartResult:
    if peer is not None:
        await peer.subscribe(params.session_id, None)
    return await core.runtime.compact(params)


async def turn_cancel(core: Core, peer: Peer | None, params: TurnCancelParams) -> TurnCancelResult:
    return TurnCancelResult(cancelled=await core.runtime.cancel(params.session_id, params.operation_id))


async def turn_steer(core: Core, peer: Peer | None, params: TurnSteerParams) -> TurnSteerResult:
    if peer is not None:
        await peer.subscribe(params.session_id, None)
    return await core.runtime.steer(params)


async def turn_retry(core: Core, peer: Peer | None, params: TurnRetryParams) -> TurnRetryResult:
    if peer is not None and params.confirm:
        await peer.subscribe(params.session_id, None)
    return await core.runtime.retry(params)


async def approval_respond(core: Core, peer: Peer | None, params: ApprovalRespondParams) -> RespondResult:
    return await core.runtime.respond_approval(params)


async def ask_respond(core: Core, peer: Peer | None, params: AskRespondParams) -> RespondResult:
    return await core.runtime.respond_ask(params)

"""Chat turns: start one on the user's message (routed to a model when the router picks), and steer a running one."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from cowork.models import ModelSelector, ModelTarget, history_chars
from cowork.protocol import (
    ErrorCode,
    ErrorSource,
    EventPayload,
    OperationStatus,
    ProtocolError,
    Route,
    SessionCompactParams,
    SessionUpdated,
    TurnStartParams,
    TurnStartResult,
    TurnSteerParams,
    TurnSteerResult,
    UserMessage,
)
from cowork.sessions import SessionSettings, new_id, session_not_found
from cowork.store import Connection, OperationInputRow, SessionRow, repos

from ._handles import CachedThread
from ._history import repair_with_positions
from ._loading import read_thread
from ._operations import NewOperation, Operations
from ._routing import Routed, TurnRouter
from ._runner import split_point
from ._state import Steer
from ._views import busy

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

__all__ = ["Turns", "message_tokens", "route_event"]

S = OperationStatus
_DEFAULT_TITLE = "New session"


def route_event(operation_id: str, routed: Routed, ask_id: str | None = None) -> Route:
    """The `route` event telling which tier the router picked, and why."""
    decision = routed.decision
    return Route(
        operation_id=operation_id,
        tier=decision.tier.name,
        provider=decision.tier.provider,
        model=decision.tier.model,
        code=str(decision.code),
        reason=decision.reason,
        notify=decision.notify,
        estimated_tokens=decision.estimated_tokens,
        ask_id=ask_id,
        warning=routed.warning,
    )


def message_tokens(messages: list[ModelMessage]) -> int:
    """A cheap estimate of a history's size (about four characters a token)."""
    return history_chars(messages) // 4


def _title_from(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 60 else line[:59].rstrip() + "…"


class Turns:
    """`turn/start`, `turn/steer` and `session/compact`."""

    def __init__(
        self, operations: Operations, settings: SessionSettings, selector: ModelSelector, router: TurnRouter
    ) -> None:
        self._ops = operations
        self._settings = settings
        self._selector = selector
        self._router = router

    async def start(self, params: TurnStartParams) -> TurnStartResult:
        """Record the user's message and start an operation on it.

        A turn started while the previous one waits for a person (or was interrupted) supersedes it: the old
        one is cancelled and its open calls are told so.

        Raises:
            ProtocolError: `session_not_found`, `busy` (a turn is running), `no_provider`/`unknown_provider`.
                Nothing is recorded when it raises.
        """
        sid = params.session_id
        ops = self._ops
        async with ops.session_lock(sid):
            session, existing, previous = await ops.deps.db.read(
                lambda conn: (
                    repos.sessions.get(conn, sid),
                    repos.operations.find_by_client_message(conn, sid, params.client_message_id),
                    repos.operations.latest_active(conn, sid, [S.RUNNING, S.WAITING_FOR_HUMAN, S.INTERRUPTED]),
                )
            )
            if session is None:
                raise session_not_found(sid)
            self._settings.remember(session)
            if existing is not None:
                return TurnStartResult(
                    operation_id=existing.id, status=OperationStatus(existing.status), duplicate=True
                )
            running = ops.running_turn(sid)
            if running is None and previous is not None and previous.status == S.RUNNING:
                if await ops.leases.holder(previous.id) is not None:  # it runs on another replica
                    running_id: str | None = previous.id
                else:
                    running_id = None
            else:
                running_id = running.state.id if running is not None else None
            if running_id is not None:
                raise busy(
                    "A turn is already running in this session; wait for it, steer it (turn/steer) or cancel it.",
                    running_id,
                )
            routed, target = await self._target(session, params.text)
            if previous is not None:
                await ops.cancel(previous.id, reason="Superseded by a new message.")
            cached = await self._history(sid, take=True)
            operation_id = new_id("op")
            new_title = _title_from(params.text) if session.title == _DEFAULT_TITLE else None
            events: list[EventPayload] = []
            if new_title:
                events.append(SessionUpdated(title=new_title))
            if routed is not None:
                events.append(route_event(operation_id, routed))

            def retitle(conn: Connection) -> None:
                if new_title:
                    repos.sessions.update(conn, sid, now=datetime.now(UTC), title=new_title)

            await ops.new_operation(
                NewOperation(
                    session_id=sid,
                    thread_id=sid,
                    origin="chat",
                    target=target,
                    workspace=Path(session.workspace),
                    operation_id=operation_id,
                    request=params.text,
                    history=cached,
                    announce_request=True,
                    client_message_id=params.client_message_id,
                    tier=routed.decision.tier.name if routed else None,
                    events=events,
                    mutate=retitle,
                )
            )
            return TurnStartResult(operation_id=operation_id, status=S.RUNNING, duplicate=False)

    async def _target(self, session: SessionRow, text: str) -> tuple[Routed | None, ModelTarget]:
        """The model a new operation of `session` uses, and the router's decision when the router chose it."""
        if self._router.routes(session):
            routed = await self._router.route(text, await self._history_tokens(session.id))
            return routed, self._selector.resolve(routed.decision.tier.provider, routed.decision.tier.model)
        target = self._selector.resolve(session.provider, session.model)
        if session.model is None:
            served = await self._router.served_default(target)
            if served is not None:
                target = self._selector.resolve(target.provider, served)
        return None, target

    async def compact(self, params: SessionCompactParams) -> TurnStartResult:
        """Compress the session's history now, in an operation of its own (`session/compact`).

        Raises:
            ProtocolError: `session_not_found`; `busy` while a turn runs, waits for an answer or was interrupted
                (compressing then would cancel it); `nothing_to_compact` when the history is too short;
                `no_provider`/`unknown_provider`. Nothing is recorded then.
        """
        sid = params.session_id
        ops = self._ops
        async with ops.session_lock(sid):
            session = await self._between_turns(
                sid,
                "This session has a turn in progress (running, waiting for an answer, or interrupted); finish or "
                "cancel it before compacting.",
            )
            history = await self._history(sid, take=False)  # taken only once nothing can refuse
            if split_point(history.messages, 0) is None:
                raise ProtocolError(
                    ErrorCode.NOTHING_TO_COMPACT,
                    "Nothing to compact yet: the conversation is too short to summarise.",
                    source=ErrorSource.RUNTIME,
                )
            self._settings.remember(session)
            _, target = await self._target(session, "Summarise this conversation.")
            operation_id = new_id("op")
            ops.threads.take(sid)  # the operation is about to change it
            await ops.new_operation(
                NewOperation(
                    session_id=sid,
                    thread_id=sid,
                    origin="compact",
                    target=target,
                    workspace=Path(session.workspace),
                    operation_id=operation_id,
                    history=history,
                    compact_focus=params.instructions.strip() if params.instructions else None,
                )
            )
            return TurnStartResult(operation_id=operation_id, status=S.RUNNING, duplicate=False)

    async def observe(self, session_id: str) -> TurnStartResult:
        """Note observations of the session's turns not yet observed, in an operation of its own (observational
        memory; see `_exec_observe`). The history is read, never changed.

        Raises:
            ProtocolError: `session_not_found`; `busy` while a turn is in play; `no_provider`/`unknown_provider`.
        """
        sid = session_id
        ops = self._ops
        async with ops.session_lock(sid):
            session = await self._between_turns(
                sid, "This session has a turn in progress; observe it once the turn has ended."
            )
            history = await self._history(sid, take=False)
            self._settings.remember(session)
            _, target = await self._target(session, "Note what is worth remembering from this conversation.")
            operation_id = new_id("op")
            await ops.new_operation(
                NewOperation(
                    session_id=sid,
                    thread_id=sid,
                    origin="observe",
                    target=target,
                    workspace=Path(session.workspace),
                    operation_id=operation_id,
                    history=history,
                )
            )
            return TurnStartResult(operation_id=operation_id, status=S.RUNNING, duplicate=False)

    async def _between_turns(self, sid: str, busy_message: str) -> SessionRow:
        """The session, for an operation of its own between turns (`compact`, `observe`); call with its lock held.

        Raises:
            ProtocolError: `session_not_found`; `busy` (with `busy_message`) while a turn runs, waits for an
                answer or was interrupted.
        """
        ops = self._ops
        session, active = await ops.deps.db.read(
            lambda conn: (
                repos.sessions.get(conn, sid),
                repos.operations.latest_active(conn, sid, [S.RUNNING, S.WAITING_FOR_HUMAN, S.INTERRUPTED]),
            )
        )
        if session is None:
            raise session_not_found(sid)
        running = ops.running_turn(sid)
        in_play = running.state.id if running is not None else active.id if active is not None else None
        if in_play is not None:
            raise busy(busy_message, in_play)
        return session

    async def _history(self, session_id: str, *, take: bool) -> CachedThread:
        """The session's model-facing history: the cached one (removed from the cache with `take`, as an operation
        about to change it does), else read from the store and repaired."""
        threads = self._ops.threads
        cached = threads.take(session_id) if take else threads.get(session_id)
        if cached is not None:
            return cached
        thread = await self._ops.deps.db.read(lambda conn: read_thread(conn, session_id))
        messages, positions = repair_with_positions(thread.messages, thread.positions)
        return CachedThread(messages, positions, thread.next_position)

    async def _history_tokens(self, session_id: str) -> int:
        cached = self._ops.threads.get(session_id)
        if cached is not None:
            return message_tokens(cached.messages)
        thread = await self._ops.deps.db.read(lambda conn: read_thread(conn, session_id))
        return message_tokens(thread.messages)

    async def steer(self, params: TurnSteerParams) -> TurnSteerResult:
        """Queue user input for the session's active operation; it joins at the next step boundary.

        Raises:
            ProtocolError: `session_not_found`; `not_running` when no turn is active.
        """
        sid = params.session_id
        ops = self._ops
        async with ops.session_lock(sid):
            session, existing, active = await ops.deps.db.read(
                lambda conn: (
                    repos.sessions.get(conn, sid),
                    repos.inputs.find_by_client_message(conn, sid, params.client_message_id),
                    repos.operations.latest_active(conn, sid, [S.RUNNING, S.WAITING_FOR_HUMAN, S.INTERRUPTED]),
                )
            )
            if session is None:
                raise session_not_found(sid)
            if existing is not None:
                return TurnSteerResult(operation_id=existing.operation_id, duplicate=True)
            if active is None:
                raise ProtocolError(
                    ErrorCode.NOT_RUNNING,
                    "No turn is running in this session to steer; start one with turn/start.",
                    source=ErrorSource.RUNTIME,
                )
            row = OperationInputRow(
                id=new_id("in"),
                operation_id=active.id,
                session_id=sid,
                client_message_id=params.client_message_id,
                text=params.text,
                status="queued",
                created_at=datetime.now(UTC),
            )
            await ops.deps.journal.append(
                sid,
                UserMessage(
                    operation_id=active.id,
                    message_id=row.id,
                    text=params.text,
                    client_message_id=params.client_message_id,
                    steer=True,
                ),
                mutate=lambda conn: repos.inputs.insert(conn, row),
            )
            handle = ops.get(active.id)
            if handle is not None:
                handle.state.steering.append(Steer(row.id, row.text, row.client_message_id))
            elif (elsewhere := await ops.leases.holder(active.id)) is not None:
                # The turn runs on another replica: its runner is told there (the input is in the store already).
                steer: dict[str, object] = {
                    "operationId": active.id,
                    "id": row.id,
                    "text": row.text,
                    "clientMessageId": row.client_message_id,
                }
                await ops.leases.forward(elsewhere, "steer", steer, _sent)
            return TurnSteerResult(operation_id=active.id, duplicate=False)


async def _sent() -> bool:
    return True

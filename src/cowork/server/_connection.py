"""One WebSocket connection: request concurrency limits, subscriptions with gap-free catch-up, back-pressure."""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from cowork.core import Core
from cowork.protocol import (
    DELTA_EVENT_TYPES,
    ErrorCode,
    ErrorSource,
    Invalid,
    ProtocolError,
    SessionEvent,
    WireModel,
)

from ._dispatch import Dispatcher, encode_error

__all__ = ["ConnectionLimits", "WsConnection"]

log = logging.getLogger(__name__)

_REPLAY_PAGE = 500
CLOSE_TOO_SLOW = 1013


@dataclass(frozen=True)
class ConnectionLimits:
    max_frame_bytes: int
    max_inflight: int
    queue_limit: int
    """Beyond this many queued messages, stream deltas are dropped; at four times it the connection is closed."""


class _EventEncoder:
    """Encodes each event once, however many connections it goes to (the bus hands them all the same object)."""

    def __init__(self) -> None:
        self._event: SessionEvent | None = None
        self._text = ""

    def encode(self, event: SessionEvent) -> str:
        if event is not self._event:
            body = event.model_dump_json(by_alias=True, exclude_none=True)
            self._text = f'{{"jsonrpc":"2.0","method":"session/event","params":{body}}}'
            self._event = event
        return self._text


ENCODER = _EventEncoder()


@dataclass
class _Subscription:
    last_sent: int = 0
    catching_up: bool = True
    buffer: list[SessionEvent] = field(default_factory=list)
    unsubscribe: Any = None


class WsConnection:
    """Serves one accepted WebSocket until it closes."""

    def __init__(self, ws: WebSocket, core: Core, dispatcher: Dispatcher, limits: ConnectionLimits) -> None:
        self._ws = ws
        self._core = core
        self._dispatcher = dispatcher
        self._limits = limits
        self._outbox: deque[tuple[str, bool]] = deque()
        self._wakeup = asyncio.Event()
        self._drained = asyncio.Event()
        self._drained.set()
        self._inflight = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._subs: dict[str, _Subscription] = {}
        self._catch_ups: set[asyncio.Task[None]] = set()
        self._closing = False
        self.dropped = 0

    # -- outbound ---------------------------------------------------------------------------------------------

    def send(self, text: str, *, droppable: bool = False) -> None:
        """Queue a message. Under back-pressure stream deltas go first; a hopelessly slow peer is disconnected."""
        if self._closing:
            return
        limit = self._limits.queue_limit
        if len(self._outbox) >= limit:
            if droppable:
                self.dropped += 1
                return
            if not self._evict_one_delta() and len(self._outbox) >= 4 * limit:
                log.warning("closing a connection that cannot keep up (%d queued)", len(self._outbox))
                self._closing = True
                self._outbox.clear()
                self._wakeup.set()
                return
        self._outbox.append((text, droppable))
        self._drained.clear()
        self._wakeup.set()

    def _evict_one_delta(self) -> bool:
        for i, (_, droppable) in enumerate(self._outbox):
            if droppable:
                del self._outbox[i]
                self.dropped += 1
                return True
        return False

    async def _writer(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            while self._outbox:
                text, _ = self._outbox.popleft()
                await self._ws.send_text(text)
            self._drained.set()
            if self._closing:
                await self._ws.close(code=CLOSE_TOO_SLOW, reason="client too slow; reconnect and replay")
                return

    async def _wait_for_room(self) -> None:
        if len(self._outbox) >= self._limits.queue_limit // 2:
            await self._drained.wait()

    # -- subscriptions (Peer) ---------------------------------------------------------------------------------

    def _on_event(self, sub: _Subscription, event: SessionEvent) -> None:
        if sub.catching_up:
            sub.buffer.append(event)
        elif event.seq > sub.last_sent + 1 and self._core.fanout is not None:
            # Another replica's event overtook one of this replica's (or the other way round): the ones between are
            # committed, so read them from the log first.
            sub.catching_up = True
            sub.buffer.append(event)
            task = asyncio.get_running_loop().create_task(self._catch_up(event.session_id, sub))
            self._catch_ups.add(task)
            task.add_done_callback(self._catch_ups.discard)
        elif event.seq > sub.last_sent:
            sub.last_sent = event.seq
            self.send(ENCODER.encode(event), droppable=event.type in DELTA_EVENT_TYPES)

    async def subscribe(self, session_id: str, after_seq: int | None) -> int:
        """Deliver the session's events from now on (after replaying those after `after_seq`, if given).

        Raises:
            ProtocolError: `session_not_found`; the connection is then not subscribed.
        """
        sub = self._subs.get(session_id)
        if sub is not None and after_seq is None:
            return sub.last_sent
        if sub is None:
            sub = _Subscription()
            self._subs[session_id] = sub
            # Registered before reading where the log ends, so nothing committed in between can be missed.
            sub.unsubscribe = self._core.bus.subscribe(session_id, lambda event: self._on_event(sub, event))
        sub.catching_up = True
        try:
            if after_seq is None:
                sub.last_sent = (await self._core.sessions.get_row(session_id)).last_seq
            else:
                sub.last_sent = after_seq
                while True:
                    page = await self._core.sessions.replay(session_id, sub.last_sent, _REPLAY_PAGE)
                    for event in page.events:
                        self.send(ENCODER.encode(event))
                        sub.last_sent = event.seq
                    await self._wait_for_room()
                    if not page.has_more:
                        break
        except BaseException:
            self.unsubscribe(session_id)
            raise
        finally:
            # No await between here and going live, so no event can fall between the replay and the live stream.
            for event in sub.buffer:
                if event.seq > sub.last_sent:
                    sub.last_sent = event.seq
                    self.send(ENCODER.encode(event), droppable=event.type in DELTA_EVENT_TYPES)
            sub.buffer.clear()
            sub.catching_up = False
        return sub.last_sent

    async def _catch_up(self, session_id: str, sub: _Subscription) -> None:
        if self._subs.get(session_id) is not sub:
            return
        try:
            await self.subscribe(session_id, sub.last_sent)
        except Exception:
            log.warning("could not catch session %s up from its log", session_id, exc_info=True)

    def unsubscribe(self, session_id: str) -> bool:
        sub = self._subs.pop(session_id, None)
        if sub is None:
            return False
        sub.unsubscribe()
        return True

    # -- inbound ----------------------------------------------------------------------------------------------

    def _on_notice(self, method: str, params: WireModel) -> None:
        body = params.model_dump_json(by_alias=True, exclude_none=True)
        self.send(f'{{"jsonrpc":"2.0","method":"{method}","params":{body}}}')

    async def run(self) -> None:
        writer = asyncio.get_running_loop().create_task(self._writer(), name="ws-writer")
        stop_notices = self._core.notices.subscribe(self._on_notice)
        try:
            while not self._closing:
                message = await self._ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                data = message.get("text")
                if data is None:
                    data = message.get("bytes") or b""
                self._on_frame(data)
        except WebSocketDisconnect:
            pass
        finally:
            stop_notices()
            for session_id in list(self._subs):
                self.unsubscribe(session_id)
            if self._ws.client_state == WebSocketState.CONNECTED and not self._closing:
                self._closing = True
            writer.cancel()
            try:
                await writer
            except (asyncio.CancelledError, Exception):
                pass

    def _on_frame(self, data: str | bytes) -> None:
        size = len(data.encode() if isinstance(data, str) else data)
        if size > self._limits.max_frame_bytes:
            too_large = ProtocolError(
                ErrorCode.FRAME_TOO_LARGE,
                f"Frame of {size} bytes exceeds the limit of {self._limits.max_frame_bytes} bytes; nothing in it was "
                "run. Send smaller requests (a batch can be split).",
                source=ErrorSource.SERVER,
            )
            ids, is_batch = _request_ids(data)
            if ids:
                self._send_responses([encode_error(i, too_large) for i in ids], is_batch)
            else:
                self.send(encode_error(None, too_large))
            return
        try:
            items, is_batch = self._dispatcher.parse(data)
        except ProtocolError as exc:
            self.send(encode_error(None, exc))
            return
        if self._inflight + len(items) > self._limits.max_inflight:
            overloaded = ProtocolError(
                ErrorCode.OVERLOADED,
                f"Too many requests in flight on this connection (limit {self._limits.max_inflight}); retry shortly.",
                source=ErrorSource.SERVER,
            )
            responses = [encode_error(item.id, overloaded) for item in items if item.id is not None]
            self._send_responses(responses, is_batch)
            return
        self._inflight += len(items)
        task = asyncio.get_running_loop().create_task(self._serve(items, is_batch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, items: list[Any], is_batch: bool) -> None:
        try:
            results = await asyncio.gather(*(self._answer(item) for item in items))
        finally:
            self._inflight -= len(items)
        self._send_responses([r for r in results if r is not None], is_batch)

    async def _answer(self, item: Any) -> str | None:
        if isinstance(item, Invalid):
            return encode_error(item.id, item.error)
        return await self._dispatcher.call(item, self)

    def _send_responses(self, responses: list[str], is_batch: bool) -> None:
        if not responses:
            return
        if is_batch:
            self.send("[" + ",".join(responses) + "]")
        else:
            for response in responses:
                self.send(response)


def _request_ids(data: str | bytes) -> tuple[list[Any], bool]:
    """The ids of the requests in an oversized frame, so each gets its own error; ([], False) if unreadable.

    The frame is bounded (uvicorn drops one over four times the limit), so reading it is bounded too.
    """
    try:
        parsed = json.loads(data)
    except ValueError:
        return [], False
    items = parsed if isinstance(parsed, list) else [parsed]
    ids = [
        item["id"]
        for item in items
        if isinstance(item, dict) and isinstance(item.get("id"), str | int) and not isinstance(item.get("id"), bool)
    ]
    return ids, isinstance(parsed, list)

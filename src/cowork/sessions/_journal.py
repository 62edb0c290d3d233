"""The session event log writer: write before tell, with group commit.

Every event is appended to its session's log (with the next per-session `seq`) in a committed transaction before
any subscriber sees it. Events queue up while a transaction is in flight and the next transaction writes them all,
so a stream of model deltas costs one commit per batch, not one per delta, and order is always queue order.
A caller can attach a `mutate` function that runs in the same transaction (insert a message, change an operation's
status), so state and the event announcing it are committed together.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from cowork.protocol import EventPayload, SessionEvent
from cowork.store import Connection, Database, EventRow, repos

from ._bus import EventBus

if TYPE_CHECKING:
    from ._fanout import EventFanout

__all__ = ["Journal", "Mutation"]

log = logging.getLogger(__name__)

Mutation = Callable[[Connection], None]
_MAX_BATCH = 512


@dataclass(slots=True)
class _Pending:
    session_id: str
    payload: EventPayload | None
    mutate: Mutation | None
    future: asyncio.Future[SessionEvent | None]
    ts: datetime = field(default_factory=lambda: datetime.now(UTC))


class Journal:
    """Appends events (and the state changes they announce) and then publishes them."""

    def __init__(
        self, db: Database, bus: EventBus, *, linger: float = 0.002, fanout: EventFanout | None = None
    ) -> None:
        """Args:
        db: the store.
        bus: this process's subscribers.
        linger: how long a batch waits for company when nobody waits for it.
        fanout: replicas on PostgreSQL: each batch is announced to the others in its own transaction.
        """
        self._db = db
        self._bus = bus
        self._fanout = fanout
        self._linger = linger
        self._urgent = asyncio.Event()
        self._queue: asyncio.Queue[_Pending] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._last: asyncio.Future[SessionEvent | None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="cowork-journal")

    async def stop(self) -> None:
        """Write what is queued, then stop."""
        await self.flush()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    def emit(
        self,
        session_id: str,
        payload: EventPayload | None,
        *,
        mutate: Mutation | None = None,
        urgent: bool = False,
    ) -> asyncio.Future[SessionEvent | None]:
        """Queue an event (and/or a mutation) without waiting; the future resolves once it is committed and sent.

        With `payload=None` only `mutate` runs (a state change with nothing to announce), still in queue order.
        `urgent` says someone will wait for it: it is committed at once instead of lingering for company.
        """
        future: asyncio.Future[SessionEvent | None] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(_Pending(session_id, payload, mutate, future))
        self._last = future
        if urgent:
            self._urgent.set()
        return future

    async def append(self, session_id: str, payload: EventPayload, *, mutate: Mutation | None = None) -> SessionEvent:
        """Append one event and wait until it is committed and published."""
        event = await self.emit(session_id, payload, mutate=mutate, urgent=True)
        assert event is not None
        return event

    async def write(self, session_id: str, mutate: Mutation) -> None:
        """Run a state change in queue order, with no event."""
        await self.emit(session_id, None, mutate=mutate, urgent=True)

    async def flush(self) -> None:
        """Wait until everything queued so far is committed (errors of individual items are not raised here)."""
        last = self._last
        if last is not None:
            self._urgent.set()
            await asyncio.wait([last])

    async def _run(self) -> None:
        while True:
            batch = [await self._queue.get()]
            if not self._urgent.is_set():
                # Nobody waits yet: linger a moment so what follows (the rest of a step's events, the next
                # stream deltas) shares this transaction. Readers see events at most `linger` later.
                try:
                    await asyncio.wait_for(self._urgent.wait(), self._linger)
                except TimeoutError:
                    pass
            else:
                await asyncio.sleep(0)
            self._urgent.clear()
            while len(batch) < _MAX_BATCH and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            await self._commit(batch)

    async def _commit(self, batch: list[_Pending]) -> None:
        try:
            events = await self._db.write(lambda conn: _write_batch(conn, batch, self._fanout))
        except Exception:
            if len(batch) == 1:
                log.exception("journal write failed for session %s", batch[0].session_id)
                if not batch[0].future.done():
                    batch[0].future.set_exception(
                        RuntimeError(f"could not write to the session log of {batch[0].session_id}")
                    )
                return
            # One bad mutation must not sink its neighbours: retry each item on its own.
            for item in batch:
                await self._commit([item])
            return
        for item, event in zip(batch, events, strict=True):
            if event is not None:
                self._bus.publish(event)
            if not item.future.done():
                item.future.set_result(event)


def _write_batch(conn: Connection, batch: list[_Pending], fanout: EventFanout | None) -> list[SessionEvent | None]:
    counts: defaultdict[str, int] = defaultdict(int)
    for item in batch:
        if item.payload is not None:
            counts[item.session_id] += 1
    now = datetime.now(UTC)
    next_seq = {sid: repos.sessions.allocate_seqs(conn, sid, n, now=now) - n + 1 for sid, n in counts.items()}
    rows: list[EventRow] = []
    events: list[SessionEvent | None] = []
    for item in batch:
        if item.mutate is not None:
            item.mutate(conn)
        if item.payload is None:
            events.append(None)
            continue
        seq = next_seq[item.session_id]
        next_seq[item.session_id] = seq + 1
        payload_json = item.payload.model_dump_json(by_alias=True, exclude_none=True)
        rows.append(EventRow(item.session_id, seq, item.payload.event_type, payload_json, item.ts))
        events.append(
            SessionEvent.model_construct(
                session_id=item.session_id, seq=seq, ts=item.ts, type=item.payload.event_type, payload=item.payload
            )
        )
    repos.events.insert_many(conn, rows)
    if fanout is not None:
        for sid, last in next_seq.items():
            fanout.announce(conn, sid, last - counts[sid], last - 1)
    return events

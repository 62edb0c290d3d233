"""Events across replicas: each replica announces the events it commits, and the others deliver them to their own
subscribers, read from the log (PostgreSQL only; one SQLite file has one server).

The journal adds, in the transaction that writes a batch, one `NOTIFY cowork_events` per session carrying only ids:
`replica|session|first seq|last seq`. PostgreSQL delivers it on commit. Another replica that has subscribers to that
session reads those events from the log and publishes them to its bus; one without subscribers ignores it. A
subscriber that sees a gap (an event of the other replica overtaking one of this replica's) catches up from the
log, so each event reaches each subscriber once, in seq order.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import partial

from cowork.store import Connection, Database, notify, repos

from ._bus import EventBus
from ._service import event_from_row

__all__ = ["CHANNEL", "EventFanout"]

log = logging.getLogger(__name__)

CHANNEL = "cowork_events"


class EventFanout:
    """Announces this replica's committed events and delivers the other replicas' to this replica's bus."""

    def __init__(self, db: Database, bus: EventBus, replica: str) -> None:
        self._db = db
        self._bus = bus
        self.replica = replica
        self._queue: asyncio.Queue[tuple[str, int, int]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.on_remote: Callable[[str], None] = lambda _session_id: None
        """Called with the session of each batch another replica committed, subscribed to here or not (before its
        events are delivered): what this replica caches of the session may be stale."""

    def announce(self, conn: Connection, session_id: str, first: int, last: int) -> None:
        """In the transaction that writes events `first`..`last` of a session: tell the other replicas on commit."""
        notify(conn, CHANNEL, f"{self.replica}|{session_id}|{first}|{last}")

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._deliver(), name="cowork-fanout")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    def on_notify(self, payload: str) -> None:
        """A notification on `CHANNEL` (on the loop, from the listener)."""
        try:
            replica, session_id, first, last = payload.split("|")
            span = (session_id, int(first), int(last))
        except ValueError:
            log.warning("ignored a malformed event notification: %.200r", payload)
            return
        if replica != self.replica:
            self._queue.put_nowait(span)

    def resync(self) -> None:
        """The listener reconnected, so announcements may have been missed: each subscribed session's newest event
        is delivered again. A subscriber that missed some sees the gap and reads them from the log; one that did
        not ignores it (it has that seq already)."""
        for session_id in self._bus.subscribed_sessions():
            self._queue.put_nowait((session_id, 0, 0))

    async def _deliver(self) -> None:
        # One at a time, in the order PostgreSQL delivered them (commit order), so each session's events stay in order.
        while True:
            session_id, first, last = await self._queue.get()
            self.on_remote(session_id)
            if not self._bus.subscriber_count(session_id):
                continue
            try:
                if first == 0:  # a resync: the newest event
                    session = await self._db.read(partial(repos.sessions.get, session_id=session_id))
                    first = last = session.last_seq if session is not None else 0
                    if not first:
                        continue
                rows = await self._db.read(
                    partial(repos.events.after, session_id=session_id, after_seq=first - 1, limit=last - first + 1)
                )
            except Exception:
                log.warning("could not read events %d..%d of session %s", first, last, session_id, exc_info=True)
                continue
            for row in rows:
                self._bus.publish_remote(event_from_row(row))

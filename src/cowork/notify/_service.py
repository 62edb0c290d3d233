"""The proactive engine's delivery side: candidates through the `Throttle`, deliveries to every client and the desktop.

`NotificationService.offer` is how anything in the core proposes to tell the user something (an automation's
notification step, a run waiting for approval). The throttle decides; a delivery is stored (`notifications`), sent to
every connection as `notification/delivered`, and shown on the desktop when a notification daemon is there. A
ticker closes bundling windows, brings snoozed deliveries back and, when deep work ends, releases what it held.

The dismissal history outlives restarts: `StoreHistory` keeps the recent answers in memory for the gate's
synchronous questions and writes each new one to `notification_responses`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol

from cowork.protocol import (
    ErrorCode,
    ErrorSource,
    NotificationInfo,
    NotificationResponse,
    NotificationTier,
    ProtocolError,
)
from cowork.store import Database, repos
from cowork.store.repos.notifications import NotificationRow

from ._gates import Throttle
from ._history import MemoryHistory
from ._settings import GateSettings
from ._tiers import Tier, check_tier
from ._values import Candidate, Decision, Delivery, Response, UnknownDelivery

__all__ = ["Desktop", "NotificationService", "StoreHistory"]

log = logging.getLogger(__name__)

_TICK_SECONDS = 5.0


class Desktop(Protocol):
    """Where a delivery is also shown outside Cowork's clients (`DesktopNotifier` on Linux)."""

    async def send(self, *, title: str, body: str, tier: Tier) -> int | None: ...

    async def close(self) -> None: ...


class StoreHistory(MemoryHistory):
    """The dismissal history in memory (the gate asks synchronously), each new answer also written to the store."""

    def __init__(self, db: Database) -> None:
        super().__init__()
        self._db = db
        self._writes: set[asyncio.Task[None]] = set()

    async def load(self, since: datetime) -> None:
        """Read the answers given since `since` (the gate's look-back) from the store."""
        for kind, response, at in await self._db.read(lambda conn: repos.notifications.responses_since(conn, since)):
            with contextlib.suppress(ValueError):
                self.entries.append((kind, Response(response), at))

    def record(self, kind: str, outcome: Response, at: datetime) -> None:
        super().record(kind, outcome, at)
        task = asyncio.get_running_loop().create_task(
            self._db.write(lambda conn: repos.notifications.record_response(conn, kind, str(outcome), at))
        )
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def flush(self) -> None:
        if self._writes:
            await asyncio.wait(list(self._writes))


def _info(row: NotificationRow) -> NotificationInfo:
    return NotificationInfo(
        id=row.id,
        tier=row.tier,
        kind=row.kind,
        title=row.title,
        body=row.body,
        delivered_at=row.delivered_at,
        count=row.count,
        run_id=row.run_id,
        automation_id=row.automation_id,
        response=row.response,
        desktop=row.desktop,
    )


class NotificationService:
    """Offers candidates to the throttle and delivers what it lets through; takes the user's answers."""

    def __init__(
        self,
        db: Database,
        publish: Callable[[NotificationInfo], None],
        *,
        deep_work: Callable[[], bool | str] = lambda: False,
        desktop: Desktop | None = None,
        settings: GateSettings | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._db = db
        self._publish = publish
        self._desktop = desktop
        self._clock = clock
        self._deep_work = deep_work
        self.history = StoreHistory(db)
        self.throttle = Throttle(settings, history=self.history, deep_work=lambda _now: deep_work())
        self._was_deep = False
        self._ticker: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[Any]] = set()

    async def start(self) -> None:
        await self.history.load(self._clock() - self.throttle.settings.dismissal_lookback)
        self._ticker = asyncio.get_running_loop().create_task(self._tick_forever(), name="notifications")

    async def stop(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
        if self._background:
            await asyncio.wait(list(self._background), timeout=2)
        await self.history.flush()
        if self._desktop is not None:
            await self._desktop.close()

    async def offer(
        self,
        *,
        kind: str,
        tier: NotificationTier,
        title: str,
        body: str = "",
        key: str = "",
        run_id: str | None = None,
        automation_id: str | None = None,
    ) -> Decision:
        """Put a candidate through the six gates; what goes out now is delivered before this returns."""
        now = self._clock()
        payload: dict[str, object] = {}
        if run_id is not None:
            payload["runId"] = run_id
        if automation_id is not None:
            payload["automationId"] = automation_id
        candidate = Candidate(kind=kind, tier=tier, title=title, body=body, created_at=now, key=key, payload=payload)
        decision = self.throttle.offer(candidate, now)
        if decision.delivery is not None:
            await self._deliver(decision.delivery)
        return decision

    async def tick(self) -> list[Delivery]:
        """Close bundling windows, wake snoozed deliveries, release what deep work held (when it ended)."""
        now = self._clock()
        deliveries = list(self.throttle.due(now))
        deep = bool(self._deep_work())
        if self._was_deep and not deep:
            deliveries += [d.delivery for d in self.throttle.release(now) if d.delivery is not None]
        self._was_deep = deep
        for delivery in deliveries:
            await self._deliver(delivery)
        return deliveries

    async def _tick_forever(self) -> None:
        while True:
            await asyncio.sleep(_TICK_SECONDS)
            try:
                await self.tick()
            except Exception:
                log.exception("delivering notifications failed")

    async def _deliver(self, delivery: Delivery) -> None:
        lead = delivery.candidates[0].payload
        row = NotificationRow(
            id=delivery.id,
            kind=delivery.kind,
            tier=delivery.tier,
            title=delivery.title,
            body=delivery.body,
            delivered_at=delivery.delivered_at,
            count=len(delivery.candidates),
            run_id=lead.get("runId") if isinstance(lead.get("runId"), str) else None,  # type: ignore[arg-type]
            automation_id=lead.get("automationId") if isinstance(lead.get("automationId"), str) else None,  # type: ignore[arg-type]
            response=None,
            responded_at=None,
            desktop=False,
        )
        await self._db.write(lambda conn: repos.notifications.insert(conn, row))
        info = _info(row)
        self._publish(info)
        if self._desktop is not None:
            task = asyncio.get_running_loop().create_task(self._show_on_desktop(row))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _show_on_desktop(self, row: NotificationRow) -> None:
        assert self._desktop is not None
        try:
            shown = await self._desktop.send(title=row.title, body=row.body, tier=check_tier(row.tier))
        except Exception:
            log.debug("desktop notification failed", exc_info=True)
            return
        if shown is not None:
            await self._db.write(lambda conn: repos.notifications.set_desktop(conn, row.id))

    async def respond(
        self, notification_id: str, response: NotificationResponse, *, snooze_minutes: int | None = None
    ) -> NotificationInfo:
        """Take the user's answer: it is kept, and teaches the gates (dismissals, cooldown, snooze).

        Raises:
            ProtocolError: `notification_not_found`.
        """
        now = self._clock()
        row = await self._db.read(lambda conn: repos.notifications.get(conn, notification_id))
        if row is None:
            raise ProtocolError(
                ErrorCode.NOTIFICATION_NOT_FOUND,
                f"No notification {notification_id!r}.",
                source=ErrorSource.SERVER,
            )
        try:
            self.throttle.respond(
                notification_id, response, now, snooze_minutes=snooze_minutes if response == "snooze" else None
            )
        except UnknownDelivery:
            # Delivered before a restart, or answered already: the answer still counts for its kind.
            self.history.record(row.kind, Response(response), now)
        await self._db.write(lambda conn: repos.notifications.set_response(conn, notification_id, response, now))
        updated = await self._db.read(lambda conn: repos.notifications.get(conn, notification_id))
        assert updated is not None
        return _info(updated)

    async def settle(self, run_id: str, kind: str = "automation_approval") -> None:
        """The user answered a run's wait where they were (a client, the CLI): its unanswered approval notifications
        count as accepted, so no client keeps offering them. Not a gate answer: the history does not learn from it."""
        now = self._clock()
        await self._db.write(lambda conn: repos.notifications.settle(conn, run_id, kind, now))

    async def get(self, notification_id: str) -> NotificationInfo | None:
        row = await self._db.read(lambda conn: repos.notifications.get(conn, notification_id))
        return _info(row) if row is not None else None

    async def recent(self, *, limit: int = 50, unanswered: bool = False) -> list[NotificationInfo]:
        rows = await self._db.read(lambda conn: repos.notifications.recent(conn, limit=limit, unanswered=unanswered))
        return [_info(row) for row in rows]

"""Replicas on PostgreSQL: which replica runs each operation (leases), taking over a dead replica's operations
(failover), and passing a request about an operation to the replica running it (forwarding).

A lease is a row (`operation_leases`) naming a replica and an expiry. It is taken in the transaction that records a
new running operation, taken again before a parked or interrupted one runs or is answered, renewed every third of
its length while the operation runs, and deleted when it stops. A replica that dies stops renewing; once its leases
expire, the next sweep of any other replica takes each operation over by the crash-recovery rules: the operation
becomes `interrupted` (its started calls interrupted, with an event), and a top-level one is resumed, so a call with
side effects asks before it runs again and nothing is silently re-run.

On a SQLite file (one server) all of this is off: every check answers at once without touching the store.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial

from cowork.protocol import ErrorCode, ErrorSource, ProtocolError
from cowork.store import Connection, Database, notify, repos

__all__ = ["FORWARD_CHANNEL", "Leases"]

log = logging.getLogger(__name__)

FORWARD_CHANNEL = "cowork_forward"
LEADER = "leader:triggers"
"""The lease whose holder watches for outside triggers among replicas."""
_FORWARD_WAIT = 15.0


def _log_failure(done: asyncio.Future[None]) -> None:
    if not done.cancelled() and done.exception() is not None:
        log.warning("could not release a lease (it expires by itself)", exc_info=done.exception())


class Leases:
    """This replica's holds on the operations it runs, the sweep for orphaned ones, and forwarding."""

    def __init__(self, db: Database, *, replica: str, ttl: float, enabled: bool) -> None:
        self._db = db
        self.replica = replica
        self.ttl = ttl
        self.enabled = enabled
        self._task: asyncio.Task[None] | None = None
        self._handlers: dict[str, Callable[[dict[str, object]], Awaitable[None]]] = {}
        self._forwarded: set[asyncio.Task[None]] = set()
        self._held: set[str] = set()
        """What else this replica holds and renews besides operations (automation runs)."""
        self._sweeps: list[Callable[[], Awaitable[None]]] = []
        self.leader = not enabled
        """Whether this replica is the one that watches for outside triggers (files, MCP notifications), so each
        fires one run, not one per replica. Always on one server; among replicas, the holder of `LEADER`."""

    # -- holding ----------------------------------------------------------------------------------------------

    def record(self, conn: Connection, operation_id: str) -> None:
        """In the transaction that records a running operation: this replica holds it from the start."""
        if self.enabled:
            repos.leases.acquire(conn, operation_id, self.replica, now=datetime.now(UTC), ttl=self.ttl)

    async def take(self, operation_id: str) -> bool:
        """Hold the operation (or extend the hold); False when another replica holds it."""
        if not self.enabled:
            return True
        now = datetime.now(UTC)
        return await self._db.write(
            lambda conn: repos.leases.acquire(conn, operation_id, self.replica, now=now, ttl=self.ttl)
        )

    async def drop(self, operation_id: str) -> None:
        if self.enabled:
            await self._db.write(lambda conn: repos.leases.release(conn, operation_id, self.replica))

    def drop_soon(self, operation_id: str) -> None:
        """Let go of the operation without waiting: queued before any later write (a new `take` among them), so an
        operation that stops and at once runs again is held, not released after."""
        if self.enabled:
            done = self._db.write_soon(lambda conn: repos.leases.release(conn, operation_id, self.replica))
            done.add_done_callback(_log_failure)

    def hold(self, key: str) -> None:
        """Renew the lease on `key` (taken with `take`) until `let_go`."""
        if self.enabled:
            self._held.add(key)

    def let_go(self, key: str) -> None:
        if self.enabled:
            self._held.discard(key)
            self.drop_soon(key)

    async def expired(self) -> list[str]:
        """What is leased by a replica that stopped renewing (its lease has expired)."""
        if not self.enabled:
            return []
        now = datetime.now(UTC)
        return await self._db.read(lambda conn: repos.leases.expired(conn, now=now))

    def add_sweep(self, sweep: Callable[[], Awaitable[None]]) -> None:
        """Run `sweep` at each sweep too (automation runs a dead replica left)."""
        self._sweeps.append(sweep)

    async def holder(self, operation_id: str) -> str | None:
        """The other replica that holds the operation now (None when nobody else does)."""
        if not self.enabled:
            return None
        now = datetime.now(UTC)
        owner = await self._db.read(lambda conn: repos.leases.holder(conn, operation_id, now=now))
        return owner if owner != self.replica else None

    async def held_elsewhere(self, operation_ids: list[str]) -> set[str]:
        if not self.enabled or not operation_ids:
            return set()
        now = datetime.now(UTC)
        return await self._db.read(lambda conn: repos.leases.held_elsewhere(conn, operation_ids, self.replica, now=now))

    # -- renewing and sweeping --------------------------------------------------------------------------------

    def start(
        self,
        running: Callable[[], list[str]],
        orphans: Callable[[], Awaitable[list[str]]],
        take_over: Callable[[str], Awaitable[None]],
    ) -> None:
        """Renew the leases of what `running` names, and take over what `orphans` finds, until `stop`."""
        if self.enabled and self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._loop(running, orphans, take_over), name="cowork-leases"
            )

    async def stop(self) -> None:
        if self.enabled and self.leader:
            try:
                await self.drop(LEADER)  # another replica leads at its next beat, not after the lease runs out
            except Exception:
                log.warning("could not give up the trigger leadership (it expires by itself)", exc_info=True)
            self.leader = False
        for task in (self._task, *self._forwarded):
            if task is not None:
                task.cancel()
                try:
                    await task
                except (asyncio.CancelledError, Exception):
                    pass
        self._task = None

    async def _loop(
        self,
        running: Callable[[], list[str]],
        orphans: Callable[[], Awaitable[list[str]]],
        take_over: Callable[[str], Awaitable[None]],
    ) -> None:
        beat = self.ttl / 3
        sweep_every = 2  # sweep every other beat: orphans are found within about ttl + ttl / 1.5
        beats = 0
        while True:
            await asyncio.sleep(beat)
            beats += 1
            await self.lead()
            try:
                held = running() + sorted(self._held)
                if held:
                    now = datetime.now(UTC)
                    lost = await self._db.write(
                        partial(repos.leases.renew, owner=self.replica, operation_ids=held, now=now, ttl=self.ttl)
                    )
                    for operation_id in lost:
                        log.error(
                            "lost the lease on operation %s (this replica was stalled for longer than %.1f s); "
                            "another replica may run it too",
                            operation_id,
                            self.ttl,
                        )
                if beats % sweep_every == 0:
                    for operation_id in await orphans():
                        await take_over(operation_id)
                    for sweep in self._sweeps:
                        await sweep()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("renewing leases or sweeping for orphaned operations failed", exc_info=True)

    async def lead(self) -> None:
        """Take (or keep) the trigger leadership if nobody else holds it."""
        if not self.enabled:
            return
        try:
            leader = await self.take(LEADER)
        except Exception:
            log.warning("could not take or renew the trigger leadership", exc_info=True)
            leader = False
        if leader != self.leader:
            log.info(
                "this replica %s the one watching files and MCP notifications", "is now" if leader else "is no longer"
            )
        self.leader = leader

    # -- forwarding -------------------------------------------------------------------------------------------

    def handle(self, kind: str, handler: Callable[[dict[str, object]], Awaitable[None]]) -> None:
        """What to do with a `kind` request forwarded to this replica."""
        self._handlers[kind] = handler

    async def forward(self, to: str, kind: str, params: dict[str, object], done: Callable[[], Awaitable[bool]]) -> None:
        """Ask replica `to` to act on a request about an operation it runs, and wait until `done` says it has.

        Raises:
            ProtocolError: `internal_error` when the replica did not act within 15 s (it may have died; once its
                lease expires, another replica takes the operation over and the request can be sent again).
        """
        payload = json.dumps({"to": to, "kind": kind, "params": params})
        try:
            await self._db.write(lambda conn: notify(conn, FORWARD_CHANNEL, payload))
        except ValueError as exc:
            raise ProtocolError(
                ErrorCode.INVALID_PARAMS, f"{exc}; shorten the message.", source=ErrorSource.RUNTIME
            ) from None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _FORWARD_WAIT
        while loop.time() < deadline:
            if await done():
                return
            await asyncio.sleep(0.05)
        raise ProtocolError(
            ErrorCode.INTERNAL_ERROR,
            f"The replica running this operation ({to}) did not act on the {kind} within {_FORWARD_WAIT:.0f} s. If it "
            "stopped, another replica takes the operation over within the lease time; try again then.",
            source=ErrorSource.RUNTIME,
        )

    def on_notify(self, payload: str) -> None:
        """A notification on `FORWARD_CHANNEL` (on the loop, from the listener)."""
        try:
            message = json.loads(payload)
            to, kind, params = message["to"], message["kind"], message["params"]
        except (ValueError, KeyError, TypeError):
            log.warning("ignored a malformed forwarded request: %.200r", payload)
            return
        handler = self._handlers.get(kind)
        if to != self.replica or handler is None or not isinstance(params, dict):
            return
        task = asyncio.get_running_loop().create_task(self._run_forwarded(kind, handler, params))
        self._forwarded.add(task)
        task.add_done_callback(self._forwarded.discard)

    @staticmethod
    async def _run_forwarded(
        kind: str, handler: Callable[[dict[str, object]], Awaitable[None]], params: dict[str, object]
    ) -> None:
        try:
            await handler(params)
        except ProtocolError as exc:
            log.info("a forwarded %s was refused: %s", kind, exc)
        except Exception:
            log.exception("a forwarded %s failed", kind)

"""Replicas on PostgreSQL: the pushed notices every replica's clients should see, told to the other replicas.

Session events travel by `cowork.sessions` (`EventFanout`); this carries the rest a user would miss on another
replica than the one where it happened:

- `automation/changed` (its params: a deleted automation cannot be read back); the others also read their flows
  again (schedules, flow tools, triggers);
- `automation/run` and `notification/delivered`, as ids only (a run's steps can be larger than a `NOTIFY` payload
  may be): the others read the item from the shared store, as it stands, and push that.

Each message is `NOTIFY cowork_changed` with `{"replica", "method", "params" | "id"}`. What arrives is read and
pushed one at a time, in order, so a client never gets an older state of a run after a newer one. A desktop
notification stays with the replica that delivered it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from cowork.mcp import Notices
from cowork.protocol import AutomationChanged, ProtocolError, WireModel
from cowork.store import Database, notify

__all__ = ["CHANNEL", "NoticeRelay"]

log = logging.getLogger(__name__)

CHANNEL = "cowork_changed"
_CHANGED = "automation/changed"

Reader = Callable[[str], Awaitable[WireModel | None]]
"""Reads what a relayed id names from the store (None when it is gone)."""


def _log_failure(done: asyncio.Future[None]) -> None:
    if not done.cancelled() and done.exception() is not None:
        log.warning("could not tell the other replicas of a change", exc_info=done.exception())


class NoticeRelay:
    """Tells the other replicas of this one's notices, and pushes theirs to this one's clients."""

    def __init__(
        self,
        db: Database,
        notices: Notices,
        replica: str,
        *,
        reload: Callable[[], Awaitable[None]],
        readers: Mapping[str, Reader],
    ) -> None:
        self._db = db
        self._notices = notices
        self._replica = replica
        self._reload = reload
        self._readers = dict(readers)
        self._inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._relaying = False

    def start(self) -> None:
        self._unsubscribe = self._notices.subscribe(self._tell)
        self._task = asyncio.get_running_loop().create_task(self._push_forever(), name="cowork-relay")

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait([self._task])
            self._task = None

    def _tell(self, method: str, params: WireModel) -> None:
        if self._relaying or (method != _CHANGED and method not in self._readers):
            return  # what came from another replica is not told back; what is not relayed stays here
        message: dict[str, Any] = {"replica": self._replica, "method": method}
        if method == _CHANGED:
            message["params"] = params.model_dump(mode="json", by_alias=True)
        elif isinstance(item_id := getattr(params, "id", None), str):
            message["id"] = item_id
        else:
            return
        body = json.dumps(message)
        self._db.write_soon(lambda conn: notify(conn, CHANNEL, body)).add_done_callback(_log_failure)

    def on_notify(self, payload: str) -> None:
        """A message on `CHANNEL` (on the loop)."""
        try:
            message = json.loads(payload)
            method, replica = message["method"], message["replica"]
            if not isinstance(method, str) or not isinstance(replica, str):
                raise TypeError("the method and the replica are strings")
        except (ValueError, KeyError, TypeError):
            log.warning("ignored a malformed relayed notice: %.200r", payload)
            return
        if replica != self._replica and (method == _CHANGED or method in self._readers):
            self._inbox.put_nowait(message)

    async def _push_forever(self) -> None:
        while True:
            message = await self._inbox.get()
            method = message["method"]
            try:
                params = await self._read(method, message)
            except (ValueError, KeyError, TypeError):
                log.warning("ignored a malformed relayed %s: %.200r", method, message)
                continue
            except Exception:
                log.warning("could not read what another replica's %s named", method, exc_info=True)
                continue
            if params is None:
                continue
            self._relaying = True
            try:
                self._notices.publish(method, params)
            finally:
                self._relaying = False

    async def _read(self, method: str, message: dict[str, Any]) -> WireModel | None:
        if method == _CHANGED:
            changed = AutomationChanged.model_validate(message["params"])
            try:
                await self._reload()
            except Exception:
                log.warning("could not read the automations again after another replica changed one", exc_info=True)
            return changed
        item_id = message["id"]
        if not isinstance(item_id, str):
            raise TypeError("the id is not a string")
        try:
            return await self._readers[method](item_id)
        except ProtocolError:
            return None  # gone meanwhile (deleted)

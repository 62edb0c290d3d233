"""Spend per window and per request, kept in memory between reads of the usage ledger.

The budget check reads spend before every model call. Summing the ledger each time cost a query over every call of
the month (14 % of the server's CPU with 50 sessions at once, growing through the month). Here the sums are read
once, with the highest row id they include; each call this process records afterwards is added as its row is
written (in the writer's transaction, so its id is known); a request's own spend is read once, on its first call.

Exact for this process's writes, whenever they commit: a read's sums cover the rows up to its highest id, the
noted rows above it are added, and a row noted while a read was under way is counted by one or the other, never
both. A row whose transaction rolled back stays counted until the next read (spend is over-, never under-stated).
The sums are read again when a day, week or month starts, and after `refresh_seconds`, which bounds how late
calls recorded by another process (another server on the same store) are seen.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

__all__ = ["Noted", "Tally"]


@dataclass(frozen=True, slots=True)
class Noted:
    """A call recorded since the sums were read."""

    row_id: int
    created_at: datetime
    root_operation_id: str
    cost_usd: float


class Tally:
    """The sums of the last read, plus what was noted since; thread-safe (notes come from the writer's thread)."""

    def __init__(self, *, refresh_seconds: float = 5.0, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.Lock()
        self._refresh = refresh_seconds
        self._monotonic = monotonic
        self._starts: dict[str, datetime] | None = None
        self._sums: dict[str, float] = {}
        self._up_to = 0
        """The highest row id the sums include."""
        self._read_at = 0.0
        self._requests: dict[str, float] = {}
        """Spend by request (root operation id), up to `_up_to`."""
        self._noted: dict[int, Noted] = {}
        """The calls noted since, with ids above `_up_to`, and their sums (kept as they are noted)."""
        self._noted_sums: dict[str, float] = {}
        self._noted_requests: dict[str, float] = {}

    def stale(self, starts: dict[str, datetime]) -> bool:
        """Whether the sums must be read again: never read, a window started since, or read too long ago."""
        with self._lock:
            return (
                self._starts != starts
                or self._monotonic() - self._read_at > self._refresh
                or len(self._requests) > 10_000
            )

    def up_to(self) -> int:
        with self._lock:
            return self._up_to

    def knows(self, root_operation_id: str) -> bool:
        with self._lock:
            return root_operation_id in self._requests

    def reset(
        self, starts: dict[str, datetime], sums: dict[str, float], up_to: int, requests: dict[str, float]
    ) -> None:
        """The sums of a fresh read (covering rows up to id `up_to`), and the requests read with them."""
        with self._lock:
            self._starts, self._sums, self._up_to = dict(starts), dict(sums), up_to
            self._read_at = self._monotonic()
            self._requests = dict(requests)
            kept = [noted for row_id, noted in self._noted.items() if row_id > up_to]
            self._noted, self._noted_sums, self._noted_requests = {}, dict.fromkeys(starts, 0.0), {}
            for noted in kept:
                self._add(noted)

    def add_request(self, root_operation_id: str, spent: float, up_to: int) -> None:
        """A request's spend over the rows up to `up_to` (ignored when the sums were read again meanwhile)."""
        with self._lock:
            if up_to == self._up_to:
                self._requests[root_operation_id] = spent

    def note(self, noted: Noted) -> None:
        """A call recorded by this process (by row id: a write tried again is counted once)."""
        with self._lock:
            if noted.row_id in self._noted or noted.row_id <= self._up_to:
                return
            if self._starts is None:  # before the first read: summed once it is done (if it does not hold it)
                self._noted[noted.row_id] = noted
                return
            self._add(noted)

    def _add(self, noted: Noted) -> None:
        assert self._starts is not None
        self._noted[noted.row_id] = noted
        for name, start in self._starts.items():
            if noted.created_at >= start:
                self._noted_sums[name] += noted.cost_usd
        root = noted.root_operation_id
        self._noted_requests[root] = self._noted_requests.get(root, 0.0) + noted.cost_usd

    def spent(self, root_operation_id: str | None) -> dict[str, float]:
        """Spend since each window's start and, under `"interaction"`, by the request (0 without one)."""
        with self._lock:
            assert self._starts is not None, "read the sums first"
            totals = {name: spent + self._noted_sums[name] for name, spent in self._sums.items()}
            request = 0.0
            if root_operation_id is not None:
                request = self._requests.get(root_operation_id, 0.0) + self._noted_requests.get(root_operation_id, 0.0)
            totals["interaction"] = request
            return totals

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
            self._noted = {row_id: noted for row_id, noted in self._noted.items() if row_id > up_to}

    def add_request(self, root_operation_id: str, spent: float, up_to: int) -> None:
        """A request's spend over the rows up to `up_to` (ignored when the sums were read again meanwhile)."""
        with self._lock:
            if up_to == self._up_to:
                self._requests[root_operation_id] = spent

    def note(self, noted: Noted) -> None:
        """A call recorded by this process (by row id: a write tried again is counted once)."""
        with self._lock:
            self._noted[noted.row_id] = noted

    def spent(self, root_operation_id: str | None) -> dict[str, float]:
        """Spend since each window's start and, under `"interaction"`, by the request (0 without one)."""
        with self._lock:
            assert self._starts is not None, "read the sums first"
            totals = dict(self._sums)
            request = self._requests.get(root_operation_id, 0.0) if root_operation_id is not None else 0.0
            for noted in self._noted.values():
                if noted.row_id <= self._up_to:
                    continue
                for name, start in self._starts.items():
                    if noted.created_at >= start:
                        totals[name] += noted.cost_usd
                if noted.root_operation_id == root_operation_id:
                    request += noted.cost_usd
            totals["interaction"] = request
            return totals

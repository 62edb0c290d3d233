"""Dismissal history: what the user did with each kind of notification, which the dismissal gate learns from.

The gate asks only two questions, so the store can answer them with one indexed query; the seed keeps this history
in the database (it outlives the process), while delivery counts and cooldowns stay in memory.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from ._values import Response

__all__ = ["DismissalHistory", "MemoryHistory"]


class DismissalHistory(Protocol):
    """Where responses are remembered; the server backs it with the store, tests with `MemoryHistory`."""

    def record(self, kind: str, outcome: Response, at: datetime) -> None:
        """Remember that the user answered a delivery of `kind` with `outcome` at `at`."""
        ...

    def counts(self, kind: str, since: datetime) -> tuple[int, int]:
        """(dismissals, engagements) of `kind` at or after `since`; accept and expand both count as engagement."""
        ...


class MemoryHistory:
    """A `DismissalHistory` in a list: for tests, and for a throttle that need not remember across restarts."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, Response, datetime]] = []

    def record(self, kind: str, outcome: Response, at: datetime) -> None:
        self.entries.append((kind, Response(outcome), at))

    def counts(self, kind: str, since: datetime) -> tuple[int, int]:
        outcomes = [outcome for k, outcome, at in self.entries if k == kind and at >= since]
        dismissed = sum(outcome is Response.DISMISS for outcome in outcomes)
        engaged = sum(outcome in {Response.ACCEPT, Response.EXPAND} for outcome in outcomes)
        return dismissed, engaged

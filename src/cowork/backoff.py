"""Exponential backoff: the one delay rule for retrying model requests and reconnecting MCP servers."""

from __future__ import annotations

import random

__all__ = ["backoff_delay"]


def backoff_delay(attempt: int, *, base: float, maximum: float, jitter: bool = False) -> float:
    """Seconds to wait before retry number `attempt` (0 for the first retry): `base` doubled each time, capped.

    With `jitter`, the delay is drawn from the upper half of that range, so clients that failed together do not
    retry together.
    """
    delay = min(maximum, base * 2.0 ** max(attempt, 0))
    return delay * (0.5 + random.random() / 2) if jitter else delay

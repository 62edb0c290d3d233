"""A gate for scripted steps: the mock LLM (in its own thread) waits at it until the test opens it.

So a test can act while a model request is in flight (steer it, cancel it) without sleeping and hoping: it awaits
`reached()`, acts, then calls `open()`.
"""

from __future__ import annotations

import asyncio
import threading

__all__ = ["Gate"]


class Gate:
    """Crossed by a scripted step in the mock's thread; opened by the test in its own loop."""

    def __init__(self, *, within: float = 20) -> None:
        self._reached = threading.Event()
        self._open = threading.Event()
        self._within = within

    async def cross(self) -> None:
        """Called by the script: say the step got here, then wait (without blocking the mock's loop) for `open`."""
        self._reached.set()
        if not await asyncio.to_thread(self._open.wait, self._within):
            raise TimeoutError("the test never opened the gate")

    async def reached(self) -> None:
        """Wait until a scripted step waits at the gate.

        Raises:
            TimeoutError: no step got there in time.
        """
        if not await asyncio.to_thread(self._reached.wait, self._within):
            raise TimeoutError("no scripted step reached the gate")

    def open(self) -> None:
        """Let the waiting step (and any later one) through."""
        self._open.set()

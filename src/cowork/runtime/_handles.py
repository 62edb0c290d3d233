"""What the runtime keeps in memory about operations in play: a handle per operation, and recent thread histories."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ._state import OperationState

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

    from ._executors import OperationRunner

__all__ = ["CachedThread", "Handle", "ThreadCache"]

_HISTORY_CACHE = 64


@dataclass
class Handle:
    """An operation in play: its runner, its task while it runs, and a future that resolves when it ends."""

    runner: OperationRunner
    done: asyncio.Future[None]
    task: asyncio.Task[None] | None = None
    children: set[str] = field(default_factory=set)
    spawning: int = 0
    """Sub-agents being started or run for this operation right now (the concurrency limit counts these)."""
    leased: bool = False
    """Replicas: its lease was taken in the transaction that recorded it, so its first run need not take it again."""

    @property
    def state(self) -> OperationState:
        return self.runner.state

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()


@dataclass(frozen=True)
class CachedThread:
    """A session's model-facing history as its last finished turn left it (saves reading it back)."""

    messages: list[ModelMessage]
    positions: list[int]
    next_position: int


class ThreadCache:
    """The histories of the sessions whose last turn finished, most recent last, at most 64."""

    def __init__(self) -> None:
        self._threads: OrderedDict[str, CachedThread] = OrderedDict()

    def keep(self, state: OperationState) -> None:
        self._threads[state.thread_id] = CachedThread(list(state.messages), list(state.positions), state.next_position)
        while len(self._threads) > _HISTORY_CACHE:
            self._threads.popitem(last=False)

    def get(self, thread_id: str) -> CachedThread | None:
        return self._threads.get(thread_id)

    def take(self, thread_id: str) -> CachedThread | None:
        """The cached history, removed: the caller's operation is about to change it."""
        return self._threads.pop(thread_id, None)

    def drop(self, thread_id: str) -> None:
        self._threads.pop(thread_id, None)

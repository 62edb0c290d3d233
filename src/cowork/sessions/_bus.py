"""In-process fan-out of committed session events to subscribers (connections, tests)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import TypeAlias

from cowork.protocol import SessionEvent

__all__ = ["EventBus", "Subscriber"]

Subscriber: TypeAlias = Callable[[SessionEvent], None]
"""Called on the event loop for each event, in seq order. Must not block: enqueue and return."""


class EventBus:
    """Delivers each committed event to the subscribers of its session, in order."""

    def __init__(self) -> None:
        self._subscribers: defaultdict[str, list[Subscriber]] = defaultdict(list)
        self._everything: list[Subscriber] = []

    def subscribe(self, session_id: str, subscriber: Subscriber) -> Callable[[], None]:
        """Register `subscriber`; returns the function that unregisters it."""
        self._subscribers[session_id].append(subscriber)

        def unsubscribe() -> None:
            subs = self._subscribers.get(session_id)
            if subs and subscriber in subs:
                subs.remove(subscriber)
                if not subs:
                    del self._subscribers[session_id]

        return unsubscribe

    def subscribe_all(self, subscriber: Subscriber) -> Callable[[], None]:
        """Register `subscriber` for every session's events (automation triggers); returns the unsubscriber."""
        self._everything.append(subscriber)

        def unsubscribe() -> None:
            if subscriber in self._everything:
                self._everything.remove(subscriber)

        return unsubscribe

    def publish(self, event: SessionEvent) -> None:
        for subscriber in tuple(self._subscribers.get(event.session_id, ())):
            subscriber(event)
        for subscriber in tuple(self._everything):
            subscriber(event)

    def publish_remote(self, event: SessionEvent) -> None:
        """An event another replica committed: to this session's subscribers only (what reacts to every event, the
        automation triggers, runs on the replica where it happened)."""
        for subscriber in tuple(self._subscribers.get(event.session_id, ())):
            subscriber(event)

    def subscribed_sessions(self) -> list[str]:
        return list(self._subscribers)

    def subscriber_count(self, session_id: str) -> int:
        return len(self._subscribers.get(session_id, ()))

"""Notifications for every connected client (not tied to a session): `mcp/status`, `mcp/install`."""

from __future__ import annotations

import logging
from collections.abc import Callable

from cowork.protocol import WireModel

__all__ = ["Notices"]

log = logging.getLogger(__name__)

Listener = Callable[[str, WireModel], None]


class Notices:
    """A tiny broadcast hub: the server registers one listener per WebSocket connection."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def publish(self, method: str, params: WireModel) -> None:
        for listener in list(self._listeners):
            try:
                listener(method, params)
            except Exception:
                log.exception("a %s listener failed", method)

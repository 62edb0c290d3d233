"""PostgreSQL `LISTEN`: what other replicas announce (committed events, forwarded requests), on a thread of its own.

A dedicated autocommit connection listens on the given channels and hands each notification to a callback on the
event loop. If the connection drops it reconnects (with a pause that grows to a few seconds) and calls `on_reconnect`,
since anything announced meanwhile was missed; listeners then read what they need from the store.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Sequence

from sqlalchemy import text
from sqlalchemy.engine import Connection

__all__ = ["Listener", "notify"]

log = logging.getLogger(__name__)

_MAX_PAYLOAD = 7900
"""PostgreSQL refuses a notification payload of 8000 bytes or more."""


def notify(conn: Connection, channel: str, payload: str) -> None:
    """Announce `payload` on `channel` when the caller's transaction commits (never, if it rolls back).

    Raises:
        ValueError: the payload is too long for a notification.
    """
    if len(payload.encode()) > _MAX_PAYLOAD:
        raise ValueError(f"a notification carries at most {_MAX_PAYLOAD} bytes")
    conn.execute(text("SELECT pg_notify(:channel, :payload)"), {"channel": channel, "payload": payload})


def libpq_url(url: str) -> str:
    """The URL psycopg itself takes (SQLAlchemy's driver suffix dropped)."""
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


class Listener:
    """Listens on channels and calls `on_notify(channel, payload)` on the loop for each notification."""

    def __init__(
        self,
        url: str,
        channels: Sequence[str],
        on_notify: Callable[[str, str], None],
        *,
        on_reconnect: Callable[[], None] = lambda: None,
    ) -> None:
        self._url = libpq_url(url)
        self._channels = tuple(channels)
        self._on_notify = on_notify
        self._on_reconnect = on_reconnect
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()

    async def start(self) -> None:
        """Start listening; returns once the channels are listened to (or the first attempt failed)."""
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._run, name="cowork-listen", daemon=True)
        self._thread.start()
        await asyncio.to_thread(self._ready.wait, 10)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _run(self) -> None:
        import psycopg  # only replicas on PostgreSQL listen

        pause = 0.2
        first = True
        while not self._stop.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True, connect_timeout=5) as conn:
                    for channel in self._channels:
                        conn.execute(f'LISTEN "{channel}"')
                    self._ready.set()
                    if not first:
                        self._call(self._on_reconnect)
                    first, pause = False, 0.2
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=0.2):
                            self._call(self._on_notify, note.channel, note.payload)
            except psycopg.Error as exc:
                self._ready.set()
                if self._stop.is_set():
                    return
                log.warning("listening for other replicas failed (%s); reconnecting in %.1f s", exc, pause)
                self._stop.wait(pause)
                pause = min(pause * 2, 5.0)

    def _call(self, fn: Callable[..., None], *args: str) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop closed meanwhile
            pass

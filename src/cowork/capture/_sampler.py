"""The thread a capture source runs in: a look at the active window, then a wait for a change, until stopped.

An X11 connection blocks, and waiting on it for window changes must not hold the event loop or a worker of the
bounded pool for ever; so each source gets one daemon thread, which only samples and posts to the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable

from ._source import Source, SourceUnavailable, Window

__all__ = ["SamplerThread"]

log = logging.getLogger(__name__)


class SamplerThread:
    """Samples the source until stopped: a look at the window, then a wait for a change (or `poll` seconds)."""

    def __init__(
        self,
        source: Source,
        loop: asyncio.AbstractEventLoop,
        on_sample: Callable[[SamplerThread, Window | None, float | None], None],
        on_failure: Callable[[SamplerThread, str], None],
        poll: float,
    ) -> None:
        self.source = source
        self._loop = loop
        self._on_sample = on_sample
        self._on_failure = on_failure
        self._poll = poll
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cowork-capture", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        with contextlib.suppress(Exception):
            self.source.close()
        self._thread.join(timeout=5)

    def _post(self, callback: Callable[..., None], *args: object) -> None:
        if self._stopped.is_set():
            return
        with contextlib.suppress(RuntimeError):  # the loop closed first
            self._loop.call_soon_threadsafe(callback, self, *args)

    def _run(self) -> None:
        try:
            self.source.open()
            while not self._stopped.is_set():
                window = self.source.active_window()
                idle = self.source.idle_seconds()
                self._post(self._on_sample, window, idle)
                self.source.wait(self._poll)
        except SourceUnavailable as error:
            self._post(self._on_failure, str(error))
        except Exception as error:  # a source must never take the server down; the user is told
            log.exception("the %s capture source failed", self.source.name)
            self._post(self._on_failure, f"The {self.source.name} source failed: {type(error).__name__}: {error}")
        finally:
            with contextlib.suppress(Exception):
                self.source.close()

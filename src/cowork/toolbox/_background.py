"""Installing the toolbox in the background of a running server: once, in a thread of its own, stoppable."""

from __future__ import annotations

import enum
import logging
import threading
import time

import anyio.to_thread

from cowork.config import ToolboxConfig

from ._toolbox import Progress, Toolbox, ToolboxCancelled, ToolboxError

__all__ = ["InstallState", "ToolboxInstaller"]

log = logging.getLogger(__name__)


class InstallState(enum.Enum):
    IDLE = "idle"
    INSTALLING = "installing"
    DONE = "done"
    FAILED = "failed"
    STOPPED = "stopped"


_TRANSITIONS: dict[InstallState, set[InstallState]] = {
    InstallState.IDLE: {InstallState.INSTALLING, InstallState.STOPPED},
    InstallState.INSTALLING: {InstallState.DONE, InstallState.FAILED, InstallState.STOPPED},
    InstallState.DONE: set(),
    InstallState.FAILED: set(),
    InstallState.STOPPED: set(),
}


class ToolboxInstaller:
    """Builds the toolbox after start-up when `tools.toolbox.install` is `background`, and remembers how it went.

    A thread of its own, not a worker of the bounded pool: a build waits minutes on `uv`, and must hold up
    nothing else. `stop` kills the step running and removes the half-built environment.
    """

    def __init__(self, toolbox: Toolbox, settings: ToolboxConfig) -> None:
        self.toolbox = toolbox
        self.settings = settings
        self.state = InstallState.IDLE
        self.error: str | None = None
        """Why the last install failed."""
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()

    @property
    def wanted(self) -> bool:
        return self.settings.enabled and self.settings.install == "background"

    def start(self) -> None:
        """Start the background install unless it is not wanted, already ran, or the toolbox is ready."""
        if not self.wanted or self.state is not InstallState.IDLE:
            return
        if self.toolbox.status().state == "ready":
            return
        self._move(InstallState.INSTALLING)
        self._thread = threading.Thread(target=self._run, name="cowork-toolbox", daemon=True)
        self._thread.start()

    async def stop(self, wait: float = 5.0) -> None:
        """Stop an install under way (its `uv` is killed) and wait a little for its cleanup."""
        self._cancel.set()
        thread = self._thread
        if thread is not None:
            await anyio.to_thread.run_sync(thread.join, wait)  # a killed `uv` returns within a poll interval
        with self._guard:
            if self.state in (InstallState.IDLE, InstallState.INSTALLING):
                self._move(InstallState.STOPPED)

    def _run(self) -> None:
        started = time.monotonic()
        log.info("toolbox: installing the document toolbox into %s", self.toolbox.root)

        def progress(step: Progress) -> None:
            log.info("toolbox: [%d/%d] %s", step.step, step.steps, step.message)

        try:
            status = self.toolbox.ensure(progress, self._cancel)
        except ToolboxCancelled:
            log.info("toolbox: install stopped (the server is stopping); it resumes at the next start")
            outcome, error = InstallState.STOPPED, None
        except ToolboxError as exc:
            log.warning("toolbox: install failed: %s", exc)
            outcome, error = InstallState.FAILED, str(exc)
        except Exception as exc:  # a thread's error would otherwise only reach stderr
            log.warning("toolbox: install failed", exc_info=True)
            outcome, error = InstallState.FAILED, f"{type(exc).__name__}: {exc}"
        else:
            log.info("toolbox: %s, in %.1f s", status.summary(), time.monotonic() - started)
            outcome, error = InstallState.DONE, None
        with self._guard:
            if self.state is InstallState.INSTALLING:
                self.error = error
                self._move(outcome)

    def _move(self, to: InstallState) -> None:
        if to not in _TRANSITIONS[self.state]:
            raise RuntimeError(f"toolbox install: {self.state.value} -> {to.value} is not a transition")
        self.state = to

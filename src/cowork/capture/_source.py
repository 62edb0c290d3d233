"""What a capture source reports and the contract every platform's source keeps.

A source answers two questions on demand (which window is active, how long since the last input) and can block until
the answer may have changed, so the capture loop polls rarely and still notices a switch at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["Source", "SourceUnavailable", "Window"]


@dataclass(frozen=True, slots=True)
class Window:
    """The window the user is working in.

    Attributes:
        app: The application: WM_CLASS's class part (e.g. "Firefox"), else its instance part, else "" when unknown.
        title: The window's title.
        pid: The process that owns the window, as the window says (_NET_WM_PID); None when it does not say.
        process: That process's name (/proc/<pid>/comm) when it runs on this machine and is readable, else None.
    """

    app: str
    title: str
    pid: int | None
    process: str | None


class SourceUnavailable(Exception):
    """Capture cannot run (or stopped running) here; the message is the reason shown to the user."""


class Source(Protocol):
    """A platform's view of the active window and the user's idle time.

    Sources never raise from a query except `SourceUnavailable`: a window that vanished mid-query is reported as no
    window, so a flaky desktop cannot crash the capture thread.
    """

    name: str

    def open(self) -> None:
        """Connect to the desktop.

        Raises:
            SourceUnavailable: With a reason a person can act on.
        """

    def active_window(self) -> Window | None:
        """The window that has the focus, or None (the desktop, nothing mapped, or it vanished while being read).

        Raises:
            SourceUnavailable: The connection to the desktop was lost.
        """

    def idle_seconds(self) -> float | None:
        """Seconds since the last keyboard or mouse input; None when the platform does not tell."""

    def wait(self, timeout: float) -> bool:
        """Block up to `timeout` seconds until the active window or its title may have changed.

        Returns:
            True when woken by such a change, False on timeout (or once the source is closed).
        """

    def close(self) -> None:
        """Disconnect; idempotent, and a `wait` in another thread returns promptly."""

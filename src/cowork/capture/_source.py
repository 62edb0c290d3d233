"""What a capture source is: something that tells the active window and how long the user has been idle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["Source", "SourceUnavailable", "Window"]


@dataclass(frozen=True, slots=True)
class Window:
    app: str
    """The application (X11: WM_CLASS's class part), or "" when unknown."""
    title: str
    pid: int | None = None
    process: str | None = None
    """The process's command name (/proc/<pid>/comm), when readable."""


class SourceUnavailable(Exception):
    """The source cannot run here (no display, the display went away); the message is shown to the user."""


class Source(Protocol):
    name: str

    def open(self) -> None: ...

    def active_window(self) -> Window | None: ...

    def idle_seconds(self) -> float | None: ...

    def wait(self, timeout: float) -> bool: ...

    def close(self) -> None: ...

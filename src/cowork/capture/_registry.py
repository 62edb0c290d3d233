"""Capture sources by platform, registered the same way built-ins and plugins are (STYLE: a registry, not a chain).

Each entry says whether it can run here (`probe`: None, or the reason it cannot) and builds the source. The first
that can run is used; when none can, every reason is reported to the user, never faked. Built in: X11 (Linux and
BSD desktops, and XWayland windows under Wayland); macOS and Windows are named with what they would need, since
their native libraries are not part of this build.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ._source import Source

__all__ = ["SOURCES", "SourceEntry", "pick_source", "register_source"]


@dataclass(frozen=True, slots=True)
class SourceEntry:
    name: str
    probe: Callable[[Mapping[str, str]], str | None]
    """None when the source can run in this environment, else why not (shown to the user)."""
    build: Callable[[Mapping[str, str]], Source]


SOURCES: dict[str, SourceEntry] = {}

ELSEWHERE = "not this platform."
"""A probe's answer for a source of another platform: left out of what the user is told."""


def register_source(entry: SourceEntry) -> None:
    SOURCES[entry.name] = entry


def pick_source(env: Mapping[str, str]) -> tuple[Source | None, str | None]:
    """The first source that can run here, or None and every source's reason (one sentence each)."""
    reasons: list[str] = []
    for entry in SOURCES.values():
        reason = entry.probe(env)
        if reason is None:
            return entry.build(env), None
        if reason != ELSEWHERE:
            reasons.append(f"{entry.name}: {reason}")
    if not reasons:
        return None, f"No capture source exists for this platform ({sys.platform})."
    return None, "No capture source can run here. " + " ".join(reasons)


def _x11_probe(env: Mapping[str, str]) -> str | None:
    if sys.platform in ("darwin", "win32"):
        return ELSEWHERE
    if not env.get("DISPLAY"):
        if env.get("WAYLAND_DISPLAY"):
            return (
                "this is a Wayland session without XWayland ($DISPLAY is not set); Wayland lets no ordinary "
                "program see the active window (see docs/capture.md)."
            )
        return "no X display ($DISPLAY is not set)."
    return None


def _x11_build(env: Mapping[str, str]) -> Source:
    from ._x11 import X11Source

    return X11Source(env.get("DISPLAY"))


def _not_built(platform: str, what: str) -> Callable[[Mapping[str, str]], str | None]:
    def probe(_env: Mapping[str, str]) -> str | None:
        if sys.platform != platform:
            return ELSEWHERE
        return f"not available in this build (it would need {what}; see docs/capture.md)."

    return probe


def _never(_env: Mapping[str, str]) -> Source:
    raise AssertionError("a source whose probe fails is never built")


register_source(SourceEntry("x11", _x11_probe, _x11_build))
register_source(SourceEntry("macos", _not_built("darwin", "pyobjc's AppKit and Quartz bindings"), _never))
register_source(SourceEntry("windows", _not_built("win32", "pywin32 and psutil"), _never))

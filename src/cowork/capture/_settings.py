"""The user's consent and privacy choices, kept in the database (`capture:settings`), and the streams they govern.

Defaults follow the design notes (seed 002, "Context stream defaults"): the active window and focus detection on;
browser activity, keystrokes, the screen and the clipboard off. Those four are not built at all: they would record
passwords, messages and whatever else is on the screen verbatim, and no form of them is safe enough to ship
here. Turning one on is refused with the reason, so consent can never be given to something that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Final, get_args

from cowork.protocol import CaptureConfigureParams, CaptureStream

__all__ = ["DEFAULT_STREAMS", "KEY", "STREAMS", "CaptureSettings", "ConsentError", "StreamSpec", "apply_change"]

KEY: Final = "capture:settings"


@dataclass(frozen=True, slots=True)
class StreamSpec:
    description: str
    default: bool
    not_built: str | None = None
    """Why this build does not capture the stream at all (None: it does, given a source)."""


STREAMS: Final[dict[CaptureStream, StreamSpec]] = {
    "window": StreamSpec("The active window: its application and title, from when to when.", True),
    "focus": StreamSpec(
        "Focus detection: long stretches in one application (deep work), which hold back interruptions.", True
    ),
    "browser": StreamSpec(
        "The browser's open tab and its address.",
        False,
        "Not built: seeing a tab needs a browser extension or the browser's remote-debugging port, which would hand "
        "every page's contents to any local program. A tab's title is part of its window's title already.",
    ),
    "keystrokes": StreamSpec(
        "Keys typed.",
        False,
        "Not built: recording keystrokes records passwords and private messages verbatim.",
    ),
    "screen": StreamSpec(
        "Screenshots of the screen.",
        False,
        "Not built: screenshots hold everything on the screen, including what other exclusions would hide.",
    ),
    "clipboard": StreamSpec(
        "What is copied to the clipboard.",
        False,
        "Not built: the clipboard carries passwords from password managers.",
    ),
}
assert set(STREAMS) == set(get_args(CaptureStream))

DEFAULT_STREAMS: Final = {name: spec.default for name, spec in STREAMS.items()}


@dataclass(frozen=True, slots=True)
class CaptureSettings:
    streams: dict[CaptureStream, bool] = field(default_factory=lambda: dict(DEFAULT_STREAMS))
    paused: bool = False
    paused_until: datetime | None = None
    exclude_apps: tuple[str, ...] = ()
    exclude_titles: tuple[str, ...] = ()
    retention_days: int = 30

    def enabled(self, stream: CaptureStream) -> bool:
        return self.streams.get(stream, False) and STREAMS[stream].not_built is None

    def to_json(self) -> dict[str, Any]:
        return {
            "streams": dict(self.streams),
            "paused": self.paused,
            "paused_until": self.paused_until.isoformat() if self.paused_until else None,
            "exclude_apps": list(self.exclude_apps),
            "exclude_titles": list(self.exclude_titles),
            "retention_days": self.retention_days,
        }

    @classmethod
    def from_json(cls, value: object) -> CaptureSettings:
        """The stored settings; anything missing or malformed falls back to its default (a newer or older
        server's record never stops capture settings from loading)."""
        if not isinstance(value, dict):
            return cls()
        streams = dict(DEFAULT_STREAMS)
        for name, on in (value.get("streams") or {}).items():
            if name in STREAMS and isinstance(on, bool):
                streams[name] = on
        until = value.get("paused_until")
        try:
            paused_until = datetime.fromisoformat(until) if isinstance(until, str) else None
        except ValueError:
            paused_until = None
        days = value.get("retention_days")
        return cls(
            streams=streams,
            paused=bool(value.get("paused", False)),
            paused_until=paused_until,
            exclude_apps=tuple(str(p) for p in value.get("exclude_apps") or () if isinstance(p, str)),
            exclude_titles=tuple(str(p) for p in value.get("exclude_titles") or () if isinstance(p, str)),
            retention_days=days if isinstance(days, int) and 1 <= days <= 3650 else 30,
        )


class ConsentError(ValueError):
    """A change that cannot be made; nothing was changed."""


def apply_change(settings: CaptureSettings, change: CaptureConfigureParams, now: datetime) -> CaptureSettings:
    """The settings after `change`, or ConsentError (then none of it applies)."""
    streams = dict(settings.streams)
    for name, on in (change.streams or {}).items():
        reason = STREAMS[name].not_built
        if on and reason is not None:
            raise ConsentError(f"The {name} stream cannot be turned on. {reason}")
        streams[name] = on
    result = replace(settings, streams=streams)
    if change.paused is not None:
        until = None
        if change.paused and change.pause_minutes is not None:
            until = now + timedelta(minutes=change.pause_minutes)
        result = replace(result, paused=change.paused, paused_until=until)
    if change.exclude_apps is not None:
        result = replace(result, exclude_apps=tuple(dict.fromkeys(p.strip() for p in change.exclude_apps)))
    if change.exclude_titles is not None:
        result = replace(result, exclude_titles=tuple(dict.fromkeys(p.strip() for p in change.exclude_titles)))
    if change.retention_days is not None:
        result = replace(result, retention_days=change.retention_days)
    return result

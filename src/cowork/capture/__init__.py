"""Activity capture (DESIGN §10, docs/capture.md): what the user works on — the active window's application and
title, idleness, focus sessions — with consent per stream, exclusions, retention, and queries over what was
captured (`context/query`, the `activity` tool).

Sources register in `_registry` (X11 built in; macOS and Windows named, not built); `_tracker` turns samples into
spans and focus runs; `_service` runs the source in a thread of its own and does everything else on the loop.
"""

from ._context import app_totals, focus_sessions, hour_text
from ._privacy import BUILTIN_APPS, BUILTIN_TITLES, Exclusions
from ._registry import SOURCES, SourceEntry, pick_source, register_source
from ._service import BUFFER_SLOTS, KIND, SCOPE, CaptureService
from ._settings import STREAMS, CaptureSettings, ConsentError
from ._source import Source, SourceUnavailable, Window
from ._tracker import Observation, Tracker

__all__ = [
    "BUFFER_SLOTS",
    "BUILTIN_APPS",
    "BUILTIN_TITLES",
    "KIND",
    "SCOPE",
    "SOURCES",
    "STREAMS",
    "CaptureService",
    "CaptureSettings",
    "ConsentError",
    "Exclusions",
    "Observation",
    "Source",
    "SourceEntry",
    "SourceUnavailable",
    "Tracker",
    "Window",
    "app_totals",
    "focus_sessions",
    "hour_text",
    "pick_source",
    "register_source",
]

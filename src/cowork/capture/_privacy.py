"""What is never captured: built-in exclusions (password managers, private browser windows) and the user's own."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from ._source import Window

__all__ = ["BUILTIN_APPS", "BUILTIN_TITLES", "Exclusions"]

BUILTIN_APPS: Final = (
    "keepass*",
    "1password*",
    "bitwarden*",
    "lastpass*",
    "dashlane*",
    "enpass*",
    "proton pass*",
    "protonpass*",
    "qtpass",
    "seahorse",
    "org.gnome.seahorse*",
    "kwalletmanager*",
    "gnome-keyring*",
)
"""Password managers (matched against the application and the process name, any case)."""

BUILTIN_TITLES: Final = (
    "*private browsing*",
    "*(incognito)*",
    "*incognito*",
    "*inprivate*",
    "*- private*",
    "*tor browser*",
)
"""Private browser windows (Firefox, Chrome and Chromium, Edge, Brave, Tor Browser) by their titles, any case."""


@dataclass(frozen=True, slots=True)
class Exclusions:
    apps: tuple[str, ...]
    titles: tuple[str, ...]

    @classmethod
    def of(cls, apps: Iterable[str], titles: Iterable[str]) -> Exclusions:
        """The built-in patterns and these, lower-cased once."""
        return cls(
            tuple(p.lower() for p in (*BUILTIN_APPS, *apps)),
            tuple(p.lower() for p in (*BUILTIN_TITLES, *titles)),
        )

    def excludes(self, window: Window) -> bool:
        names = [window.app.lower()] + ([window.process.lower()] if window.process else [])
        if any(fnmatch.fnmatchcase(name, pattern) for name in names for pattern in self.apps):
            return True
        title = window.title.lower()
        return any(fnmatch.fnmatchcase(title, pattern) for pattern in self.titles)

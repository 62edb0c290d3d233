"""What is never captured: built-in exclusions (password managers, private browser windows) and the user's own."""

from __future__ import annotations

import fnmatch
import re
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


def _one_regex(patterns: Iterable[str]) -> re.Pattern[str]:
    """Every glob pattern as one anchored alternation, any case: one match per name instead of one per pattern
    (the exclusion check was two thirds of the tracker's time per sample with 30 patterns, bench/capture.py)."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns) or "(?!)", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True, slots=True)
class Exclusions:
    apps: tuple[str, ...]
    titles: tuple[str, ...]
    _apps: re.Pattern[str]
    _titles: re.Pattern[str]

    @classmethod
    def of(cls, apps: Iterable[str], titles: Iterable[str]) -> Exclusions:
        """The built-in patterns and these."""
        app_patterns, title_patterns = (*BUILTIN_APPS, *apps), (*BUILTIN_TITLES, *titles)
        return cls(app_patterns, title_patterns, _one_regex(app_patterns), _one_regex(title_patterns))

    def excludes(self, window: Window) -> bool:
        if self._apps.match(window.app) or (window.process and self._apps.match(window.process)):
            return True
        return self._titles.match(window.title) is not None

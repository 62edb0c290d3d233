"""File permissions in tests: a path's mode bits, and running code under a given umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["mode", "umask"]


def mode(path: Path) -> int:
    """The permission bits of `path` itself (a link's own, not its target's)."""
    return stat.S_IMODE(path.lstat().st_mode)


@contextmanager
def umask(value: int) -> Iterator[None]:
    """Run the block under `value` as the process umask (files created in it get those bits cleared)."""
    previous = os.umask(value)
    try:
        yield
    finally:
        os.umask(previous)

"""The server log's files: a size-rotating handler that keeps every file 0600, and the list of files in order."""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
from logging.handlers import RotatingFileHandler
from pathlib import Path

from cowork.config import PRIVATE_FILE_MODE

__all__ = ["DEFAULT_BACKUPS", "DEFAULT_MAX_BYTES", "PrivateRotatingFileHandler", "log_files"]

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
"""A file is rotated once it would pass this size (`logs.max_mb`)."""
DEFAULT_BACKUPS = 5
"""Rotated files kept (`server.log.1` newest … `server.log.5` oldest; `logs.backups`)."""


class PrivateRotatingFileHandler(RotatingFileHandler):
    """A `RotatingFileHandler` whose current and rotated files are 0600 whatever the umask.

    The stock handler opens its file with `open()`, which creates it under the umask (often 0644: readable by other
    users) and would do so again at every rotation. Here the file is created 0600 by `os.open` itself, and one that
    already existed looser is tightened before the first byte is written; rotation renames, which keeps the mode.
    """

    def __init__(self, path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES, backups: int = DEFAULT_BACKUPS) -> None:
        super().__init__(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")

    def _open(self) -> io.TextIOWrapper:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
        fd = os.open(self.baseFilename, flags, PRIVATE_FILE_MODE)
        # Not logged when it fails (a file system without modes): this runs inside the handler, where logging would
        # re-enter it. `setup_server_logging` has made the file private, saying so if it could not, beforehand.
        with contextlib.suppress(OSError):
            if stat.S_IMODE(os.fstat(fd).st_mode) != PRIVATE_FILE_MODE:
                os.fchmod(fd, PRIVATE_FILE_MODE)
        return open(fd, "a", encoding=self.encoding, errors=self.errors)  # the handler closes it

    def doRollover(self) -> None:
        super().doRollover()
        # Renaming keeps the 0600 of the files this handler made; a backup left by anything else is tightened too.
        for path in log_files(Path(self.baseFilename), rotated=True)[:-1]:
            with contextlib.suppress(OSError):
                if stat.S_IMODE(path.stat().st_mode) != PRIVATE_FILE_MODE:
                    path.chmod(PRIVATE_FILE_MODE)


def log_files(path: Path, *, rotated: bool) -> list[Path]:
    """`path` and, if `rotated`, its rotated files (`path.1`, `path.2`…) that exist, oldest first; `path` is last
    (and listed even when it does not exist, since the server may be about to create it)."""
    if not rotated:
        return [path]
    pattern = re.compile(re.escape(path.name) + r"\.(\d+)")
    numbered = []
    with contextlib.suppress(OSError):
        for sibling in path.parent.iterdir():
            match = pattern.fullmatch(sibling.name)
            if match:
                numbered.append((int(match.group(1)), sibling))
    return [sibling for _, sibling in sorted(numbered, reverse=True)] + [path]

"""Reading a log file's lines as they are written, across rotation and re-creation, like `tail -F`.

The file is read through one open descriptor, so the lines `cowork logs -f` shows first and the ones it follows
with have nothing missing or repeated between them. When the name points to another file (the server rotated it:
`server.log` became `server.log.1` and a new `server.log` was created) the old file is read to its end first,
then any file rotated after it (several rotations between two looks), then the new one from its start; a file that
shrank in place (truncated) is read again from its start.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ._files import log_files

__all__ = ["Tail", "read_lines"]

_CHUNK = 1 << 16


def _decode(line: bytes) -> str:
    return line.decode("utf-8", errors="replace").rstrip("\r\n")


def read_lines(path: Path) -> Iterator[str]:
    """Every line of `path`, without newlines (undecodable bytes replaced, never an error)."""
    with path.open("rb") as fh:
        for line in fh:
            yield _decode(line)


class Tail:
    """The lines of the file at `path`: all of it so far, then whatever is appended, whichever file it is by then."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: BinaryIO | None = None
        self._identity: tuple[int, int] | None = None
        self._partial = b""

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Tail:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lines(self) -> Iterator[str]:
        """The complete lines written since the last call (the whole file on the first); empty while nothing new.

        A line still being written (no newline yet) waits for its end, unless its file was replaced meanwhile.
        """
        if self._file is None and not self._open():
            return
        yield from self._drain()
        if self._replaced():
            yield from self._drain()  # what was written to the old file between the read above and the rename
            if self._partial:
                yield _decode(self._partial)
                self._partial = b""
            missed = self._rotated_since()
            self.close()
            for path in missed:
                with contextlib.suppress(FileNotFoundError):
                    yield from read_lines(path)
            if self._open():
                yield from self._drain()

    def _open(self) -> bool:
        try:
            self._file = self.path.open("rb")
        except FileNotFoundError:
            return False  # between a rotation's rename and the new file: try again next time
        stat = os.fstat(self._file.fileno())
        self._identity = (stat.st_dev, stat.st_ino)
        return True

    def _drain(self) -> Iterator[str]:
        assert self._file is not None
        while chunk := self._file.read(_CHUNK):
            *complete, self._partial = (self._partial + chunk).split(b"\n")
            for line in complete:
                yield _decode(line)

    def _rotated_since(self) -> list[Path]:
        """The files rotated after ours, oldest first: when it is `server.log.3` by now (several rotations between
        two looks), `server.log.2` and `.1` were written after it, and are read before the new `server.log`."""
        rotated = log_files(self.path, rotated=True)[:-1]  # oldest first
        for index, path in enumerate(rotated):
            with contextlib.suppress(OSError):
                stat = path.stat()
                if (stat.st_dev, stat.st_ino) == self._identity:
                    return rotated[index + 1 :]
        return []  # deleted or replaced by something else: nothing to say what came between

    def _replaced(self) -> bool:
        """Whether the name now points to another file (or none), or the file shrank under us (truncated)."""
        assert self._file is not None
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return True
        if (stat.st_dev, stat.st_ino) != self._identity:
            return True
        if stat.st_size < self._file.tell():
            with contextlib.suppress(OSError):
                self._file.seek(0)
            self._partial = b""
        return False

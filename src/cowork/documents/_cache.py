"""A small LRU of converted documents, so paging through a large PDF does not parse it again at every call."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from ._formats import convert
from ._model import Document

__all__ = ["DocumentCache"]

_Key = tuple[str, int, int, int]
"""(path, mtime in ns, size, inode): a file changed in any of these is converted again."""


def _no_checkpoint() -> None:
    return None


class DocumentCache:
    """Converted documents by (path, mtime, size), least recently used dropped first. Safe to share across threads.

    Failures are not kept: a file that could not be converted is tried again at the next call.
    """

    def __init__(
        self,
        *,
        max_entries: int = 8,
        max_chars: int = 40_000_000,
        converter: Callable[..., Document] = convert,
    ) -> None:
        self._max_entries = max_entries
        self._max_chars = max_chars
        self._convert = converter
        self._entries: OrderedDict[_Key, Document] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, path: Path, *, checkpoint: Callable[[], None] = _no_checkpoint) -> Document:
        """The converted document for `path`, from the cache while the file is unchanged.

        Raises:
            DocumentError: from `convert`.
            OSError: the file cannot be read.
        """
        info = path.stat()
        key: _Key = (str(path), info.st_mtime_ns, info.st_size, info.st_ino)
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
        # Converting outside the lock: one slow PDF must not hold up reads of other files.
        document = self._convert(path, checkpoint=checkpoint)
        with self._lock:
            for stale in [old for old in self._entries if old[0] == key[0]]:
                self._chars -= len(self._entries.pop(stale).text)
            self._entries[key] = document
            self._chars += len(document.text)
            while len(self._entries) > 1 and (len(self._entries) > self._max_entries or self._chars > self._max_chars):
                _, dropped = self._entries.popitem(last=False)
                self._chars -= len(dropped.text)
        return document

    def clear(self) -> None:
        """Forget every converted document."""
        with self._lock:
            self._entries.clear()
            self._chars = 0

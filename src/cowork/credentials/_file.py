"""Private JSON documents under `auth/`: a 0700 folder, 0600 files replaced atomically, one writer at a time."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["CredentialError", "locked", "read_document", "write_document"]

log = logging.getLogger(__name__)

VERSION = 1
# flock serialises processes; this serialises the threads of this one (and saves a file descriptor per waiter).
_THREAD_LOCK = threading.Lock()


class CredentialError(Exception):
    """A secret could not be stored or read; the message says where and why."""


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold the writers' lock of `folder` (created 0700 if missing) for a read-modify-write."""
    with _THREAD_LOCK:
        try:
            _private_folder(folder)
            fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            if os.fstat(fd).st_mode & 0o777 != 0o600:
                os.fchmod(fd, 0o600)  # a umask such as 0277 leaves it read-only: the next writer could not open it
        except OSError as e:
            raise CredentialError(f"Could not lock {folder}: {e.strerror}") from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the flock


def read_document(path: Path, key: str) -> object:
    """The `key` member of the document at `path` (None when there is no file), after tightening loose permissions.

    Raises:
        CredentialError: the file cannot be read or is not a document this version wrote; secrets are never dropped.
    """
    try:
        with open(path, "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if mode & 0o077:
                log.warning("%s was readable by other users (mode %o); tightened to 0600.", path, mode & 0o777)
                os.fchmod(f.fileno(), 0o600)
            raw = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise CredentialError(f"Could not read {path}: {e.strerror}") from e
    try:
        document = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        # The decoder's message gives a position, never the text around it, so no secret leaks into it.
        raise CredentialError(f"{path} is corrupt ({e}); fix or remove it (it may hold secrets).") from e
    if not isinstance(document, dict):
        raise CredentialError(f"{path} is not a Cowork credentials document; fix or remove it.")
    if document.get("version") != VERSION:
        raise CredentialError(f"{path} has version {document.get('version')!r}; this Cowork reads version {VERSION}.")
    return document.get(key)


def write_document(path: Path, key: str, value: dict[str, str] | list[str]) -> None:
    """Replace `path` atomically with `{"version": 1, key: value}`; the file is 0600 from its first byte."""
    data = json.dumps({"version": VERSION, key: value}, indent=2, sort_keys=True).encode() + b"\n"
    temp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.fchmod(fd, 0o600)  # exactly 0600: a process umask such as 0277 would leave it read-only
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temp, path)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        _fsync_folder(path.parent)
    except OSError as e:
        raise CredentialError(f"Could not write {path}: {e.strerror}") from e


def _private_folder(folder: Path) -> None:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = folder.stat().st_mode & 0o777
    if mode & 0o077:
        log.warning("%s had mode %o; tightened to 0700.", folder, mode)
    if mode != 0o700:
        # Also when a umask such as 0277 took bits from a folder just created: this user must be able to write here.
        os.chmod(folder, 0o700)


def _fsync_folder(folder: Path) -> None:
    # Without this the rename itself may not survive a power cut.
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

"""The credential store: secrets in the OS keyring when there is a usable one, else in a 0600 file under `auth/`.

Finding the keyring (importing keyring, which loads and asks every backend: D-Bus, macOS, Windows, KWallet) takes
a noticeable part of a second, so under `auto` it happens at the first use of the store, and a home where nothing
was ever stored answers `names()` without it.
"""

from __future__ import annotations

import functools
import importlib
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NoReturn

from ._file import CredentialError, locked, read_document, write_document

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

__all__ = ["CredentialInfo", "CredentialStore"]

log = logging.getLogger(__name__)

MAX_NAME_LENGTH = 200
MAX_SECRET_BYTES = 64 * 1024


@dataclass(frozen=True)
class CredentialInfo:
    """What a store tells about itself, for status displays."""

    backend: Literal["keyring", "file"]
    location: str  # "keyring (SecretService Keyring)" or the file's path


class CredentialStore:
    """Named secrets (`provider/openai`, `mcp/github/GITHUB_TOKEN`, `oauth/linear`) for one Cowork home.

    Every method blocks (keyring calls may go over D-Bus); callers run them in a worker thread.
    """

    def __init__(
        self,
        home: Path,
        *,
        backend: Literal["auto", "keyring", "file"] = "auto",
        keyring_backend: KeyringBackend | None = None,
    ) -> None:
        """Open the store of `home`.

        Args:
            home: the Cowork home; secrets of two homes never mix.
            backend: `auto` uses the keyring when it is usable and falls back to the file when it is not or fails.
            keyring_backend: the keyring to use instead of `keyring.get_keyring()`.

        Raises:
            CredentialError: `backend="keyring"` and no usable keyring.
        """
        auth = home / "auth"
        self._folder = auth
        self._file = auth / "credentials.json"
        self._index = auth / "index.json"
        # Scoped by home so that two homes (a test's and the user's) never share a keyring entry.
        self._service = f"cowork:{home.resolve()}"
        self._strict = backend == "keyring"
        self._candidate = keyring_backend
        self._looked = backend == "file"
        """Whether the keyring was looked for (the file backend never looks)."""
        self._found: KeyringBackend | None = None
        self._looking = threading.Lock()
        """Callers run in worker threads: the first two must not both decide (one could see no keyring yet)."""
        if self._strict:
            self._keyring()  # no usable keyring is an error now, not at the first secret

    def _keyring(self) -> KeyringBackend | None:
        """The keyring in use, looked for the first time it is needed; None: the file is in use."""
        if not self._looked:
            with self._looking:
                if not self._looked:
                    if self._candidate is not None:
                        candidate = self._candidate
                    else:
                        import keyring

                        candidate = keyring.get_keyring()
                    problem = _unusable(candidate)
                    if problem is None:
                        self._found = candidate
                    elif self._strict:
                        raise CredentialError(f"No usable OS keyring: {problem}.")
                    self._looked = True
        return self._found

    @property
    def info(self) -> CredentialInfo:
        """Where this store keeps secrets now (a keyring that failed under `auto` has been replaced by the file)."""
        if (ring := self._keyring()) is not None:
            return CredentialInfo("keyring", f"keyring ({ring.name})")
        return CredentialInfo("file", str(self._file))

    def get(self, name: str) -> str | None:
        """The secret stored under `name`, or None."""
        _check_name(name)
        if (ring := self._keyring()) is not None:
            try:
                return ring.get_password(self._service, name)
            except _keyring_failures() as e:
                self._keyring_failed(ring, "read", name, e)
        return self._secrets().get(name)

    def set(self, name: str, secret: str) -> None:
        """Store `secret` under `name`, replacing any secret there.

        Raises:
            ValueError: the name or the secret is not acceptable; nothing was stored.
            CredentialError: the secret could not be stored.
        """
        _check_name(name)
        _check_secret(secret)
        if (ring := self._keyring()) is not None:
            try:
                ring.set_password(self._service, name, secret)
            except _keyring_failures() as e:
                self._keyring_failed(ring, "store", name, e)
            else:
                self._update_index(name, present=True)
                return
        with locked(self._folder):
            secrets = self._secrets()
            secrets[name] = secret
            write_document(self._file, "secrets", secrets)

    def delete(self, name: str) -> bool:
        """Remove the secret under `name`; True when there was one."""
        _check_name(name)
        if (ring := self._keyring()) is not None:
            try:
                # Keyrings report a missing entry with the same PasswordDeleteError as a real failure: look first.
                present = ring.get_password(self._service, name) is not None
                if present:
                    ring.delete_password(self._service, name)
            except _keyring_failures() as e:
                self._keyring_failed(ring, "delete", name, e)
            else:
                self._update_index(name, present=False)
                return present
        with locked(self._folder):
            secrets = self._secrets()
            if secrets.pop(name, None) is None:
                return False
            write_document(self._file, "secrets", secrets)
            return True

    def names(self) -> list[str]:
        """The names stored, sorted (never the secrets)."""
        if not self._looked and not self._index.exists() and not self._file.exists():
            return []  # nothing was ever stored, whichever backend: no need to look for the keyring
        if self._keyring() is not None:
            return self._names()  # a keyring cannot list its entries; the index can
        return sorted(self._secrets())

    def _keyring_failed(self, ring: KeyringBackend, action: str, name: str, error: Exception) -> None:
        if self._strict:
            raise CredentialError(f"The OS keyring ({ring.name}) could not {action} {name!r}: {error}") from error
        # Once per store: from here on this store uses the file.
        log.warning(
            "The OS keyring (%s) could not %s %r (%s); using %s instead.", ring.name, action, name, error, self._file
        )
        self._found = None

    def _secrets(self) -> dict[str, str]:
        value = read_document(self._file, "secrets")
        if value is None:
            return {}
        if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            _malformed(self._file)
        return value

    def _names(self) -> list[str]:
        value = read_document(self._index, "names")
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
            _malformed(self._index)
        return value

    def _update_index(self, name: str, *, present: bool) -> None:
        with locked(self._folder):
            names = set(self._names())
            if (name in names) != present:
                write_document(self._index, "names", sorted((names | {name}) if present else (names - {name})))


def _unusable(ring: KeyringBackend) -> str | None:
    """Why `ring` cannot hold secrets, or None when it can."""
    from keyring.backends import chainer, fail

    if isinstance(ring, fail.Keyring):
        return "keyring found no backend (on Linux, run a Secret Service such as gnome-keyring or KeePassXC)"
    if isinstance(ring, chainer.ChainerBackend):
        # A chainer's own priority is -1 unless it chains two or more, yet one backend is enough.
        return None if ring.backends else "keyring's chainer has no backends"
    try:
        priority = ring.priority
    except Exception as e:  # a backend's priority raises to say it is not viable here
        return f"{ring.name} is not available ({e})"
    return None if priority > 0 else f"{ring.name} has priority {priority:g}, too low to trust"


@functools.cache
def _keyring_failures() -> tuple[type[Exception], ...]:
    """KeyringError, plus the D-Bus and socket errors the Secret Service backend lets through when the service dies."""
    from keyring.errors import KeyringError

    failures: list[type[Exception]] = [KeyringError, OSError]
    for module, name in [
        ("secretstorage.exceptions", "SecretStorageException"),
        ("jeepney.wrappers", "DBusErrorResponse"),
    ]:
        try:
            failures.append(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            pass  # not on this platform
    return tuple(failures)


def _malformed(path: Path) -> NoReturn:
    raise CredentialError(f"{path} does not hold what Cowork wrote there; fix or remove it (it may hold secrets).")


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not name:
        raise ValueError("A credential name must be a non-empty string, like 'provider/openai'.")
    if len(name) > MAX_NAME_LENGTH:
        raise ValueError(f"Credential name is {len(name)} characters long; the limit is {MAX_NAME_LENGTH}.")
    if not name.isprintable() or any(c.isspace() for c in name):
        raise ValueError(f"Credential name {name!r} contains whitespace or unprintable characters.")


def _check_secret(secret: str) -> None:
    # The messages never quote the secret.
    if not isinstance(secret, str) or not secret:
        raise ValueError("A secret must be a non-empty string.")
    if "\0" in secret:
        raise ValueError("A secret may not contain NUL characters.")
    try:
        size = len(secret.encode())
    except UnicodeEncodeError:
        raise ValueError("A secret must be valid Unicode text (it contains a lone surrogate).") from None
    if size > MAX_SECRET_BYTES:
        raise ValueError(f"A secret is limited to {MAX_SECRET_BYTES} bytes; this one has {size}.")

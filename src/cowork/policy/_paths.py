"""Path permissions: what tools may read and write, decided on the fully resolved path.

Every path is made absolute (relative to the workspace), `~` expanded, and resolved (symlinks and `..`)
before it is checked, so a link, `..`, `/proc/self/root` or a case variant cannot walk out of the allowed
roots. A deny list (credential stores and Cowork's own secrets) wins over every root and over auto-run.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ._places import SENSITIVE_IN_HOME, SENSITIVE_SYSTEM

__all__ = ["DEFAULT_DENY", "PathDenied", "PathPolicy"]

DEFAULT_DENY: tuple[str, ...] = (
    *(f"~/{rel}" for rel in SENSITIVE_IN_HOME),
    *(p for p in SENSITIVE_SYSTEM if "*" not in p),
)
"""Credential stores no tool may touch. Cowork's own `auth/` and database are added from `COWORK_HOME`."""


_BUILTIN_SKILLS = (Path(__file__).parent.parent / "skills" / "builtin").resolve()
"""Skills shipped with Cowork: readable (their extra files), never writable."""


class PathDenied(Exception):
    """A path a tool may not use; the message says which rule refused it and what is allowed."""


def _resolve(raw: str | Path, base: Path) -> Path:
    if "\0" in str(raw):
        raise PathDenied(f"{str(raw)!r} contains a NUL byte, which no file name can hold.")
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = base / path
    # strict=False: a file about to be written need not exist; its existing ancestors are still resolved.
    try:
        return path.resolve(strict=False)
    except (OSError, RuntimeError, ValueError) as exc:  # unreadable link targets (/proc/1/root), symlink loops
        raise PathDenied(f"{raw!s} cannot be resolved safely: {exc}.") from None


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _within_casefold(path: Path, root: Path) -> bool:
    # Case-insensitive file systems (macOS, Windows) make ~/.SSH the same folder as ~/.ssh: deny either way.
    p, r = str(path).casefold(), str(root).casefold()
    return p == r or p.startswith(r.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class PathPolicy:
    """Read roots, write roots, and a deny list that beats both."""

    workspace: Path
    read_roots: tuple[Path, ...] = ()
    write_roots: tuple[Path, ...] = ()
    deny: tuple[Path, ...] = field(default_factory=tuple)

    @classmethod
    def build(
        cls,
        workspace: Path,
        *,
        home: Path | None = None,
        output_dir: Path | None = None,
        extra_read: Iterable[str | Path] = (),
        extra_write: Iterable[str | Path] = (),
        deny: Iterable[str | Path] = (),
    ) -> PathPolicy:
        """The policy for a session: read and write the workspace and output directory (plus configured extras),
        read Cowork's skills and tool output; never the deny list or Cowork's own secrets."""
        workspace = workspace.resolve()
        writes = [workspace, *([output_dir.resolve()] if output_dir else [])]
        writes += [_resolve(p, workspace) for p in extra_write]
        reads = [*writes, *(_resolve(p, workspace) for p in extra_read), _BUILTIN_SKILLS]
        denied = [_resolve(p, workspace) for p in (*DEFAULT_DENY, *deny)]
        if home is not None:
            home = home.resolve()
            reads += [home / "skills", home / "tool-output", home / "memory", home / "AGENT.md"]
            writes += [home / "memory", home / "AGENT.md"]
            denied += [home / "auth", home / "cowork.db", home / "cowork.db-wal", home / "cowork.db-shm"]
            denied += [home / "server.json", home / "config.toml"]
        return cls(workspace, tuple(reads), tuple(writes), tuple(denied))

    def resolve(self, raw: str | Path) -> Path:
        return _resolve(raw, self.workspace)

    def _denied(self, path: Path) -> Path | None:
        return next((d for d in self.deny if _within_casefold(path, d)), None)

    def _check(self, raw: str | Path, roots: tuple[Path, ...], verb: str) -> Path:
        path = self.resolve(raw)
        denied = self._denied(path)
        if denied is not None:
            raise PathDenied(f"{raw!s} is in {denied}, which no tool may {verb} (it holds credentials or secrets).")
        if not any(_within(path, root) for root in roots):
            others = [str(r) for r in roots if r != self.workspace][:3]
            extra = f" and the other folders tools may {verb} ({', '.join(others)})" if others else ""
            raise PathDenied(f"{raw!s} resolves to {path}, outside the workspace {self.workspace}{extra}.")
        try:
            info = path.stat()
        except OSError:
            return path
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            # A hard link inside the workspace can point at a file anywhere on the same disk.
            raise PathDenied(
                f"{raw!s} has {info.st_nlink} hard links; one may be outside the workspace, so it is refused."
            )
        return path

    def check_read(self, raw: str | Path) -> Path:
        """The resolved path, if tools may read it.

        Raises:
            PathDenied: outside the read roots, on the deny list, or a multiply hard-linked file.
        """
        return self._check(raw, self.read_roots or (self.workspace,), "read")

    def check_write(self, raw: str | Path) -> Path:
        """The resolved path, if tools may write it.

        Raises:
            PathDenied: outside the write roots, on the deny list, or a multiply hard-linked file.
        """
        return self._check(raw, self.write_roots or (self.workspace,), "write")

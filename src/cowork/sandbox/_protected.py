"""Protected workspace files under a sandboxed command: what bubblewrap's read-only binds cannot cover.

The sandbox binds every protected path that exists read-only (`cowork.policy.PROTECTED_IN_WORKSPACE`), so a
command cannot rewrite `.git/config` or `.cowork/config.toml`. Two gaps remain, and this closes them after the
command ends (nothing outside the sandbox runs in between that the command could have waited for, except the
user's own programs during the command):

- a protected path that did not exist cannot be bound (bubblewrap would create it on the host), so the command
  could create `.envrc` or `.cowork/config.toml`: anything protected the command created is moved to
  `.cowork-quarantine/` and the model is told;
- the directory holding binds can still be renamed (`mv .git .old && mkdir .git`), so a command could replace
  `.git` wholesale: when `.git` is no longer the same directory, the original is moved back when it is still in
  the workspace, and the replacement is quarantined. A `.git` the command created (`git init`, `git clone`) is
  kept unless its config sets something git executes or it holds hooks.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from cowork.policy import PROTECTED_IN_WORKSPACE, git_key_executes

__all__ = ["ProtectedSnapshot", "git_config_executes"]

QUARANTINE = ".cowork-quarantine"

_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_ENTRY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")


def git_config_executes(text: str) -> str | None:
    """The first key in git config `text` whose value git would execute, or None.

    Read loosely on purpose (any line that looks like a setting counts), so an odd spelling cannot hide one.
    """
    section = ""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].split(";", 1)[0] if '"' not in raw else raw
        match = _SECTION.match(line)
        if match:
            name, sub, rest = match.groups()
            section = f"{name}.{sub}" if sub is not None else name
            line = rest
            if not line.strip():
                continue
        entry = _ENTRY.match(line)
        if entry and section:
            key = f"{section}.{entry.group(1)}"
            if git_key_executes(key, entry.group(2)):
                return key
    return None


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


@dataclass(frozen=True)
class ProtectedSnapshot:
    """Which protected paths existed before a command, and which directory `.git` was."""

    workspace: Path
    existed: frozenset[str]
    git: tuple[int, int] | None

    @classmethod
    def take(cls, workspace: Path) -> ProtectedSnapshot:
        existed = frozenset(name for name in PROTECTED_IN_WORKSPACE if os.path.lexists(workspace / name))
        return cls(workspace, existed, _identity(workspace / ".git"))

    def enforce(self) -> list[str]:
        """Undo what the command did to protected paths; one sentence per thing undone (empty: nothing)."""
        notes: list[str] = []
        git = self.workspace / ".git"
        now = _identity(git)
        if self.git is not None and now != self.git:
            notes += self._restore_git(now)
        elif self.git is None and now is not None:
            notes += self._check_new_git()
        for name in PROTECTED_IN_WORKSPACE:
            path = self.workspace / name
            if name in self.existed or not os.path.lexists(path):
                continue
            if name.startswith(".git/") and (self.git is None or _identity(git) != self.git):
                continue  # part of a .git handled above
            self._quarantine(path)
            notes.append(f"{name} is protected (programs outside the sandbox run it); the command created it.")
        return notes

    def _restore_git(self, now: tuple[int, int] | None) -> list[str]:
        git = self.workspace / ".git"
        original = None
        with contextlib.suppress(OSError):
            original = next((e for e in os.scandir(self.workspace) if _identity(Path(e.path)) == self.git), None)
        if now is not None:
            self._quarantine(git)
        if original is not None:
            os.rename(original.path, git)
            return [f"The command replaced .git (it moved the repository to {original.name}); it was put back."]
        return ["The command removed or replaced .git; the replacement was taken out of the way."]

    def _check_new_git(self) -> list[str]:
        git = self.workspace / ".git"
        reason = None
        with contextlib.suppress(OSError):
            if git.is_dir() and not git.is_symlink():
                hooks = git / "hooks"
                planted = [p.name for p in hooks.iterdir() if not p.name.endswith(".sample")] if hooks.is_dir() else []
                config = git / "config"
                key = git_config_executes(config.read_text(errors="replace")) if config.is_file() else None
                if planted:
                    reason = f"it holds hooks ({', '.join(sorted(planted)[:3])})"
                elif key:
                    reason = f"its config sets {key}, which git executes"
            else:
                reason = "it is not a plain directory"
        if reason is None:
            return []
        self._quarantine(git)
        return [f"The command created a .git that was taken out of the way: {reason}."]

    def _quarantine(self, path: Path) -> None:
        target = self.workspace / QUARANTINE / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        target.mkdir(parents=True, exist_ok=True)
        rel = path.relative_to(self.workspace).as_posix().replace("/", "__")
        destination = target / rel
        suffix = 0
        while os.path.lexists(destination):
            suffix += 1
            destination = target / f"{rel}.{suffix}"
        os.rename(path, destination)

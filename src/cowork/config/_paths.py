"""Where Cowork keeps its state: `COWORK_HOME` (default `~/.cowork`) and the files under it.

Everything under the home is private to the user: conversations, logs, tokens and secrets. Folders Cowork owns are
0700 and the files it writes there 0600, whatever the process umask (which is left alone: files the agent writes in
the user's workspace keep their usual modes). Modes are set explicitly after creation rather than through the umask.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "CoworkPaths",
    "private_dir",
    "private_file",
    "resolve_home",
    "write_private",
]

log = logging.getLogger(__name__)

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def resolve_home(env: Mapping[str, str] | None = None) -> Path:
    """`COWORK_HOME` if set, else `~/.cowork`; made absolute so later `chdir`s cannot move it."""
    env = os.environ if env is None else env
    raw = env.get("COWORK_HOME") or "~/.cowork"
    return Path(raw).expanduser().absolute()


def private_dir(path: Path) -> bool:
    """Create the folder `path` if missing and leave it 0700; returns whether an existing folder had to be tightened.

    Missing parents are created with the usual mode and never chmod-ed: only call this on a folder Cowork owns.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir(mode=PRIVATE_DIR_MODE)
    except FileExistsError:
        if not path.is_dir():
            raise  # a file in the way: never chmod it as if it were our folder
        return _set_mode(path, PRIVATE_DIR_MODE)
    _set_mode(path, PRIVATE_DIR_MODE)  # the umask may have taken bits we want
    return False


def private_file(path: Path) -> bool:
    """Create `path` empty if missing and leave it 0600; returns whether an existing file had to be tightened."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_FILE_MODE)
    except FileExistsError:
        return _set_mode(path, PRIVATE_FILE_MODE)
    try:
        _set_fd_mode(fd, path, PRIVATE_FILE_MODE)  # the umask may have taken bits we want
    finally:
        os.close(fd)
    return False


def write_private(path: Path, text: str) -> None:
    """Replace the contents of `path` with `text`, leaving the file 0600 even if it existed with a looser mode."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, PRIVATE_FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        # Before the first byte: O_CREAT's mode is ignored for a file that already exists.
        _set_fd_mode(fh.fileno(), path, PRIVATE_FILE_MODE)
        fh.write(text)


def _set_mode(path: Path, mode: int) -> bool:
    try:
        if stat.S_IMODE(path.stat().st_mode) == mode:
            return False
        os.chmod(path, mode)
    except FileNotFoundError:
        return False  # removed meanwhile (a finished MCP server's lock file): nothing left to protect
    except OSError as exc:
        # A file system without Unix modes, or a file someone else owns: say so, and keep running.
        log.warning("Could not make %s private (mode %o): %s", path, mode, exc.strerror or exc)
        return False
    return True


def _set_fd_mode(fd: int, path: Path, mode: int) -> bool:
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) == mode:
            return False
        os.fchmod(fd, mode)
    except OSError as exc:
        log.warning("Could not make %s private (mode %o): %s", path, mode, exc.strerror or exc)
        return False
    return True


def _tighten_tree(root: Path) -> int:
    """Make every folder under `root` 0700 and every file 0600, following no symlink; returns how many changed."""
    changed = 0
    for folder, dirs, files in os.walk(root):
        base = Path(folder)
        for name in dirs:
            path = base / name
            if not path.is_symlink():  # os.walk does not descend into these either
                changed += _set_mode(path, PRIVATE_DIR_MODE)
        for name in files:
            path = base / name
            with contextlib.suppress(FileNotFoundError):
                if stat.S_ISREG(path.lstat().st_mode):
                    changed += _set_mode(path, PRIVATE_FILE_MODE)
    return changed


@dataclass(frozen=True)
class CoworkPaths:
    """Every path of Cowork's state directory; nothing writes state outside these."""

    home: Path

    @property
    def config_file(self) -> Path:
        return self.home / "config.toml"

    @property
    def database(self) -> Path:
        return self.home / "cowork.db"

    @property
    def auth_dir(self) -> Path:
        return self.home / "auth"

    @property
    def token_file(self) -> Path:
        return self.auth_dir / "token"

    @property
    def logs_dir(self) -> Path:
        return self.home / "logs"

    @property
    def server_log(self) -> Path:
        return self.logs_dir / "server.log"

    @property
    def server_file(self) -> Path:
        """Written by a running server: its URL and pid, so clients can find it."""
        return self.home / "server.json"

    @property
    def tool_output_dir(self) -> Path:
        """Full outputs of tool calls that were cut, one folder per session."""
        return self.home / "tool-output"

    @property
    def run_dir(self) -> Path:
        """Runtime records (MCP server lock files)."""
        return self.home / "run"

    @property
    def history_file(self) -> Path:
        """The interactive prompt's history: every line the user typed."""
        return self.home / "history"

    def ensure(self) -> None:
        """Create the state folders private to the user, and tighten what an older Cowork left readable to others.

        The home itself is made 0700 even when it already existed: it is the configured state folder. Its parents
        are never touched. Inside, only folders Cowork owns are tightened (the database's own files are the store's
        concern; `config.toml`, skills and memory are the user's).
        """
        changed = int(private_dir(self.home))
        for folder in (self.logs_dir, self.auth_dir, self.tool_output_dir, self.run_dir):
            changed += private_dir(folder)
            changed += _tighten_tree(folder)
        for path in (self.server_file, self.history_file):
            if path.is_file() and not path.is_symlink():
                changed += _set_mode(path, PRIVATE_FILE_MODE)
        if changed:
            log.warning("Made %d file(s) and folder(s) under %s private to this user (0600/0700).", changed, self.home)

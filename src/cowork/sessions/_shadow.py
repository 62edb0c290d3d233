"""A folder's shadow repository: the content checkpoints keep, outside the folder, in git's object format.

One bare git repository per folder under `COWORK_HOME/checkpoints/`, used with the folder as its work tree. Shell
commands are checkpointed by snapshotting the whole folder before and after (`git add -A` + `git write-tree`: git's
index keeps every file's size and times, so an unchanged file is not read again) and comparing the two trees; a
file tool's change is one file, hashed and stored here directly (`store`), without running git.

The folder is untrusted, and git reads some of what it holds: its `.gitattributes` could ask for line-ending
conversion, filters or re-encoding, so `info/attributes` (which takes precedence) turns all of those off and the
bytes kept are the bytes on disk; filters need configuration, and only this repository's own configuration is
read (not the user's or the system's). Its `.gitignore` files are honoured: they can only make a command's
checkpoint keep less. Nothing here ever writes into the folder; restoring is `cowork.sessions._restore`'s.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ABSENT",
    "GIT_MISSING",
    "MODE_FILE",
    "MODE_LINK",
    "NOT_KEPT",
    "Change",
    "GitMissing",
    "ShadowRepo",
    "State",
    "blob_id",
    "git_path",
    "read_state",
    "write_private",
]

MODE_FILE = 0o100644
MODE_EXEC = 0o100755
MODE_LINK = 0o120000
MODE_GITLINK = 0o160000
"""A nested repository: git keeps only which commit it was at, not its files."""


@dataclass(frozen=True, slots=True)
class State:
    """What one path held: `blob` (git's object id of its bytes) and `mode`; mode 0: nothing there; a `blob` of
    None with a mode: something that was not kept (too large, not a regular file or link)."""

    blob: str | None
    mode: int

    @property
    def exists(self) -> bool:
        return self.mode != 0

    @property
    def kept(self) -> bool:
        return self.mode == 0 or (self.blob is not None and self.mode in (MODE_FILE, MODE_EXEC, MODE_LINK))


ABSENT = State(None, 0)
NOT_KEPT = State(None, -1)


@dataclass(frozen=True, slots=True)
class Change:
    """One path a call changed (relative to the folder, with `/`)."""

    path: str
    before: State
    after: State


class GitMissing(OSError):
    """git is not installed: shell commands cannot be checkpointed."""


GIT_MISSING = "git is not installed: shell commands are not checkpointed (edits and writes are)"
"""What the log and `health` say when git is missing."""


def git_path() -> str | None:
    """The git executable, if installed."""
    return shutil.which("git")


def blob_id(data: bytes) -> str:
    """git's object id for a blob of these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def read_state(path: Path, max_bytes: int) -> tuple[State, bytes | None]:
    """What `path` holds now (without following a last link) and its bytes when they are kept."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT, None
    if stat.S_ISLNK(info.st_mode):
        data = os.fsencode(os.readlink(path))
        return State(blob_id(data), MODE_LINK), data
    if not stat.S_ISREG(info.st_mode):
        return NOT_KEPT, None
    mode = MODE_EXEC if info.st_mode & 0o111 else MODE_FILE
    if info.st_size > max_bytes:
        return State(None, mode), None
    data = path.read_bytes()
    return State(blob_id(data), mode), data


_ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding -diff -merge\n"
_LOCKS: dict[Path, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


class ShadowRepo:
    """The shadow repository of one folder. Its methods block (run them in a thread); one at a time per folder."""

    def __init__(self, git_dir: Path, workspace: Path, exclude: list[str], *, max_bytes: int | None = None) -> None:
        self.git_dir = git_dir
        self.workspace = workspace
        self.exclude = exclude
        self.max_bytes = max_bytes
        """Files larger than this that appear in the folder are left out of snapshots (None: no limit)."""
        self._ready = False
        with _LOCKS_GUARD:
            self.lock = _LOCKS.setdefault(git_dir, threading.Lock())

    @staticmethod
    def location(home: Path, workspace: Path) -> Path:
        """Where a folder's shadow repository lives: named by a hash of the folder's resolved path."""
        digest = hashlib.sha256(os.fsencode(workspace.resolve())).hexdigest()[:20]
        return home / "checkpoints" / digest

    # -- git ------------------------------------------------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_DIR": str(self.git_dir),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "HOME": str(self.git_dir),
            "LC_ALL": "C",
            "GIT_TERMINAL_PROMPT": "0",
        }

    def _git(self, *args: str, stdin: bytes | None = None, work_tree: bool = True) -> bytes:
        git = git_path()
        if git is None:
            raise GitMissing("git is not installed")
        env = self._env()
        if work_tree:
            env["GIT_WORK_TREE"] = str(self.workspace)
        done = subprocess.run(
            [git, *args],
            input=stdin,
            capture_output=True,
            env=env,
            cwd=self.workspace,
            check=False,
        )
        if done.returncode != 0:
            raise OSError(f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()[:500]}")
        return done.stdout

    def ensure(self, *, again: bool = False) -> None:
        """Create the repository on first use, and its exclusions and attributes (once per object, or `again`)."""
        if self._ready and not again and (self.git_dir / "HEAD").exists():
            return
        if not (self.git_dir / "HEAD").exists():
            # Private like the rest of Cowork's home: it holds copies of the folder's files.
            for folder in (self.git_dir.parent, self.git_dir):
                folder.mkdir(parents=True, exist_ok=True, mode=0o700)
                folder.chmod(0o700)
            if git_path() is None:
                # Without git, file tools' checkpoints still work (their content is written and read here);
                # the repository is made properly once git is there.
                (self.git_dir / "objects").mkdir(exist_ok=True, mode=0o700)
            else:
                self._git("init", "--quiet", "--bare", "--shared=0600", str(self.git_dir), work_tree=False)
                for key, value in (
                    ("core.bare", "false"),
                    ("core.autocrlf", "false"),
                    ("core.symlinks", "true"),
                    ("core.fsmonitor", "false"),
                    ("core.untrackedCache", "true"),
                    ("core.quotePath", "false"),
                    ("gc.auto", "0"),
                    ("index.version", "4"),
                ):
                    self._git("config", key, value)
        _write_if_changed(self.git_dir / "cowork-folder", str(self.workspace))  # whose repository this is (pruning)
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True, mode=0o700)
        _write_if_changed(info / "attributes", _ATTRIBUTES)
        try:
            large = (info / "large-files").read_text()  # written before the first snapshot (see `Checkpoints`)
        except FileNotFoundError:
            large = ""
        _write_if_changed(info / "exclude", "".join(f"{p}\n" for p in ["/.git/", *self.exclude]) + large)
        self._ready = True

    def snapshot(self) -> str:
        """The folder as it is now, as a tree id (its new content kept)."""
        self._add_all()
        return self._git("write-tree").decode().strip()

    def changes_since(self, before: str) -> list[Change]:
        """What differs between a tree and the folder as it is now, path by path (its new content kept; a rename
        is a deletion and an addition)."""
        self._add_all()
        return _parse_raw(self._git("diff-index", "--cached", "-z", "--no-renames", before))

    def _add_all(self) -> None:
        """`git add -A`, after leaving out new files larger than `max_bytes` (a download, a build artefact): git
        would read, hash and compress every byte of them."""
        if self.max_bytes is not None:
            large = []
            for raw in self._git("ls-files", "--others", "--exclude-standard", "-z").split(b"\0"):
                if not raw:
                    continue
                try:
                    if os.lstat(self.workspace / os.fsdecode(raw)).st_size > self.max_bytes:
                        large.append("/" + os.fsdecode(raw))
                except OSError:
                    continue
            if large:
                self.exclude_paths(large)
        self._git("add", "--all", "--ignore-errors", "--", ".")

    def exclude_paths(self, paths: list[str]) -> None:
        """Leave these paths (`/` + relative to the folder) out of every later snapshot."""
        listed = self.git_dir / "info" / "large-files"
        try:
            known = listed.read_text()
        except FileNotFoundError:
            known = ""
        write_private(listed, known + "".join(_escape(path) + "\n" for path in paths))
        self.ensure(again=True)

    # -- objects --------------------------------------------------------------------------------------------------

    def _object_path(self, oid: str) -> Path:
        return self.git_dir / "objects" / oid[:2] / oid[2:]

    def store(self, data: bytes) -> str:
        """Keep these bytes (as a loose git object); their id."""
        oid = blob_id(data)
        target = self._object_path(oid)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            temporary = target.parent / f"tmp-{os.getpid()}-{threading.get_ident()}"
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(zlib.compress(b"blob %d\0" % len(data) + data, 1))
            os.replace(temporary, target)
        return oid

    def read(self, oid: str) -> bytes:
        """The bytes kept under this id.

        Raises:
            OSError: they are not kept (any more).
        """
        try:
            raw = zlib.decompress(self._object_path(oid).read_bytes())
        except FileNotFoundError:
            return self._git("cat-file", "blob", oid)
        header, _, data = raw.partition(b"\0")
        if not header.startswith(b"blob "):
            raise OSError(f"object {oid} is not a file's content")
        return data

    def prune(self, keep: set[str]) -> int:
        """Delete the kept content nothing needs any more: blobs neither in `keep` nor in the index (which
        later snapshots build on). Trees stay (they are small, and the index's cache refers to them).
        Returns the bytes freed."""
        needed = set(keep)
        if (self.git_dir / "index").exists():
            for line in self._git("ls-files", "--stage", "-z").split(b"\0"):
                if line:
                    needed.add(line.split(b" ", 2)[1].decode())
        freed = 0
        objects = self.git_dir / "objects"
        for folder in objects.glob("[0-9a-f][0-9a-f]"):
            for item in folder.iterdir():
                oid = folder.name + item.name
                if oid in needed or len(oid) != 40:
                    continue
                try:
                    with item.open("rb") as handle:
                        head = zlib.decompressobj().decompress(handle.read(64), 16)
                    if not head.startswith(b"blob "):
                        continue
                    size = item.stat().st_size
                    item.unlink()
                    freed += size
                except (OSError, zlib.error):
                    continue
        return freed

    def size(self) -> int:
        """Bytes the kept content takes on disk."""
        total = 0
        for root, _dirs, files in os.walk(self.git_dir / "objects"):
            for name in files:
                try:
                    total += os.lstat(os.path.join(root, name)).st_size
                except OSError:
                    pass
        return total


def _escape(pattern: str) -> str:
    """A path as a gitignore pattern that matches only itself."""
    return "".join("\\" + c if c in "*?[]!#\\ " else c for c in pattern)


def _parse_raw(out: bytes) -> list[Change]:
    """git's `--raw -z` output: `:old-mode new-mode old-id new-id status NUL path NUL`…"""
    fields = out.split(b"\0")
    changes = []
    for i in range(0, len(fields) - 1, 2):
        meta, path = fields[i], fields[i + 1]
        if not meta.startswith(b":"):
            continue
        old_mode, new_mode, old_id, new_id, _status = meta[1:].decode().split(" ")
        changes.append(Change(os.fsdecode(path), _state(old_id, int(old_mode, 8)), _state(new_id, int(new_mode, 8))))
    return changes


def _state(oid: str, mode: int) -> State:
    if mode == 0:
        return ABSENT
    if mode == MODE_GITLINK:
        return State(None, MODE_GITLINK)
    return State(oid, mode)


def _write_if_changed(path: Path, text: str) -> None:
    try:
        if path.read_text() == text:
            return
    except OSError:
        pass
    write_private(path, text)


def write_private(path: Path, text: str) -> None:
    """Write a file only this user can read, whatever the umask."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)

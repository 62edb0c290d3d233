"""Taking checkpoints back: what a restore does, path by path (`RestorePlan`), and doing it.

Each path goes back to what it held before the earliest change taken back, and only those paths: what the user
changed elsewhere in the folder is left alone. A path that no longer holds what Cowork's last change left there was
changed outside Cowork since: the plan lists it as a conflict, and overwriting it needs the user's say-so
(`cowork.runtime._rewind`). A restore never writes through a link or a file standing where a folder was, is
checked again right before each write, and writes each file whole under a temporary name, renamed into place.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cowork.protocol import FileChange
from cowork.store import CheckpointRow

from ._shadow import ABSENT, MODE_EXEC, MODE_LINK, ShadowRepo, State, read_state

__all__ = ["RestorePlan", "plan_restore"]

_MAX_DIFF_BYTES = 2 * 1024 * 1024


@dataclass
class _Step:
    path: str
    target: State
    expected: State
    current: State
    current_bytes: bytes | None
    status: Literal["added", "modified", "deleted"]
    skip: str | None = None


@dataclass
class RestorePlan:
    """What restoring a set of checkpoints does, path by path."""

    repo: ShadowRepo
    steps: list[_Step]
    checkpoints: list[CheckpointRow]

    @property
    def conflicts(self) -> list[str]:
        return [s.path for s in self.steps if s.skip is None and s.current != s.expected]

    @property
    def skipped(self) -> list[str]:
        return [f"{s.path}: {s.skip}" for s in self.steps if s.skip is not None]

    def changes(self, *, forward: bool = False) -> list[FileChange]:
        """Each file from what it holds now to what it held (unified diff for text); `forward`: the other way, from
        what it held to what it holds now (what the changes did, for `session/diff`)."""
        from cowork.tools._diffs import unified_diff

        out = []
        for step in self.steps:
            if step.skip is not None:
                continue
            now = _text(step.current, step.current_bytes)
            target_bytes = self.repo.read(step.target.blob) if step.target.blob else None
            then = _text(step.target, target_bytes)
            described = [_describe(step.current, step.current_bytes), _describe(step.target, target_bytes)]
            status = step.status
            if forward:
                now, then = then, now
                described.reverse()
                status = "deleted" if status == "added" else "added" if status == "deleted" else status
            if now == then and step.current.mode != step.target.mode:
                modes = [f"{step.current.mode:o}", f"{step.target.mode:o}"]
                diff = "mode " + " → ".join(reversed(modes) if forward else modes) + "\n"
            elif isinstance(now, str | None) and isinstance(then, str | None) and not (now is None and then is None):
                diff = unified_diff(now, then, step.path)
            else:
                diff = " → ".join(described) + "\n"
            lines = diff.splitlines()
            out.append(
                FileChange(
                    path=step.path,
                    status=status,
                    diff=diff,
                    additions=sum(1 for x in lines if x.startswith("+") and not x.startswith("+++")),
                    deletions=sum(1 for x in lines if x.startswith("-") and not x.startswith("---")),
                )
            )
        return out

    def apply(self) -> list[str]:
        """Restore every path that can be, removals first (a link the call made may stand where a folder is
        restored); each path is checked again just before it is written. The paths restored."""
        done = []
        root = self.repo.workspace
        steps = [s for s in self.steps if s.skip is None]
        for step in sorted(steps, key=lambda s: s.target.exists):
            path = root / step.path
            step.skip = _unsafe(path, root, set())
            if step.skip is not None:
                continue
            if not step.target.exists:
                if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
                    path.unlink()
                    _remove_empty_parents(path.parent, root)
            else:
                assert step.target.blob is not None
                data = self.repo.read(step.target.blob)
                path.parent.mkdir(parents=True, exist_ok=True)
                temporary = path.parent / f".cowork-restore-{os.getpid()}-{path.name}"[:255]
                if os.path.lexists(temporary):
                    temporary.unlink()
                if step.target.mode == MODE_LINK:
                    os.symlink(os.fsdecode(data), temporary)
                else:
                    temporary.write_bytes(data)
                    temporary.chmod(0o755 if step.target.mode == MODE_EXEC else 0o644)
                os.replace(temporary, path)
            done.append(step.path)
        return done


def plan_restore(repo: ShadowRepo, rows: list[CheckpointRow], max_bytes: int) -> RestorePlan:
    """What taking back these checkpoints does (`rows` newest first), path by path. Blocking: reads each file."""
    target: dict[str, State] = {}
    expected: dict[str, State] = {}
    for row in reversed(rows):  # oldest first: the earliest "before" and the latest "after" win
        for file in row.files:
            target.setdefault(file.path, State(file.before_blob, file.before_mode))
            expected[file.path] = State(file.after_blob, file.after_mode)
    steps = []
    removed = {rel for rel, want in target.items() if not want.exists}
    for rel in sorted(target):
        want = target[rel]
        path = repo.workspace / rel
        skip = _unsafe(path, repo.workspace, removed)
        current, data = (ABSENT, None) if skip else read_state(path, max_bytes)
        if skip is None and current == want and want.kept:
            continue  # already as it was
        if skip is None:
            if want.exists and not want.kept:
                skip = "it was too large to keep, or not a file" if want.mode != 0o160000 else "a nested repository"
            elif want.blob is not None and not _has(repo, want.blob):
                skip = "its content is no longer kept (pruned)"
            elif current.mode == -1 and os.path.isdir(path):
                skip = "it is a folder now"
        status: Literal["added", "modified", "deleted"] = (
            "deleted" if not want.exists else "added" if not current.exists else "modified"
        )
        steps.append(_Step(rel, want, expected[rel], current, data, status, skip))
    return RestorePlan(repo, steps, rows)


def _has(repo: ShadowRepo, oid: str) -> bool:
    try:
        repo.read(oid)
    except OSError:
        return False
    return True


def _unsafe(path: Path, root: Path, removed: set[str]) -> str | None:
    """Why writing at `path` could reach outside the folder (a link or a file on its way, unless the same restore
    removes it first: `removed`), if it could."""
    current = root
    for part in path.relative_to(root).parts[:-1]:
        current = current / part
        if current.relative_to(root).as_posix() in removed:
            return None
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return None  # created as folders when restored
        if stat.S_ISLNK(info.st_mode):
            return f"{current.relative_to(root).as_posix()} is a link now"
        if not stat.S_ISDIR(info.st_mode):
            return f"{current.relative_to(root).as_posix()} is not a folder now"
    return None


def _remove_empty_parents(folder: Path, root: Path) -> None:
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _text(state: State, data: bytes | None) -> str | bytes | None:
    """The text to diff; None when absent; the bytes themselves when they are not text."""
    from cowork.tools._fsutil import SNIFF_BYTES, looks_binary

    if not state.exists:
        return None
    if data is None or state.mode == MODE_LINK or len(data) > _MAX_DIFF_BYTES or looks_binary(data[:SNIFF_BYTES]):
        return data or b""
    return data.decode("utf-8", errors="replace")


def _describe(state: State, data: bytes | None) -> str:
    if not state.exists:
        return "(no file)"
    if state.mode == MODE_LINK and data is not None:
        return f"link to {os.fsdecode(data)!r}"
    if data is None:
        return "(not kept)"
    return f"binary file, {len(data):,} bytes"

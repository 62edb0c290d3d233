"""Checkpoints: before each tool call that changes a session's folder, what the call changed, so it can be taken back.

A file tool (`write`, `edit`, `notebookEdit`) names the file it changes: its bytes before are kept (hashed and stored
in the folder's shadow repository, `cowork.sessions._shadow`), and its state after is noted, without running git. A
shell command the policy does not know to be read-only can change anything: the whole folder is snapshotted before
and after (git's index makes an unchanged file cost one `stat`) and the two are compared. Either way one row per call
holds each changed path before and after, linked to the call and its turn; a call that changed nothing leaves none.

Restoring (`RestorePlan`) puts each path back to what it held before the earliest change taken back, and only those
paths: what the user changed elsewhere in the folder is left alone. A path that no longer holds what Cowork's last
change left there was changed outside Cowork since: the plan lists it as a conflict, and overwriting it needs the
user's say-so (`cowork.runtime._rewind`).
Checkpoints are pruned by age and by the space their content takes (`CheckpointsConfig`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

import anyio.to_thread

from cowork.config import CheckpointsConfig
from cowork.protocol import FileChange
from cowork.store import CheckpointFileRow, CheckpointRow, Connection, Database, repos

from ._shadow import ABSENT, MODE_EXEC, MODE_LINK, GitMissing, ShadowRepo, State, read_state, write_private

__all__ = ["Checkpoints", "Pending", "RestorePlan"]

log = logging.getLogger(__name__)

_PRUNE_EVERY = 100
"""Checkpoints recorded between two prunings (one also runs at start-up)."""
_MAX_DIFF_BYTES = 2 * 1024 * 1024


@dataclass
class Pending:
    """The state kept before one call: the files it names, or the whole folder's tree."""

    repo: ShadowRepo
    files: dict[str, State] | None = None
    sizes: dict[str, int] = field(default_factory=dict)
    stamps: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Size and modification time of files too large to keep: whether the call changed one is told by these."""
    tree: str | None = None


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


class Checkpoints:
    """Records checkpoints around tool calls and plans restores; its methods never raise on a checkpoint failure
    during a call (the call goes on, and the failure is logged)."""

    def __init__(self, db: Database, home: Path, config: CheckpointsConfig) -> None:
        self._db = db
        self._home = home
        self.config = config
        self._recorded = 0
        self._repos: dict[Path, ShadowRepo] = {}
        self._said_git_missing = False
        self._pruning: asyncio.Task[int] | None = None

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    def repo(self, workspace: Path) -> ShadowRepo:
        """The folder's shadow repository (one object per folder, so it is set up once per process)."""
        repo = self._repos.get(workspace)
        if repo is None or repo.exclude != self.config.exclude or repo.max_bytes != self._max_bytes:
            location = ShadowRepo.location(self._home, workspace)
            repo = ShadowRepo(location, workspace, list(self.config.exclude), max_bytes=self._max_bytes)
            self._repos[workspace] = repo
        return repo

    @property
    def _max_bytes(self) -> int:
        return int(self.config.max_file_mb * 1024 * 1024)

    # -- around a call --------------------------------------------------------------------------------------------

    async def before(self, workspace: Path, files: Sequence[Path] | None) -> Pending | None:
        """Keep what the call may change: `files` (paths inside `workspace`), or with None the whole folder."""
        if not self.enabled:
            return None
        repo = self.repo(workspace)
        try:
            if files is None:
                return await anyio.to_thread.run_sync(self._before_tree, repo)
            return await anyio.to_thread.run_sync(self._before_files, repo, files)
        except GitMissing:
            if not self._said_git_missing:
                log.warning("git is not installed: shell commands are not checkpointed (edits and writes are)")
                self._said_git_missing = True
        except Exception:
            log.exception("could not keep a checkpoint in %s", workspace)
        return None

    def _before_tree(self, repo: ShadowRepo) -> Pending | None:
        with repo.lock:
            repo.ensure()
            too_large = repo.git_dir / "info" / "too-large"  # the limit the folder was found over
            limit = self.config.max_folder_files
            if too_large.exists() and _number(too_large) >= limit:
                return None  # (said in the log when found; a higher limit looks again)
            if not (repo.git_dir / "index").exists():  # the first snapshot of the folder
                if _survey(repo, self._max_bytes, limit) is not None:
                    write_private(too_large, f"{limit}\n")
                    return None
            return Pending(repo, tree=repo.snapshot())

    def _before_files(self, repo: ShadowRepo, files: Sequence[Path]) -> Pending:
        with repo.lock:
            repo.ensure()
            pending = Pending(repo, files={})
            assert pending.files is not None
            for path in files:
                rel = _relative(path, repo.workspace)
                if rel is None:
                    continue
                state, data = read_state(path, self._max_bytes)
                if data is not None:
                    repo.store(data)
                    pending.sizes[rel] = len(data)
                elif state.exists:
                    pending.stamps[rel] = _stamp(path)
                pending.files[rel] = state
            return pending

    async def after(
        self, pending: Pending | None, *, session_id: str, operation_id: str, tool_call_id: str, tool: str
    ) -> int | None:
        """Record what the call changed (nothing recorded when it changed nothing); the checkpoint's id."""
        if pending is None:
            return None
        try:
            files = await anyio.to_thread.run_sync(self._after, pending)
        except Exception:
            log.exception("could not finish a checkpoint in %s", pending.repo.workspace)
            return None
        if not files:
            return None
        row = CheckpointRow(
            0,
            session_id,
            str(pending.repo.workspace),
            operation_id,
            tool_call_id,
            tool,
            datetime.now(UTC),
            None,
            tuple(files),
        )
        try:
            checkpoint_id = await self._db.write(lambda conn: repos.checkpoints.insert(conn, row))
        except Exception:  # the session deleted meanwhile, the store failing: the call itself goes on
            log.exception("could not record a checkpoint of %s", tool_call_id)
            return None
        self._recorded += 1
        if self._recorded % _PRUNE_EVERY == 0:
            self.prune_soon()
        return checkpoint_id

    def prune_soon(self) -> None:
        """Prune in the background (at start-up, and every `_PRUNE_EVERY` checkpoints), unless already pruning."""
        if self._pruning is None or self._pruning.done():
            self._pruning = asyncio.get_running_loop().create_task(self._prune_quietly(), name="prune-checkpoints")

    async def _prune_quietly(self) -> int:
        try:
            return await self.prune()
        except Exception:
            log.exception("could not prune checkpoints")
            return 0

    async def close(self) -> None:
        """Stop a pruning under way (it is safe to stop anywhere: it only deletes what nothing refers to)."""
        if self._pruning is not None:
            self._pruning.cancel()
            await asyncio.gather(self._pruning, return_exceptions=True)

    def _after(self, pending: Pending) -> list[CheckpointFileRow]:
        repo = pending.repo
        if pending.tree is not None:
            with repo.lock:
                changes = repo.changes_since(pending.tree)
            unnamed = [c.path for c in changes if not _storable(c.path)]
            if unnamed:
                log.warning("%d changed file(s) with names that are not UTF-8 are not checkpointed", len(unnamed))
            return [
                CheckpointFileRow(c.path, c.before.blob, c.before.mode, c.after.blob, c.after.mode)
                for c in changes
                if _storable(c.path)
            ]
        out = []
        for rel, before in (pending.files or {}).items():
            path = repo.workspace / rel
            after, _data = read_state(path, self._max_bytes)
            if after != before or (rel in pending.stamps and _stamp(path) != pending.stamps[rel]):
                out.append(
                    CheckpointFileRow(rel, before.blob, before.mode, after.blob, after.mode, pending.sizes.get(rel, 0))
                )
        return out

    # -- pruning --------------------------------------------------------------------------------------------------

    async def prune(self) -> int:
        """Delete checkpoints past `keep_days`, then the oldest while the kept content takes more than
        `max_total_mb`, each time with the content nothing refers to any more. Returns how many were deleted."""
        config = self.config
        cutoff = datetime.now(UTC) - timedelta(days=config.keep_days)
        deleted, _workspaces = await self._db.write(lambda conn: repos.checkpoints.prune(conn, older_than=cutoff))
        await self._collect(await anyio.to_thread.run_sync(self._folders))  # also what deleted sessions left
        limit = int(config.max_total_mb * 1024 * 1024)
        while True:
            rows = await self._db.read(repos.checkpoints.sizes)  # oldest first
            if not rows:
                break
            total = await anyio.to_thread.run_sync(self._disk_size, sorted({ws for _id, ws, _size in rows}))
            if total <= limit:
                break
            batch = rows[: max(1, len(rows) // 10)]
            ids = [checkpoint_id for checkpoint_id, _ws, _size in batch]
            count, workspaces = await self._db.write(functools.partial(_prune_rows, older_than=cutoff, ids=ids))
            deleted += count
            await self._collect(workspaces)
        return deleted

    async def _collect(self, workspaces: list[str]) -> None:
        """Delete the content the remaining checkpoints of these folders no longer refer to."""
        for workspace in workspaces:
            keep = await self._db.read(functools.partial(_live_blobs, workspace=workspace))
            repo = self.repo(Path(workspace))
            if repo.git_dir.exists():
                await anyio.to_thread.run_sync(_prune_repo, repo, keep)

    def _folders(self) -> list[str]:
        """The folders that have a shadow repository."""
        out = []
        for marker in sorted((self._home / "checkpoints").glob("*/cowork-folder")):
            try:
                out.append(marker.read_text())
            except OSError:
                continue
        return out

    def _disk_size(self, workspaces: list[str]) -> int:
        return sum(self.repo(Path(ws)).size() for ws in workspaces)

    # -- restoring ------------------------------------------------------------------------------------------------

    async def plan(self, workspace: Path, rows: list[CheckpointRow]) -> RestorePlan:
        """What taking back these checkpoints does (`rows` newest first)."""
        repo = self.repo(workspace)
        return await anyio.to_thread.run_sync(self._plan, repo, rows)

    def _plan(self, repo: ShadowRepo, rows: list[CheckpointRow]) -> RestorePlan:
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
            current, data = (ABSENT, None) if skip else _current(path, self._max_bytes)
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


def _prune_rows(conn: Connection, *, older_than: datetime, ids: list[int]) -> tuple[int, list[str]]:
    return repos.checkpoints.prune(conn, older_than=older_than, ids=ids)


def _live_blobs(conn: Connection, *, workspace: str) -> set[str]:
    return repos.checkpoints.live_blobs(conn, workspace)


def _relative(path: Path, workspace: Path) -> str | None:
    try:
        rel = path.relative_to(workspace)
    except ValueError:
        try:
            rel = path.resolve().relative_to(workspace.resolve())
        except (ValueError, OSError):
            return None
    return rel.as_posix() if rel.parts else None


def _current(path: Path, max_bytes: int) -> tuple[State, bytes | None]:
    state, data = read_state(path, max_bytes)
    return state, data


def _storable(path: str) -> bool:
    """Whether a path can be stored as text (a name that is not UTF-8 decodes to lone surrogates)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _number(path: Path) -> int:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return 0


def _stamp(path: Path) -> tuple[int, int]:
    try:
        info = os.lstat(path)
    except OSError:
        return (-1, -1)
    return (info.st_size, info.st_mtime_ns)


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


def _survey(repo: ShadowRepo, max_bytes: int, max_files: int) -> str | None:
    """Before a folder's first snapshot: leave out the files larger than the cap (`info/large-files`, read into
    `info/exclude`); why the folder is too large to snapshot at all, if it is (more files than `max_files`, or
    a walk longer than 20 s)."""
    large = []
    count = 0
    started = time.monotonic()
    # Folders excluded by a plain name (`node_modules/`) are not counted; patterns with wildcards are left to git.
    skipped = {".git", *(p.strip("/") for p in repo.exclude if p.endswith("/") and not set(p) & set("*?[!\\"))}
    for folder, dirs, files in os.walk(repo.workspace):
        dirs[:] = [d for d in dirs if d not in skipped and not os.path.islink(os.path.join(folder, d))]
        count += len(files)
        if count > max_files or time.monotonic() - started > 20:
            log.warning(
                "%s holds more than %d files: shell commands there are not checkpointed (edits and writes are)",
                repo.workspace,
                min(count, max_files),
            )
            return f"more than {max_files} files"
        for name in files:
            full = os.path.join(folder, name)
            try:
                if os.lstat(full).st_size > max_bytes:
                    large.append("/" + Path(full).relative_to(repo.workspace).as_posix())
            except OSError:
                continue
    if large:
        repo.exclude_paths(large)
    return None


def _prune_repo(repo: ShadowRepo, keep: set[str]) -> None:
    with repo.lock:
        repo.prune(keep)

"""Checkpoints: before each tool call that changes a session's folder, what the call changed, so it can be taken back.

A file tool (`write`, `edit`, `notebookEdit`) names the file it changes: its bytes before are kept (hashed and stored
in the folder's shadow repository, `cowork.sessions._shadow`), and its state after is noted, without running git. A
shell command the policy does not know to be read-only can change anything: the whole folder is snapshotted before
and after (git's index makes an unchanged file cost one `stat`) and the two are compared. Either way one row per call
holds each changed path before and after, linked to the call and its turn; a call that changed nothing leaves none.

Restoring is `cowork.sessions._restore`'s (`RestorePlan`). Checkpoints are pruned by age and by the space their
content takes (`CheckpointsConfig`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio.to_thread

from cowork.config import CheckpointsConfig
from cowork.store import CheckpointFileRow, CheckpointRow, Connection, Database, repos

from ._restore import RestorePlan, plan_restore
from ._shadow import GIT_MISSING, GitMissing, ShadowRepo, State, read_state, write_private

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
                log.warning(GIT_MISSING)
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
    ) -> CheckpointRow | None:
        """Record what the call changed (nothing recorded when it changed nothing); the checkpoint, with its id."""
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
        return replace(row, id=checkpoint_id)

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
        """What taking back these checkpoints does (`rows` newest first; see `cowork.sessions._restore`)."""
        return await anyio.to_thread.run_sync(plan_restore, self.repo(workspace), rows, self._max_bytes)


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

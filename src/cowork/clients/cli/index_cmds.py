"""`cowork index` (index a folder's documents and web pages, with a progress bar) and `cowork search` (search it).

Thin clients over `ingest/add`, `ingest/status`, `ingest/progress` and `memory/search`; the server does the work and
keeps it going after Ctrl-C (the job is persisted: `cowork index --status` shows it, a second `cowork index`
resumes nothing twice).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from cowork.clients.connection import RpcClient, RpcError, ensure_server
from cowork.protocol import IngestJobInfo, MemorySearchResult, is_url

__all__ = ["main_index", "main_search"]

_ACTIVE = ("pending", "processing")


async def _connect(workspace: Path) -> RpcClient:
    address = await asyncio.to_thread(ensure_server, workspace=workspace)
    client = await RpcClient.connect(address)
    await client.call("initialize", {"clientInfo": {"name": "cowork-index", "version": "1"}})
    return client


def _line(job: IngestJobInfo) -> str:
    where = ", ".join([*job.urls, *job.paths])
    items = "files" if not job.urls else "pages" if not job.paths else "pages and files"
    counts = f"{job.done}/{job.total} {items}, {job.chunks} chunks embedded"
    failed = f", {job.failed} failed" if job.failed else ""
    line = f"{job.job_id[:8]}  {job.status:<10} {counts}{failed}  [{where}] in {job.folder}"
    if not job.error:
        return line
    if job.status == "failed":
        return f"{line} — {job.error}"
    return line + "".join(f"\n  failed: {reason}" for reason in job.error.splitlines())  # one item each


async def _job_id(client: RpcClient, prefix: str) -> str | None:
    """The job whose id starts with `prefix` (as `--status` shows the first 8 characters), if exactly one does."""
    jobs = (await client.call("ingest/status", {"limit": 200}))["jobs"]
    matches = [j["jobId"] for j in jobs if j["jobId"].startswith(prefix)]
    return matches[0] if len(matches) == 1 else None


async def _control(client: RpcClient, verb: str, prefix: str, as_json: bool) -> int:
    job_id = await _job_id(client, prefix)
    if job_id is None:
        print(f"cowork index: no single job starts with {prefix!r} (see `cowork index --status`)", file=sys.stderr)
        return 2
    try:
        job = IngestJobInfo.model_validate(await client.call(f"ingest/{verb}", {"jobId": job_id}))
    except RpcError as error:
        print(f"cowork index: {error}", file=sys.stderr)
        return 2
    if verb == "resume":
        updates: asyncio.Queue[IngestJobInfo] = asyncio.Queue()
        client.on_notification = lambda method, params: (
            updates.put_nowait(IngestJobInfo.model_validate(params)) if method == "ingest/progress" else None
        )
        job = await _follow(client, job, updates, as_json)
    print(json.dumps(job.model_dump(mode="json", by_alias=True)) if as_json else _line(job))
    return 0 if job.status in ("done", "paused", "cancelled") else 1


async def _index(
    workspace: Path, paths: list[str], *, status: bool, as_json: bool, action: tuple[str, str] | None
) -> int:
    client = await _connect(workspace)
    try:
        if action is not None:
            return await _control(client, action[0], action[1], as_json)
        if status:
            jobs = [IngestJobInfo.model_validate(j) for j in (await client.call("ingest/status", {}))["jobs"]]
            if as_json:
                print(json.dumps([j.model_dump(mode="json", by_alias=True) for j in jobs]))
            for job in [] if as_json else jobs:
                print(_line(job))
            if not jobs and not as_json:
                print("No indexing job yet: `cowork index` indexes this folder.")
            return 0
        updates: asyncio.Queue[IngestJobInfo] = asyncio.Queue()

        def on_notification(method: str, params: dict[str, Any]) -> None:
            if method == "ingest/progress":
                updates.put_nowait(IngestJobInfo.model_validate(params))

        client.on_notification = on_notification
        try:
            # A `scheme://` argument is a URL (the server refuses any but http and https), anything else a path.
            urls = [p for p in paths if is_url(p)]
            files = [p for p in paths if not is_url(p)]
            params = {"paths": files if files or urls else ["."], "urls": urls, "workspace": str(workspace)}
            raw = await client.call("ingest/add", params)
        except RpcError as error:
            print(f"cowork index: {error}", file=sys.stderr)
            return 2 if error.code in ("path_denied", "invalid_params", "workspace_not_found") else 1
        job = IngestJobInfo.model_validate(raw)
        job = await _follow(client, job, updates, as_json)
        if as_json:
            print(json.dumps(job.model_dump(mode="json", by_alias=True)))
        else:
            print(_line(job))
        return 0 if job.status == "done" else 1
    finally:
        await client.close()


async def _follow(
    client: RpcClient, job: IngestJobInfo, updates: asyncio.Queue[IngestJobInfo], quiet: bool
) -> IngestJobInfo:
    """Wait for the job to end, drawing a progress bar (files) unless `quiet`."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("files · {task.fields[chunks]} chunks"),
        TimeElapsedColumn(),
        disable=quiet or not sys.stderr.isatty(),
        console=None,
        transient=True,
    ) as progress:
        task = progress.add_task("index", total=job.total or None, chunks=0)
        while job.status in _ACTIVE:
            try:
                update = await asyncio.wait_for(updates.get(), timeout=2.0)
                if update.job_id == job.job_id:
                    job = update
            except TimeoutError:  # a notification missed (or none due): ask
                statuses = (await client.call("ingest/status", {"jobId": job.job_id}))["jobs"]
                job = IngestJobInfo.model_validate(statuses[0])
            progress.update(task, total=job.total or None, completed=job.done, chunks=job.chunks)
    return job


def main_index(
    workspace: Path | None,
    paths: list[str],
    *,
    status: bool,
    as_json: bool,
    action: tuple[str, str] | None = None,
) -> int:
    folder = (workspace or Path.cwd()).resolve()
    if not folder.is_dir():
        print(f"cowork index: {folder} is not a folder", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_index(folder, paths, status=status, as_json=as_json, action=action))
    except KeyboardInterrupt:
        print("\nStopped watching; the server goes on indexing (`cowork index --status`).", file=sys.stderr)
        return 130
    except (OSError, RuntimeError) as error:
        print(f"cowork index: {error}", file=sys.stderr)
        return 1


async def _search(workspace: Path, query: str, limit: int, as_json: bool) -> int:
    client = await _connect(workspace)
    try:
        raw = await client.call("memory/search", {"query": query, "limit": limit, "workspace": str(workspace)})
    except RpcError as error:
        print(f"cowork search: {error}", file=sys.stderr)
        return 2 if error.code in ("invalid_params", "workspace_not_found") else 1
    finally:
        await client.close()
    result = MemorySearchResult.model_validate(raw)
    if as_json:
        print(json.dumps(result.model_dump(mode="json", by_alias=True)))
        return 0
    from rich.text import Text

    from cowork.clients.format import SafeConsole

    console = SafeConsole(highlight=False)
    if result.sources == 0:
        console.print("Nothing is indexed in this folder yet: run `cowork index` first.")
        return 1
    if not result.hits:
        console.print(f"No passage matches ({result.sources} files indexed).")
        return 1
    for number, hit in enumerate(result.hits, 1):
        where = f" — {hit.heading}" if hit.heading else ""
        similarity = f"  (similarity {hit.similarity:.2f})" if hit.similarity is not None else ""
        console.print(Text(f"[{number}] {hit.path}{where}", style="bold") + Text(similarity, style="dim"))
        text = " ".join(hit.text.split())  # file text: printed as Text, never as markup
        console.print(Text(text if len(text) <= 400 else text[:399] + "…"))
        console.print()
    if result.indexing is not None:
        console.print(f"(indexing still running: {result.indexing.done}/{result.indexing.total} files)")
    return 0


def main_search(workspace: Path | None, query: str, *, limit: int, as_json: bool) -> int:
    folder = (workspace or Path.cwd()).resolve()
    if not query.strip():
        print("cowork search: give a query", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_search(folder, query, limit, as_json))
    except (OSError, RuntimeError) as error:
        print(f"cowork search: {error}", file=sys.stderr)
        return 1

"""Indexing and search: `ingest/add|status|pause|resume|cancel` and `memory/search` (see `cowork.retrieval`)."""

from __future__ import annotations

from pathlib import Path

import anyio

from cowork.core import Core
from cowork.protocol import (
    ErrorCode,
    IngestAddParams,
    IngestJobInfo,
    IngestJobRef,
    IngestStatusParams,
    IngestStatusResult,
    MemorySearchParams,
    MemorySearchResult,
    ProtocolError,
)
from cowork.retrieval import IngestError, job_info, search_result

from .._peer import Peer

__all__ = ["ingest_add", "ingest_cancel", "ingest_pause", "ingest_resume", "ingest_status", "memory_search"]

_CODES = {
    "path_denied": ErrorCode.PATH_DENIED,
    "job_not_found": ErrorCode.JOB_NOT_FOUND,
    "embedder_error": ErrorCode.EMBEDDER_ERROR,
}


def _protocol_error(error: IngestError) -> ProtocolError:
    return ProtocolError(_CODES.get(error.code, ErrorCode.INVALID_PARAMS), str(error))


async def _folder(core: Core, session_id: str | None, workspace: str | None) -> Path:
    if session_id is not None:
        return Path((await core.sessions.get_row(session_id)).workspace)
    if workspace is None:
        return core.workspace
    folder = Path(workspace)
    if not folder.is_absolute() or not await anyio.Path(folder).is_dir():
        raise ProtocolError(ErrorCode.WORKSPACE_NOT_FOUND, f"{workspace} is not a folder (give an absolute path).")
    return folder


async def ingest_add(core: Core, peer: Peer | None, params: IngestAddParams) -> IngestJobInfo:
    try:
        job = await core.retrieval.add(await _folder(core, params.session_id, params.workspace), params.paths)
    except IngestError as error:
        raise _protocol_error(error) from None
    return job_info(job)


async def ingest_status(core: Core, peer: Peer | None, params: IngestStatusParams) -> IngestStatusResult:
    try:
        jobs = [await core.retrieval.job(params.job_id)] if params.job_id else await core.retrieval.jobs(params.limit)
    except IngestError as error:
        raise _protocol_error(error) from None
    return IngestStatusResult(jobs=[job_info(job) for job in jobs])


async def ingest_pause(core: Core, peer: Peer | None, params: IngestJobRef) -> IngestJobInfo:
    try:
        return job_info(await core.retrieval.pause(params.job_id))
    except IngestError as error:
        raise _protocol_error(error) from None


async def ingest_resume(core: Core, peer: Peer | None, params: IngestJobRef) -> IngestJobInfo:
    try:
        return job_info(await core.retrieval.resume(params.job_id))
    except IngestError as error:
        raise _protocol_error(error) from None


async def ingest_cancel(core: Core, peer: Peer | None, params: IngestJobRef) -> IngestJobInfo:
    try:
        return job_info(await core.retrieval.cancel(params.job_id))
    except IngestError as error:
        raise _protocol_error(error) from None


async def memory_search(core: Core, peer: Peer | None, params: MemorySearchParams) -> MemorySearchResult:
    folder = await _folder(core, params.session_id, params.workspace)
    try:
        answer = await core.retrieval.search(
            folder,
            params.query,
            kind=params.kind,
            limit=params.limit,
            mode=params.mode,
            min_similarity=params.min_similarity,
        )
    except IngestError as error:
        raise _protocol_error(error) from None
    return search_result(answer)

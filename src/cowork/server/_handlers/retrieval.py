"""Indexing and search (`ingest/add|status|pause|resume|cancel`, `memory/search`; see `cowork.retrieval`) and the
written memories (`memory/list|get|update|delete`, the `memory` tool's files, through `cowork.tools.MemoryFiles`)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import anyio

from cowork.core import Core
from cowork.memory import MAX_ENTRIES, MAX_VALUE_CHARS, ProfileEntry, ProfileError
from cowork.protocol import (
    EmptyParams,
    ErrorCode,
    IngestAddParams,
    IngestJobInfo,
    IngestJobRef,
    IngestStatusParams,
    IngestStatusResult,
    MemoryContent,
    MemoryDeleteResult,
    MemoryFileInfo,
    MemoryListParams,
    MemoryListResult,
    MemoryRef,
    MemorySearchParams,
    MemorySearchResult,
    MemoryUpdateParams,
    ObservationDeleteParams,
    ObservationInfo,
    ObservationListResult,
    ObserveParams,
    PassageInfo,
    PassageParams,
    PinInfo,
    PinListResult,
    PinParams,
    PinsParams,
    ProfileDeleteParams,
    ProfileEntryInfo,
    ProfileInfo,
    ProfileSetParams,
    ProtocolError,
    TurnStartResult,
)
from cowork.retrieval import IngestError, Pin, job_info, search_result
from cowork.store import IngestJobRow
from cowork.tools import MemoryFile, MemoryFiles, MemoryNotFound, ToolError

from .._peer import Peer

__all__ = [
    "ingest_add",
    "ingest_cancel",
    "ingest_pause",
    "ingest_resume",
    "ingest_status",
    "memory_delete",
    "memory_get",
    "memory_list",
    "memory_observations",
    "memory_observations_delete",
    "memory_observe",
    "memory_passage",
    "memory_pin",
    "memory_pins",
    "memory_profile",
    "memory_profile_delete",
    "memory_profile_set",
    "memory_search",
    "memory_unpin",
    "memory_update",
]

_CODES = {
    "path_denied": ErrorCode.PATH_DENIED,
    "job_not_found": ErrorCode.JOB_NOT_FOUND,
    "embedder_error": ErrorCode.EMBEDDER_ERROR,
    "passage_not_found": ErrorCode.PASSAGE_NOT_FOUND,
    "pin_not_found": ErrorCode.MEMORY_NOT_FOUND,
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
        folder = await _folder(core, params.session_id, params.workspace)
        job = await core.retrieval.add(folder, params.paths, urls=params.urls)
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
        if params.kind == "conversations":
            await core.recall.sync()  # turns finished since the last quiet moment are found too
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


async def memory_passage(core: Core, peer: Peer | None, params: PassageParams) -> PassageInfo:
    folder = await _folder(core, params.session_id, params.workspace)
    try:
        row = await core.retrieval.passage(folder, params.chunk_id)
    except IngestError as error:
        raise _protocol_error(error) from None
    return PassageInfo(
        chunk_id=row.id, path=row.uri, title=row.title, heading=row.heading, text=row.text, kind=row.kind
    )


# ---- the written memories ----------------------------------------------------------------------------------------


def _memory_info(found: MemoryFile) -> MemoryFileInfo:
    return MemoryFileInfo(
        scope=found.scope,
        key=found.key,
        path=str(found.path),
        size_bytes=found.size,
        lines=found.lines,
        hot=found.hot,
        updated_at=datetime.fromtimestamp(found.modified, UTC),
    )


async def _memories(core: Core, params: MemoryListParams) -> MemoryFiles:
    folder = await _folder(core, params.session_id, params.workspace)
    return await anyio.to_thread.run_sync(MemoryFiles, folder, core.paths.home)


def _memory_error(error: ToolError) -> ProtocolError:
    code = ErrorCode.MEMORY_NOT_FOUND if isinstance(error, MemoryNotFound) else ErrorCode.INVALID_PARAMS
    return ProtocolError(code, str(error))


async def memory_list(core: Core, peer: Peer | None, params: MemoryListParams) -> MemoryListResult:
    files = await _memories(core, params)
    found = await anyio.to_thread.run_sync(files.list)
    return MemoryListResult(memories=[_memory_info(f) for f in found])


async def memory_get(core: Core, peer: Peer | None, params: MemoryRef) -> MemoryContent:
    files = await _memories(core, params)
    try:
        found, text = await anyio.to_thread.run_sync(files.read, params.scope, params.key)
    except ToolError as error:
        raise _memory_error(error) from None
    return MemoryContent(memory=_memory_info(found), content=text)


async def memory_update(core: Core, peer: Peer | None, params: MemoryUpdateParams) -> MemoryFileInfo:
    files = await _memories(core, params)
    try:
        found = await anyio.to_thread.run_sync(files.write, params.scope, params.key, params.content)
    except ToolError as error:
        raise _memory_error(error) from None
    return _memory_info(found)


async def memory_delete(core: Core, peer: Peer | None, params: MemoryRef) -> MemoryDeleteResult:
    files = await _memories(core, params)
    try:
        gone = await anyio.to_thread.run_sync(files.delete, params.scope, params.key)
    except ToolError as error:
        raise _memory_error(error) from None
    return MemoryDeleteResult(deleted=_memory_info(gone))


# ---- the user's profile (working memory) -----------------------------------------------------------------------


def _profile(entries: list[ProfileEntry]) -> ProfileInfo:
    return ProfileInfo(
        entries=[ProfileEntryInfo(key=e.key, value=e.value, source=e.source, updated_at=e.updated_at) for e in entries],
        max_entries=MAX_ENTRIES,
        max_value_chars=MAX_VALUE_CHARS,
    )


async def _change_profile(core: Core, set_: dict[str, str], remove: list[str]) -> ProfileInfo:
    try:
        return _profile(await core.working_memory.change(set_, remove, source="user"))
    except ProfileError as error:
        code = ErrorCode.MEMORY_NOT_FOUND if error.code == "memory_not_found" else ErrorCode.INVALID_PARAMS
        raise ProtocolError(code, str(error)) from None


async def memory_profile(core: Core, peer: Peer | None, params: EmptyParams) -> ProfileInfo:
    return _profile(await core.working_memory.entries())


async def memory_profile_set(core: Core, peer: Peer | None, params: ProfileSetParams) -> ProfileInfo:
    return await _change_profile(core, {params.key: params.value}, [])


async def memory_profile_delete(core: Core, peer: Peer | None, params: ProfileDeleteParams) -> ProfileInfo:
    return await _change_profile(core, {}, [params.key])


# ---- observational memory ----------------------------------------------------------------------------------------


async def _observations(core: Core, folder: Path) -> ObservationListResult:
    found = await core.recall.observations(folder)
    return ObservationListResult(
        observations=[
            ObservationInfo(id=row.uri, title=row.title, text=text, noted_at=row.indexed_at) for row, text in found
        ]
    )


async def memory_observations(core: Core, peer: Peer | None, params: MemoryListParams) -> ObservationListResult:
    return await _observations(core, await _folder(core, params.session_id, params.workspace))


async def memory_observations_delete(
    core: Core, peer: Peer | None, params: ObservationDeleteParams
) -> ObservationListResult:
    folder = await _folder(core, params.session_id, params.workspace)
    if not await core.recall.forget_observation(folder, params.id):
        raise ProtocolError(ErrorCode.MEMORY_NOT_FOUND, f"No observations {params.id!r} in this folder.")
    return await _observations(core, folder)


async def memory_observe(core: Core, peer: Peer | None, params: ObserveParams) -> TurnStartResult:
    return await core.runtime.observe(params.session_id)


# ---- pinned files ------------------------------------------------------------------------------------------------


def _pins(pins: list[Pin], job: IngestJobRow | None = None) -> PinListResult:
    return PinListResult(
        pins=[
            PinInfo(path=p.uri, title=p.title, chunks=p.chunks, tokens=(p.chars + 3) // 4, pinned_at=p.pinned_at)
            for p in pins
        ],
        indexing=job_info(job) if job is not None else None,
    )


async def memory_pins(core: Core, peer: Peer | None, params: PinsParams) -> PinListResult:
    return _pins(await core.retrieval.pins(await _folder(core, params.session_id, params.workspace)))


async def memory_pin(core: Core, peer: Peer | None, params: PinParams) -> PinListResult:
    folder = await _folder(core, params.session_id, params.workspace)
    try:
        pins, job = await core.retrieval.pin(folder, params.path)
    except IngestError as error:
        raise _protocol_error(error) from None
    return _pins(pins, job)


async def memory_unpin(core: Core, peer: Peer | None, params: PinParams) -> PinListResult:
    folder = await _folder(core, params.session_id, params.workspace)
    try:
        return _pins(await core.retrieval.unpin(folder, params.path))
    except IngestError as error:
        raise _protocol_error(error) from None

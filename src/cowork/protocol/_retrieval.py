"""Indexing and search on the wire: ingestion jobs (`ingest/*`, `ingest/progress`) and `memory/search`."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from ._base import Params, WireModel

__all__ = [
    "IndexKind",
    "IngestAddParams",
    "IngestJobInfo",
    "IngestJobRef",
    "IngestStatusParams",
    "IngestStatusResult",
    "MemorySearchParams",
    "MemorySearchResult",
    "PassageInfo",
    "PassageParams",
    "PinInfo",
    "PinListResult",
    "PinParams",
    "PinsParams",
    "SearchHitInfo",
]

IndexKind = Literal["documents", "conversations", "activity", "observations"]
IngestStatus = Literal["pending", "processing", "done", "paused", "failed", "cancelled"]


class IngestAddParams(Params):
    paths: list[str] = Field(
        min_length=1,
        max_length=100,
        description='Files or folders to index, relative to the folder (or absolute inside it); `["."]` indexes all '
        "of it. Anything outside the folder, credential files and Cowork's own secrets are refused (`path_denied`).",
    )
    session_id: str | None = Field(
        default=None, max_length=200, description="Index in this session's folder (default: the server's folder)."
    )
    workspace: str | None = Field(
        default=None, max_length=4096, description="Or this folder (an absolute path), as `session/create` takes it."
    )


class IngestJobRef(Params):
    job_id: str = Field(min_length=1, max_length=64)


class IngestStatusParams(Params):
    job_id: str | None = Field(default=None, max_length=64, description="One job; omitted: the most recent jobs.")
    limit: int = Field(default=20, ge=1, le=200)


class IngestJobInfo(WireModel):
    job_id: str
    kind: IndexKind
    folder: str = Field(description="The folder whose index the job fills.")
    paths: list[str] = Field(description="What it indexes, relative to the folder.")
    status: IngestStatus = Field(
        description="`pending → processing → done`; `paused` (resume continues after the last file finished), "
        "`failed` (see `error`), `cancelled`."
    )
    total: int = Field(description="Files to index (known once the job has listed them).")
    done: int = Field(description="Files finished, each committed with its chunks.")
    failed: int = Field(description="Files that could not be read or converted (recorded, skipped).")
    chunks: int = Field(description="Chunks embedded by this job (unchanged files cost none).")
    error: str | None = None
    created_at: datetime
    updated_at: datetime


class IngestStatusResult(WireModel):
    jobs: list[IngestJobInfo]


class MemorySearchParams(Params):
    query: str = Field(min_length=1, max_length=2000)
    session_id: str | None = Field(
        default=None, max_length=200, description="Search this session's folder (default: the server's folder)."
    )
    workspace: str | None = Field(default=None, max_length=4096, description="Or this folder (an absolute path).")
    kind: IndexKind = "documents"
    limit: int = Field(default=8, ge=1, le=50)
    mode: Literal["hybrid", "vector", "keyword"] = Field(
        default="hybrid", description="`hybrid` fuses BM25 and vector rankings; the others use one of them alone."
    )
    min_similarity: float | None = Field(
        default=None,
        ge=-1,
        le=1,
        description="Relevance floor (cosine); default `memory.min_similarity`. The best three keyword matches are "
        "kept whatever their similarity. -1 keeps everything.",
    )


class SearchHitInfo(WireModel):
    chunk_id: int
    path: str = Field(description="The source, relative to the folder.")
    title: str
    heading: str = Field(description="Where in the source the chunk sits: its heading path, outermost first.")
    text: str
    score: float = Field(description="Fused rank score (higher is better; comparable within one answer only).")
    similarity: float | None = Field(default=None, description="Cosine similarity to the query, when ranked by it.")


class MemorySearchResult(WireModel):
    hits: list[SearchHitInfo]
    sources: int = Field(description="Files indexed in the folder.")
    chunks: int
    indexing: IngestJobInfo | None = Field(
        default=None, description="A job still filling this folder's index: results are partial until it is done."
    )


class PassageParams(Params):
    chunk_id: int = Field(ge=1, description="A `Citation`'s or a search hit's `chunkId`.")
    session_id: str | None = Field(
        default=None, max_length=200, description="The session whose folder it is in (default: the server's folder)."
    )
    workspace: str | None = Field(default=None, max_length=4096, description="Or this folder (an absolute path).")


class PassageInfo(WireModel):
    chunk_id: int
    path: str = Field(description="The source, relative to the folder.")
    title: str
    heading: str
    text: str = Field(description="The passage as it was indexed (not the file's current text).")
    kind: IndexKind


class PinsParams(Params):
    session_id: str | None = Field(default=None, max_length=200, description="This session's folder's pins.")
    workspace: str | None = Field(default=None, max_length=4096, description="Or this folder's (an absolute path).")


class PinParams(PinsParams):
    path: str = Field(min_length=1, max_length=4096, description="A file of the folder, relative to it.")


class PinInfo(WireModel):
    path: str
    title: str = Field(description="Empty until the file is indexed.")
    chunks: int = Field(description="Passages of the file in the index (0: not indexed yet, or nothing to index).")
    tokens: int = Field(description="About how many tokens the file adds to every turn's prompt.")
    pinned_at: datetime


class PinListResult(WireModel):
    pins: list[PinInfo] = Field(description="Oldest pin first: the order they go into the prompt.")
    indexing: IngestJobInfo | None = Field(
        default=None, description="The job `memory/pin` started for a file not indexed yet."
    )

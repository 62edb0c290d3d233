"""Indexing and search on the wire: ingestion jobs (`ingest/*`, `ingest/progress`) and `memory/search`."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, Self
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from ._base import Params, WireModel

__all__ = [
    "MAX_INGEST_URLS",
    "MAX_URL_CHARS",
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


MAX_INGEST_URLS = 50
MAX_URL_CHARS = 2048


class IngestAddParams(Params):
    paths: list[str] = Field(
        default_factory=list,
        max_length=100,
        description='Files or folders to index, relative to the folder (or absolute inside it); `["."]` indexes all '
        "of it. Anything outside the folder, credential files and Cowork's own secrets are refused (`path_denied`).",
    )
    urls: list[str] = Field(
        default_factory=list,
        max_length=MAX_INGEST_URLS,
        description="Web pages (http or https) to fetch and index into the same folder's index, with webFetch's "
        "guards (public addresses only unless `tools.web.allow_private_addresses`; size, time and type limits). "
        "Each is indexed under its final URL, after redirects. At least one path or URL is required.",
    )
    session_id: str | None = Field(
        default=None, max_length=200, description="Index in this session's folder (default: the server's folder)."
    )
    workspace: str | None = Field(
        default=None, max_length=4096, description="Or this folder (an absolute path), as `session/create` takes it."
    )

    @field_validator("urls")
    @classmethod
    def _web_urls(cls, urls: list[str]) -> list[str]:
        for url in urls:
            shown = url if len(url) <= 200 else url[:200] + "…"
            if len(url) > MAX_URL_CHARS:
                raise ValueError(f"URL too long ({len(url):,} characters; at most {MAX_URL_CHARS:,}): {shown}")
            try:
                parts = urlsplit(url.strip())
                host = parts.hostname
            except ValueError as error:
                raise ValueError(f"invalid URL {shown!r}: {error}") from None
            if parts.scheme.lower() not in ("http", "https"):
                raise ValueError(f"only http and https URLs can be indexed, not {shown!r}")
            if not host:
                raise ValueError(f"URL {shown!r} has no host name")
            if parts.username is not None or parts.password is not None:
                raise ValueError(f"URL {shown!r} carries credentials (user:password@), which are not allowed")
        return urls

    @model_validator(mode="after")
    def _something(self) -> Self:
        if not self.paths and not self.urls:
            raise ValueError("name at least one path or URL to index")
        return self


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
    urls: list[str] = Field(default_factory=list, description="The web pages it indexes, as asked for.")
    status: IngestStatus = Field(
        description="`pending → processing → done`; `paused` (resume continues after the last file finished), "
        "`failed` (see `error`), `cancelled`."
    )
    total: int = Field(description="Pages and files to index (known once the job has listed the files).")
    done: int = Field(description="Pages and files finished, each committed with its chunks (pages come first).")
    failed: int = Field(description="Pages and files that could not be fetched, read or converted (recorded, skipped).")
    chunks: int = Field(description="Chunks embedded by this job (unchanged files and pages cost none).")
    error: str | None = Field(
        default=None,
        description="Why a `failed` job failed; otherwise why items failed, one `uri: reason` line each (the first "
        "few).",
    )
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
    path: str = Field(
        description="The source: a path relative to the folder, or the URL of a web page indexed by `ingest/add` "
        "(starts with http:// or https://; never a file in the folder)."
    )
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
    path: str = Field(description="The source, relative to the folder, or a web page's URL (as in search hits).")
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

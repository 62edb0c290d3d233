"""Index rows as protocol values (`ingest/*`, `ingest/progress`, `memory/search`)."""

from __future__ import annotations

import json

from cowork.protocol import IngestJobInfo, MemorySearchResult, SearchHitInfo
from cowork.store import IngestJobRow

from ._service import SearchAnswer

__all__ = ["job_info", "search_result"]

MAX_HIT_CHARS = 2000


def job_info(job: IngestJobRow) -> IngestJobInfo:
    spec = json.loads(job.spec)
    return IngestJobInfo(
        job_id=job.id,
        kind=job.kind,
        folder=spec.get("workspace", job.scope),
        paths=list(spec.get("paths", [])),
        urls=list(spec.get("urls", [])),
        status=job.status,
        total=job.total,
        done=job.done,
        failed=job.failed,
        chunks=job.chunks,
        error=job.error,
        created_at=job.created_at,
        updated_at=job.updated_at,
    )


def search_result(answer: SearchAnswer) -> MemorySearchResult:
    return MemorySearchResult(
        hits=[
            SearchHitInfo(
                chunk_id=hit.chunk_id,
                path=hit.uri,
                title=hit.title,
                heading=hit.heading,
                text=hit.text[:MAX_HIT_CHARS],
                score=hit.score,
                similarity=hit.similarity,
            )
            for hit in answer.hits
        ],
        sources=answer.sources,
        chunks=answer.chunks,
        indexing=job_info(answer.indexing) if answer.indexing else None,
    )

"""Retrieval: documents and memories as chunks in a hybrid index (BM25 + exact vectors), kept current by jobs.

- `_convert`: files (pdf, docx, xlsx, pptx, html, md, txt, code, ipynb) as a title and markdown-ish text.
- `_chunking`: structure-aware chunks with their heading path; what is embedded carries the title.
- `_index`: `RetrievalIndex`, which stores chunks with their vectors and answers hybrid searches.
- `_wire`: rows as protocol values.
- `_service`: `Retrieval`, the server's service: persisted ingestion jobs per folder, and searches.
- `_context`: its half for turns: context assembly with backfill, pinned files, citations, passages by id.
"""

from typing import TYPE_CHECKING

from cowork.lazy import lazy_exports

from ._chunking import Chunk, chunk_text, embedding_text
from ._context import IngestError, Pin, scope_of
from ._convert import Converted, ConvertError, convert_file, indexable
from ._service import JobStatus, Retrieval, SearchAnswer
from ._wire import job_info, search_result

if TYPE_CHECKING:  # numpy loads with the first search or indexing job, not at start-up
    from ._index import KINDS, Hit, IndexOutcome, Kind, RetrievalIndex, fts_query
else:
    __getattr__ = lazy_exports(
        __name__, {name: "._index" for name in ("KINDS", "Hit", "IndexOutcome", "Kind", "RetrievalIndex", "fts_query")}
    )

__all__ = [
    "KINDS",
    "Chunk",
    "ConvertError",
    "Converted",
    "Hit",
    "IndexOutcome",
    "IngestError",
    "JobStatus",
    "Kind",
    "Pin",
    "Retrieval",
    "RetrievalIndex",
    "SearchAnswer",
    "chunk_text",
    "convert_file",
    "embedding_text",
    "fts_query",
    "indexable",
    "job_info",
    "scope_of",
    "search_result",
]

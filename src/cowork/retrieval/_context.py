"""What a turn's context is assembled from (the `Retrieval` service's half for turns): context assembly with
backfill, the folder's pinned files, the citations recorded for backfill, and one passage by id (`memory/passage`).
See `_assembly` for the window's rules."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from cowork.config import MemoryConfig
from cowork.store import Connection, Database, IngestJobRow, RagChunkRow
from cowork.store.repos import retrieval as repo

from ._assembly import Assembly, Passage, fit

if TYPE_CHECKING:
    from ._index import Hit, Kind
    from ._service import SearchAnswer

__all__ = ["BACKFILL_OPERATIONS", "ContextSources", "IngestError", "Pin", "scope_of"]

BACKFILL_OPERATIONS = 10
"""How many of the session's recent operations backfill reads citations from (a limited history scan)."""


class IngestError(Exception):
    """A request the index cannot take: the code names the kind (`path_denied`, `job_not_found`, `invalid_params`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def scope_of(workspace: Path) -> str:
    """The index's name for a folder: its absolute path."""
    return str(workspace.resolve())


@dataclass(frozen=True, slots=True)
class Pin:
    uri: str
    title: str
    """Empty until the file is indexed."""
    chunks: int
    chars: int
    pinned_at: datetime


class ContextSources:
    """Mixed into `Retrieval`, whose store, settings, searches, jobs and path checks it uses."""

    _db: Database
    _settings: MemoryConfig
    _pinned_scopes: set[str] | None = None
    """The folders with pins, read once, then kept by `pin` and `unpin`: a turn in a folder with none (the usual
    case) reads nothing for them."""

    if TYPE_CHECKING:

        async def search(
            self, workspace: Path, query: str, *, kind: Kind = "documents", limit: int = 8
        ) -> SearchAnswer: ...

        async def add(self, workspace: Path, paths: list[str], *, kind: Kind = "documents") -> IngestJobRow: ...

        def _checked(self, workspace: Path, paths: list[str]) -> tuple[Path, list[str]]: ...

    # ---- context assembly ----------------------------------------------------------------------------------------

    async def assemble(
        self,
        workspace: Path,
        query: str,
        *,
        session_id: str,
        operation_id: str,
        kind: Kind = "documents",
        search: bool = True,
    ) -> Assembly:
        """The passages for one turn (see `_assembly`), recorded as that operation's citations; without `search`,
        only the pinned files' (context off: pins still apply)."""
        settings = self._settings
        scope = await asyncio.to_thread(scope_of, workspace)
        if not search:  # one query: a turn without document context pays (almost) nothing for pins
            passages = fit(await self.pinned_passages(scope), settings.context_tokens)
            return Assembly(passages, indexed=bool(passages))
        indexed = await self._db.read(lambda c: repo.count_chunks(c, kind, scope)) > 0
        if not indexed:
            return Assembly([], indexed=False)
        passages = await self.pinned_passages(scope) if kind == "documents" else []
        pinned = {p.chunk_id for p in passages}
        answer = await self.search(workspace, query, kind=kind, limit=settings.context_passages)
        passages += [
            Passage(h.chunk_id, h.uri, h.title, h.heading, h.text, h.similarity, "search")
            for h in answer.hits
            if h.chunk_id not in pinned
        ]
        if len(passages) - len(pinned) < settings.backfill_passages:
            seen = {p.chunk_id for p in passages}
            cited = await self._db.read(
                lambda c: repo.recent_citations(c, session_id, operations=BACKFILL_OPERATIONS, exclude=operation_id)
            )
            wanted = [chunk_id for chunk_id in cited if chunk_id not in seen]
            rows = await self._db.read(lambda c: repo.chunks(c, wanted)) if wanted else {}
            for chunk_id in wanted:
                row = rows.get(chunk_id)
                if row is None or row.kind != kind:  # re-indexed since, or another kind
                    continue
                passages.append(Passage(chunk_id, row.uri, row.title, row.heading, row.text, None, "backfill"))
                if len(passages) - len(pinned) >= settings.backfill_passages:
                    break
        passages = fit(passages, settings.context_tokens)
        cited_now = [(p.chunk_id, p.score) for p in passages if p.origin != "pinned"]
        await self._db.write(lambda c: repo.record_citations(c, session_id, operation_id, cited_now))
        return Assembly(passages, indexed=True)

    # ---- pins ----------------------------------------------------------------------------------------------------

    async def pinned_passages(self, scope: str) -> list[Passage]:
        """Every passage of the folder's pinned files, file by file (oldest pin first), in reading order."""
        if self._pinned_scopes is None:
            self._pinned_scopes = await self._db.read(repo.pinned_scopes)
        if scope not in self._pinned_scopes:
            return []

        def read(conn: Connection) -> list[Passage]:
            found = []
            for uri, _when in repo.pins(conn, scope):
                for row in repo.source_chunks(conn, "documents", scope, uri):
                    found.append(Passage(row.id, row.uri, row.title, row.heading, row.text, None, "pinned"))
            return found

        return await self._db.read(read)

    async def pins(self, workspace: Path) -> list[Pin]:
        """The folder's pinned files, each with what the index holds of it."""
        scope = await asyncio.to_thread(scope_of, workspace)

        def read(conn: Connection) -> list[Pin]:
            found = []
            for uri, when in repo.pins(conn, scope):
                chunks = repo.source_chunks(conn, "documents", scope, uri)
                chars = sum(len(c.text) for c in chunks)
                found.append(Pin(uri, chunks[0].title if chunks else "", len(chunks), chars, when))
            return found

        return await self._db.read(read)

    async def pin(self, workspace: Path, path: str) -> tuple[list[Pin], IngestJobRow | None]:
        """Pin a file of the folder (held to the folder like `add`); a file not indexed yet starts a job for it.

        Raises:
            IngestError: `path_denied` (outside the folder, missing, a credential file), `invalid_params` (a
                folder, or a format the index does not read).
        """
        folder, (uri,) = await asyncio.to_thread(self._checked, workspace, [path])
        if await asyncio.to_thread(lambda: (folder / uri).is_dir()):
            raise IngestError("invalid_params", f"{path} is a folder: pin files one by one.")
        scope = str(folder)
        await self._db.write(lambda c: repo.pin(c, scope, uri, now=datetime.now(UTC)))
        if self._pinned_scopes is not None:
            self._pinned_scopes.add(scope)
        known = await self._db.read(lambda c: repo.get_source(c, "documents", scope, uri))
        job = None if known is not None and known.error is None else await self.add(workspace, [uri])
        return await self.pins(workspace), job

    async def unpin(self, workspace: Path, path: str) -> list[Pin]:
        """Unpin a file (by the path `pins` lists, or any path naming it).

        Raises:
            IngestError: `pin_not_found`.
        """
        scope = await asyncio.to_thread(scope_of, workspace)
        uri = path.strip().removeprefix("./")
        if not await self._db.write(lambda c: repo.unpin(c, scope, uri)):
            raise IngestError("pin_not_found", f"{path} is not pinned in this folder.")
        self._pinned_scopes = None  # the folder may have others: read again when next needed
        return await self.pins(workspace)

    async def cite(self, session_id: str, operation_id: str, hits: list[Hit]) -> None:
        """Record passages `searchDocuments` gave an operation, for the next turns' backfill."""
        cited = [(h.chunk_id, h.similarity) for h in hits]
        await self._db.write(lambda c: repo.record_citations(c, session_id, operation_id, cited))

    async def passage(self, workspace: Path, chunk_id: int) -> RagChunkRow:
        """One indexed passage of `workspace` (never another folder's).

        Raises:
            IngestError: `passage_not_found`.
        """
        scope = await asyncio.to_thread(scope_of, workspace)
        row = (await self._db.read(lambda c: repo.chunks(c, [chunk_id]))).get(chunk_id)
        if row is None or row.scope != scope:
            raise IngestError(
                "passage_not_found", f"Passage {chunk_id} is not in this folder's index (its file was indexed again?)."
            )
        return row

"""The hybrid index: chunks stored with their vectors, searched by BM25 (FTS5) and exact cosine, fused by rank.

Vectors are searched exactly, in numpy, from a matrix per (kind, scope, embedder) held in memory and reloaded when a
write touched it: 100,000 chunks of 384 dimensions are about 150 MB and one query about 10 ms on these machines
(`bench/retrieval.py` measures it), so no approximate index is needed at the sizes a laptop folder reaches, and the
exact search is its own reference. The two rankings are fused by weighted reciprocal rank fusion (`RRF_K`), which
needs no score calibration between BM25 and cosine.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from cowork.embeddings import Embedder, Vectors
from cowork.store import Database
from cowork.store.repos import retrieval as repo

from ._chunking import Chunk, chunk_text, embedding_text
from ._convert import ConvertError, convert_bytes, convert_file

__all__ = ["Hit", "IndexOutcome", "Kind", "RetrievalIndex", "fts_query"]

Kind = Literal["documents", "conversations", "activity", "observations"]
KINDS: tuple[Kind, ...] = ("documents", "conversations", "activity", "observations")
Mode = Literal["hybrid", "vector", "keyword"]
RRF_K = 10
KEYWORD_WEIGHT = 0.5
"""Reciprocal rank fusion: score = 1/(k + vector rank) + 0.5/(k + BM25 rank). BM25 counts half (it is the weaker
ranker on questions asked in other words than the documents'), and k = 10 lets the top ranks decide. Chosen on
bench/retrieval.py's questions, and checked on halves of them: tuned on either half, the weight came out 0.5
again and the other half still beat the anchor."""
CANDIDATES = 60
STAGE_BATCH = 64
KEYWORD_KEEP = 3
"""BM25's first few hits survive the relevance floor whatever their cosine (see `RetrievalIndex.search`)."""
"""Chunks embedded (and, in a large file, committed) at a time."""

_STOPWORDS = frozenset(
    "a an and are as at be but by can do does for from how i if in into is it its me my of on or so such that the "
    "their them then there these they this to use used using was what when where which while who why will with "
    "would you your".split()
)
_WORD = re.compile(r"\w+", re.UNICODE)


def keywords(text: str, *, max_terms: int = 32) -> list[str]:
    """A natural-language question's content words, lowercased, each once: what the keyword search looks for (any of
    them)."""
    seen: list[str] = []
    for word in _WORD.findall(text.lower()):
        if len(word) > 1 and word not in _STOPWORDS and word not in seen:
            seen.append(word)
    return seen[:max_terms]


def fts_query(text: str, *, max_terms: int = 32) -> str:
    """A natural-language question as the FTS5 query SQLite's index is asked: its `keywords`, each quoted, any of
    them (OR)."""
    return repo.fts5_query(keywords(text, max_terms=max_terms))


@dataclass(frozen=True, slots=True)
class Hit:
    chunk_id: int
    uri: str
    title: str
    heading: str
    text: str
    score: float
    """The fused score (higher is better)."""
    similarity: float | None
    """Cosine similarity to the query, when the vector search ranked this chunk."""
    keyword_rank: int | None
    vector_rank: int | None


@dataclass(frozen=True, slots=True)
class IndexOutcome:
    uri: str
    status: Literal["indexed", "unchanged", "failed", "empty"]
    chunks: int = 0
    embedded: int = 0
    error: str | None = None


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A file converted and chunked, waiting for its vectors."""

    uri: str
    title: str
    digest: str
    size: int
    mtime_ns: int
    chunks: list[Chunk]
    texts: list[str]
    hashes: list[str]

    @classmethod
    def of(cls, text: str, title: str, uri: str, digest: str, size: int, mtime_ns: int) -> _Prepared:
        chunks = chunk_text(text)
        texts = [embedding_text(title, chunk) for chunk in chunks]
        hashes = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        return cls(uri, title, digest, size, mtime_ns, chunks, texts, hashes)


@dataclass
class _Matrix:
    ids: npt.NDArray[np.int64]
    vectors: Vectors


def _hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class RetrievalIndex:
    """Indexes files and answers searches for one database and one embedder. Thread-safe."""

    def __init__(self, db: Database, embedder: Embedder) -> None:
        self.db = db
        self.embedder = embedder
        self._matrices: dict[tuple[str, str], _Matrix] = {}
        self._lock = threading.Lock()

    # ---- writing -------------------------------------------------------------------------------------------------

    def _invalidate(self, kind: str, scope: str) -> None:
        with self._lock:
            self._matrices.pop((kind, scope), None)

    def invalidate_kind(self, kind: str) -> None:
        """Forget the vectors held in memory for every scope of `kind` (its rows changed behind the index's back)."""
        with self._lock:
            for key in [key for key in self._matrices if key[0] == kind]:
                del self._matrices[key]

    def index_file(self, path: Path, *, kind: Kind, scope: str, uri: str | None = None) -> IndexOutcome:
        """Index one file (blocking); see `index_files`."""
        return self.index_files([(path, uri or str(path))], kind=kind, scope=scope)[0]

    def index_files(self, items: Sequence[tuple[Path, str]], *, kind: Kind, scope: str) -> list[IndexOutcome]:
        """Index files (path, uri) together, blocking: their chunks are embedded in shared batches (many small
        files cost what one file of their total size does), then each file is stored in a transaction of its own.

        A file with the size and modification time it had when indexed is not even read; one whose bytes hash the
        same is not converted; either way, only with the same embedder.
        """
        outcomes: list[IndexOutcome | None] = []
        prepared: list[_Prepared] = []
        for path, uri in items:
            ready = self._prepare(path, kind, scope, uri)
            if isinstance(ready, IndexOutcome):
                outcomes.append(ready)
            else:
                outcomes.append(None)
                prepared.append(ready)
        done = iter(self._embed_and_store(prepared, kind, scope))
        return [outcome if outcome is not None else next(done) for outcome in outcomes]

    def _prepare(self, path: Path, kind: Kind, scope: str, uri: str) -> _Prepared | IndexOutcome:
        known = self.db.read_sync(lambda c: repo.get_source(c, kind, scope, uri))
        same_embedder = known is not None and known.embedder == self.embedder.id
        try:
            info = path.stat()
            if known is not None and same_embedder and (known.size, known.mtime_ns) == (info.st_size, info.st_mtime_ns):
                return IndexOutcome(uri, "unchanged", chunks=known.chunk_count)
            digest = _hash(path.read_bytes())
        except OSError as error:
            return IndexOutcome(uri, "failed", error=f"cannot be read: {error.strerror}")
        if known is not None and same_embedder and known.content_hash == digest:
            if known.mtime_ns != info.st_mtime_ns:  # touched, not changed: remember the new time
                self.db.write_from_thread(lambda c: repo.touch_source(c, known.id, info.st_mtime_ns))
            return IndexOutcome(uri, "unchanged", chunks=known.chunk_count)
        try:
            converted = convert_file(path)
        except ConvertError as error:
            self._store(kind, scope, uri, path.name, digest, info.st_size, info.st_mtime_ns, [], str(error))
            return IndexOutcome(uri, "failed", error=str(error))
        return _Prepared.of(converted.text, converted.title, uri, digest, info.st_size, info.st_mtime_ns)

    def index_page(
        self, body: bytes, *, suffix: str, name: str, charset: str | None, kind: Kind, scope: str, uri: str
    ) -> IndexOutcome:
        """Index a downloaded page (its `body`, read as a `suffix` file) as the source `uri`, blocking.

        The page is known by the hash of its converted title and text, not of its bytes (a page's markup changes
        with every request: a date, a token): the same text with the same embedder is not embedded again. A page
        that cannot be converted is recorded like such a file, with its error and no chunks.
        """
        known = self.db.read_sync(lambda c: repo.get_source(c, kind, scope, uri))
        try:
            converted = convert_bytes(body, suffix, name, charset=charset)
        except ConvertError as error:
            self._store(kind, scope, uri, name, _hash(body), len(body), 0, [], str(error))
            return IndexOutcome(uri, "failed", error=str(error))
        digest = _hash(f"{converted.title}\n{converted.text}".encode())
        if known is not None and known.embedder == self.embedder.id and known.content_hash == digest:
            return IndexOutcome(uri, "unchanged", chunks=known.chunk_count)
        prepared = _Prepared.of(converted.text, converted.title, uri, digest, len(body), 0)
        return self._embed_and_store([prepared], kind, scope)[0]

    def index_text(
        self,
        text: str,
        *,
        kind: Kind,
        scope: str,
        uri: str,
        title: str,
        content_hash: str | None = None,
        size: int | None = None,
        mtime_ns: int = 0,
    ) -> IndexOutcome:
        """Chunk, embed and store `text` as the source `uri` (replacing what was there), blocking."""
        digest = content_hash or _hash(text.encode())
        prepared = _Prepared.of(text, title, uri, digest, len(text) if size is None else size, mtime_ns)
        return self._embed_and_store([prepared], kind, scope)[0]

    def _embed_and_store(self, files: Sequence[_Prepared], kind: str, scope: str) -> list[IndexOutcome]:
        """Embed what no staged vector covers, in batches across the files, then store each file."""
        embedder = self.embedder.id
        hashes = {h for f in files for h in f.hashes}
        vectors = self.db.read_sync(lambda c: repo.staged(c, embedder, hashes)) if hashes else {}
        reused = set(vectors)
        texts: dict[str, str] = {}
        for f in files:
            texts.update((h, t) for h, t in zip(f.hashes, f.texts, strict=True) if h not in vectors)
        missing = list(texts)
        for start in range(0, len(missing), STAGE_BATCH):
            batch = missing[start : start + STAGE_BATCH]
            made = self.embedder.embed_blocking([texts[h] for h in batch])
            fresh = {h: made[row].astype(np.float32).tobytes() for row, h in enumerate(batch)}
            if len(missing) > STAGE_BATCH:  # more than one batch: each committed, so a stop loses none of them
                self.db.write_from_thread(lambda c, f=fresh: repo.stage(c, embedder, f))  # type: ignore[misc]
            vectors.update(fresh)
        outcomes: list[IndexOutcome] = []
        for f in files:
            rows = [
                repo.NewChunk(chunk.ordinal, chunk.heading, chunk.text, vectors[f.hashes[i]])
                for i, chunk in enumerate(f.chunks)
            ]
            self._store(kind, scope, f.uri, f.title, f.digest, f.size, f.mtime_ns, rows, None, unstage=f.hashes)
            if not rows:
                outcomes.append(IndexOutcome(f.uri, "empty"))
            else:
                fresh_count = sum(h not in reused for h in set(f.hashes))
                outcomes.append(IndexOutcome(f.uri, "indexed", chunks=len(rows), embedded=fresh_count))
                reused.update(f.hashes)  # a chunk text two files share is embedded once
        return outcomes

    def _store(
        self,
        kind: str,
        scope: str,
        uri: str,
        title: str,
        digest: str,
        size: int,
        mtime_ns: int,
        rows: Sequence[repo.NewChunk],
        error: str | None,
        *,
        unstage: Sequence[str] = (),
    ) -> None:
        def write(conn):  # type: ignore[no-untyped-def]
            repo.unstage(conn, self.embedder.id, set(unstage))
            return repo.put_source(
                conn,
                kind=kind,
                scope=scope,
                uri=uri,
                title=title,
                content_hash=digest,
                size=size,
                mtime_ns=mtime_ns,
                embedder=self.embedder.id,
                new_chunks=rows,
                error=error,
            )

        self.db.write_from_thread(write)
        self._invalidate(kind, scope)

    def forget(self, *, kind: Kind, scope: str, uri: str) -> bool:
        """Remove a source (a file that disappeared); whether there was one."""

        def write(conn):  # type: ignore[no-untyped-def]
            known = repo.get_source(conn, kind, scope, uri)
            if known is not None:
                repo.delete_source(conn, known.id)
            return known is not None

        removed = bool(self.db.write_from_thread(write))
        self._invalidate(kind, scope)
        return removed

    # ---- searching -----------------------------------------------------------------------------------------------

    def _matrix(self, kind: str, scope: str) -> _Matrix:
        with self._lock:
            cached = self._matrices.get((kind, scope))
            if cached is not None:
                return cached
        rows = self.db.read_sync(lambda c: repo.vectors(c, kind, scope, self.embedder.id))
        ids = np.fromiter((chunk_id for chunk_id, _ in rows), dtype=np.int64, count=len(rows))
        if rows:
            vectors = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32).reshape(len(rows), -1)
        else:
            vectors = np.zeros((0, 0), dtype=np.float32)
        matrix = _Matrix(ids, vectors)
        with self._lock:
            self._matrices[(kind, scope)] = matrix
        return matrix

    def similarities(self, query_vector: Vectors, kind: str, scope: str, ids: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of the query to each of these chunks (those with a vector of this embedder)."""
        matrix = self._matrix(kind, scope)
        if not ids or not len(matrix.ids) or matrix.vectors.shape[1] != query_vector.shape[-1]:
            return {}
        wanted = np.asarray(ids, dtype=np.int64)
        rows = np.searchsorted(matrix.ids, wanted)  # ids are kept in ascending order
        rows = np.minimum(rows, len(matrix.ids) - 1)
        present = matrix.ids[rows] == wanted
        scores = matrix.vectors[rows[present]] @ query_vector.reshape(-1)
        return {int(i): float(score) for i, score in zip(wanted[present], scores, strict=True)}

    def vector_ranking(self, query_vector: Vectors, kind: str, scope: str, limit: int) -> list[tuple[int, float]]:
        """The `limit` nearest chunks by cosine, exactly: (chunk id, similarity), best first."""
        matrix = self._matrix(kind, scope)
        if not len(matrix.ids) or matrix.vectors.shape[1] != query_vector.shape[-1]:
            return []
        scores = matrix.vectors @ query_vector.reshape(-1)
        take = min(limit, len(scores))
        top = np.argpartition(-scores, take - 1)[:take]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(matrix.ids[i]), float(scores[i])) for i in top]

    def search(
        self,
        query: str,
        *,
        kind: Kind,
        scope: str,
        limit: int = 8,
        mode: Mode = "hybrid",
        min_similarity: float | None = None,
    ) -> list[Hit]:
        """The best chunks for `query` (blocking).

        `min_similarity` is the relevance floor (hybrid and vector modes): a chunk whose cosine similarity to the
        query is below it is dropped unless it is among BM25's first `KEYWORD_KEEP` (an exact rare word can matter
        more than the vector says).
        """
        if mode == "keyword":
            min_similarity = None  # keywords asked for: no cosine judges them
        vector_ranks: dict[int, tuple[int, float]] = {}
        keyword_ranks: dict[int, int] = {}
        query_vector = None
        if mode in ("hybrid", "vector") or min_similarity is not None:
            query_vector = self.embedder.embed_blocking([query])[0]
        if mode in ("hybrid", "vector") and query_vector is not None:
            for rank, (chunk_id, similarity) in enumerate(self.vector_ranking(query_vector, kind, scope, CANDIDATES)):
                vector_ranks[chunk_id] = (rank, similarity)
        if mode in ("hybrid", "keyword"):
            terms = keywords(query)
            found = self.db.read_sync(lambda c: repo.fts_search(c, terms, kind, scope, CANDIDATES))
            keyword_ranks = {chunk_id: rank for rank, chunk_id in enumerate(found)}
        fused: dict[int, float] = {}
        for chunk_id, (rank, _similarity) in vector_ranks.items():
            fused[chunk_id] = fused.get(chunk_id, 0.0) + 1.0 / (RRF_K + rank + 1)
        for chunk_id, rank in keyword_ranks.items():
            fused[chunk_id] = fused.get(chunk_id, 0.0) + KEYWORD_WEIGHT / (RRF_K + rank + 1)
        similarities = {chunk_id: similarity for chunk_id, (_rank, similarity) in vector_ranks.items()}
        if min_similarity is not None and query_vector is not None:
            similarities |= self.similarities(query_vector, kind, scope, [c for c in fused if c not in similarities])
            fused = {
                chunk_id: score
                for chunk_id, score in fused.items()
                if similarities.get(chunk_id, 0.0) >= min_similarity
                or keyword_ranks.get(chunk_id, KEYWORD_KEEP) < KEYWORD_KEEP
            }
        best = sorted(fused, key=lambda chunk_id: (-fused[chunk_id], chunk_id))[:limit]
        rows = self.db.read_sync(lambda c: repo.chunks(c, best))
        hits: list[Hit] = []
        for chunk_id in best:
            row = rows.get(chunk_id)
            if row is None:
                continue
            vector = vector_ranks.get(chunk_id)
            hits.append(
                Hit(
                    chunk_id=chunk_id,
                    uri=row.uri,
                    title=row.title,
                    heading=row.heading,
                    text=row.text,
                    score=fused[chunk_id],
                    similarity=similarities.get(chunk_id),
                    keyword_rank=keyword_ranks.get(chunk_id),
                    vector_rank=vector[0] if vector else None,
                )
            )
        return hits

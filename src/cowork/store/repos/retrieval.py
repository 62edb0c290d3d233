"""The retrieval index: sources, chunks with their vectors, the full-text mirror `rag_fts`, and ingestion jobs.

`rag_fts` is an FTS5 table on SQLite (migration 0013) and a table of tsvectors on PostgreSQL (migration 0018); on
both its row is the chunk's id and it is written here beside the chunk. Vectors are blobs compared in memory by the
caller (`cowork.retrieval`), the same on both engines."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .._rows import IngestJobRow, RagChunkRow, RagSourceRow
from .._schema import ingest_jobs as j
from .._schema import messages as m
from .._schema import operations as o
from .._schema import rag_chunks as c
from .._schema import rag_citations as ci
from .._schema import rag_pins as pn
from .._schema import rag_sources as s
from .._schema import rag_staged as st
from .._schema import sessions as ss
from ._util import PG_WORDS, escape_like

__all__ = [
    "Exchange",
    "NewChunk",
    "active_job",
    "chunks",
    "count_chunks",
    "count_sources",
    "create_job",
    "delete_source",
    "delete_sources_like",
    "finished_exchanges",
    "fts5_query",
    "fts_search",
    "get_job",
    "get_source",
    "idle_sessions",
    "jobs",
    "pin",
    "pinned_scopes",
    "pins",
    "prune_jobs",
    "put_source",
    "recent_citations",
    "record_citations",
    "source_chunks",
    "source_text",
    "source_texts",
    "sources",
    "stage",
    "staged",
    "stale_sources",
    "touch_source",
    "unpin",
    "unstage",
    "update_job",
    "vectors",
]


@dataclass(frozen=True, slots=True)
class NewChunk:
    ordinal: int
    heading: str
    text: str
    vector: bytes | None


def _source(r: sa.Row[tuple[object, ...]]) -> RagSourceRow:
    return RagSourceRow(**{col.name: getattr(r, col.name) for col in s.columns})


def get_source(conn: Connection, kind: str, scope: str, uri: str) -> RagSourceRow | None:
    row = conn.execute(sa.select(s).where(s.c.kind == kind, s.c.scope == scope, s.c.uri == uri)).first()
    return _source(row) if row else None


def sources(conn: Connection, kind: str, scope: str) -> list[RagSourceRow]:
    stmt = sa.select(s).where(s.c.kind == kind, s.c.scope == scope).order_by(s.c.uri)
    return [_source(r) for r in conn.execute(stmt)]


def _drop_chunks(conn: Connection, source_id: int) -> None:
    if conn.dialect.name == "sqlite":  # PostgreSQL's rag_fts rows go with their chunks (ON DELETE CASCADE)
        conn.execute(
            sa.text("DELETE FROM rag_fts WHERE rowid IN (SELECT id FROM rag_chunks WHERE source_id = :sid)"),
            {"sid": source_id},
        )
    conn.execute(c.delete().where(c.c.source_id == source_id))


def put_source(
    conn: Connection,
    *,
    kind: str,
    scope: str,
    uri: str,
    title: str,
    content_hash: str,
    size: int,
    mtime_ns: int,
    embedder: str,
    new_chunks: Sequence[NewChunk],
    error: str | None = None,
) -> int:
    """Store a source and its chunks, replacing what was indexed for the same uri, in the caller's transaction."""
    values = {
        "title": title,
        "content_hash": content_hash,
        "size": size,
        "mtime_ns": mtime_ns,
        "chunk_count": len(new_chunks),
        "embedder": embedder,
        "error": error,
        "indexed_at": datetime.now(UTC),
    }
    existing = get_source(conn, kind, scope, uri)
    if existing is None:
        source_id = int(
            conn.execute(s.insert().values(kind=kind, scope=scope, uri=uri, **values).returning(s.c.id)).scalar_one()
        )
    else:
        source_id = existing.id
        _drop_chunks(conn, source_id)
        conn.execute(s.update().where(s.c.id == source_id).values(**values))
    for chunk in new_chunks:
        chunk_id = conn.execute(
            c.insert()
            .values(
                source_id=source_id, ordinal=chunk.ordinal, heading=chunk.heading, text=chunk.text, vector=chunk.vector
            )
            .returning(c.c.id)
        ).scalar_one()
        if conn.dialect.name == "sqlite":
            conn.execute(
                sa.text("INSERT INTO rag_fts (rowid, text, heading) VALUES (:id, :text, :heading)"),
                {"id": chunk_id, "text": chunk.text, "heading": f"{title} {chunk.heading}"},
            )
    if conn.dialect.name == "postgresql" and new_chunks:
        conn.execute(_PG_FTS_INSERT, {"sid": source_id})
    return source_id


_PG_DOCUMENT = "to_tsvector('english'::regconfig, " + PG_WORDS + ")"
"""Chunk text as PostgreSQL's full-text search has it: `english` stems as FTS5's porter tokenizer does."""
_TITLE_AND_HEADING = "rag_sources.title || ' ' || rag_chunks.heading"
_PG_FTS_INSERT = sa.text(
    "INSERT INTO rag_fts (id, document) SELECT rag_chunks.id, "
    f"setweight({_PG_DOCUMENT.format(_TITLE_AND_HEADING)}, 'A') || "
    f"setweight({_PG_DOCUMENT.format('rag_chunks.text')}, 'B') "
    "FROM rag_chunks JOIN rag_sources ON rag_sources.id = rag_chunks.source_id WHERE rag_chunks.source_id = :sid"
)
"""A source's chunks into PostgreSQL's `rag_fts`: the title and heading weighted A, the text B (as migration 0018)."""


def touch_source(conn: Connection, source_id: int, mtime_ns: int) -> None:
    conn.execute(s.update().where(s.c.id == source_id).values(mtime_ns=mtime_ns))


def delete_source(conn: Connection, source_id: int) -> None:
    _drop_chunks(conn, source_id)
    conn.execute(s.delete().where(s.c.id == source_id))


def count_sources(conn: Connection, kind: str, scope: str) -> int:
    stmt = sa.select(sa.func.count()).select_from(s).where(s.c.kind == kind, s.c.scope == scope)
    return int(conn.execute(stmt).scalar_one())


def active_job(conn: Connection, kind: str, scope: str) -> IngestJobRow | None:
    """The newest job still filling the folder's index of `kind` (pending or processing), if any."""
    stmt = (
        sa.select(j)
        .where(j.c.kind == kind, j.c.scope == scope, j.c.status.in_(("pending", "processing")))
        .order_by(j.c.created_at.desc())
        .limit(1)
    )
    row = conn.execute(stmt).first()
    return _job(row) if row else None


def count_chunks(conn: Connection, kind: str, scope: str) -> int:
    stmt = sa.select(sa.func.count()).select_from(c.join(s)).where(s.c.kind == kind, s.c.scope == scope)
    return int(conn.execute(stmt).scalar_one())


def vectors(conn: Connection, kind: str, scope: str, embedder: str) -> list[tuple[int, bytes]]:
    """Every chunk id with its vector, for the in-memory matrix (chunks made by another embedder are left out)."""
    stmt = (
        sa.select(c.c.id, c.c.vector)
        .select_from(c.join(s))
        .where(s.c.kind == kind, s.c.scope == scope, s.c.embedder == embedder, c.c.vector.is_not(None))
        .order_by(c.c.id)
    )
    return [(int(r.id), bytes(r.vector)) for r in conn.execute(stmt)]


def fts5_query(terms: Sequence[str]) -> str:
    """Search terms as an FTS5 query: each quoted (nothing in them is query syntax), any of them (OR)."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def fts_search(conn: Connection, terms: Sequence[str], kind: str, scope: str, limit: int) -> list[int]:
    """Chunk ids matching any of `terms`, best first (the heading weighted twice the text): BM25 on SQLite, ts_rank
    on PostgreSQL."""
    if not terms:
        return []
    params: dict[str, object] = {"kind": kind, "scope": scope, "limit": limit}
    if conn.dialect.name == "postgresql":
        query = " || ".join(
            f"phraseto_tsquery('english'::regconfig, {PG_WORDS.format(f':t{i}')})" for i in range(len(terms))
        )
        statement = sa.text(
            f"WITH query AS (SELECT {query} AS q) "
            "SELECT rag_fts.id FROM rag_fts JOIN rag_chunks ON rag_chunks.id = rag_fts.id "
            "JOIN rag_sources ON rag_sources.id = rag_chunks.source_id, query "
            "WHERE rag_fts.document @@ query.q AND rag_sources.kind = :kind AND rag_sources.scope = :scope "
            "ORDER BY ts_rank('{0, 0, 0.5, 1}', rag_fts.document, query.q, 1) DESC, rag_fts.id LIMIT :limit"
        )
        params |= {f"t{i}": term for i, term in enumerate(terms)}
        return [int(r.id) for r in conn.execute(statement, params)]
    statement = sa.text(
        "SELECT rag_fts.rowid AS id FROM rag_fts JOIN rag_chunks ON rag_chunks.id = rag_fts.rowid "
        "JOIN rag_sources ON rag_sources.id = rag_chunks.source_id "
        "WHERE rag_fts MATCH :query AND rag_sources.kind = :kind AND rag_sources.scope = :scope "
        "ORDER BY bm25(rag_fts, 1.0, 2.0) LIMIT :limit"
    )
    return [int(r.id) for r in conn.execute(statement, params | {"query": fts5_query(terms)})]


def chunks(conn: Connection, ids: Iterable[int]) -> dict[int, RagChunkRow]:
    wanted = list(ids)
    if not wanted:
        return {}
    stmt = (
        sa.select(c.c.id, c.c.source_id, c.c.ordinal, c.c.heading, c.c.text, s.c.uri, s.c.title, s.c.kind, s.c.scope)
        .select_from(c.join(s))
        .where(c.c.id.in_(wanted))
    )
    return {int(r.id): RagChunkRow(**r._asdict()) for r in conn.execute(stmt)}


def _job(r: sa.Row[tuple[object, ...]]) -> IngestJobRow:
    return IngestJobRow(**{col.name: getattr(r, col.name) for col in j.columns})


def create_job(conn: Connection, *, job_id: str, kind: str, scope: str, spec: str, total: int) -> IngestJobRow:
    now = datetime.now(UTC)
    conn.execute(
        j.insert().values(
            id=job_id,
            kind=kind,
            scope=scope,
            status="pending",
            spec=spec,
            total=total,
            done=0,
            failed=0,
            chunks=0,
            error=None,
            created_at=now,
            updated_at=now,
        )
    )
    job = get_job(conn, job_id)
    assert job is not None
    return job


def get_job(conn: Connection, job_id: str) -> IngestJobRow | None:
    row = conn.execute(sa.select(j).where(j.c.id == job_id)).first()
    return _job(row) if row else None


def jobs(conn: Connection, *, statuses: Sequence[str] | None = None, limit: int = 50) -> list[IngestJobRow]:
    stmt = sa.select(j).order_by(j.c.created_at.desc()).limit(limit)
    if statuses:
        stmt = stmt.where(j.c.status.in_(statuses))
    return [_job(r) for r in conn.execute(stmt)]


def update_job(conn: Connection, job_id: str, **values: object) -> None:
    conn.execute(j.update().where(j.c.id == job_id).values(updated_at=datetime.now(UTC), **values))


def stage(conn: Connection, embedder: str, vectors: dict[str, bytes]) -> None:
    """Keep vectors of a file being indexed (by text hash) until its chunks are stored."""
    if vectors:
        rows = [{"embedder": embedder, "text_hash": h, "vector": v} for h, v in vectors.items()]
        if conn.dialect.name == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            upsert = pg_insert(st)
            conn.execute(upsert.on_conflict_do_update(index_elements=[st.c.embedder, st.c.text_hash],
                                                      set_={"vector": upsert.excluded.vector}), rows)  # fmt: skip
        else:
            conn.execute(st.insert().prefix_with("OR REPLACE"), rows)


def staged(conn: Connection, embedder: str, hashes: Iterable[str]) -> dict[str, bytes]:
    wanted = list(hashes)
    found: dict[str, bytes] = {}
    for start in range(0, len(wanted), 500):
        stmt = sa.select(st.c.text_hash, st.c.vector).where(
            st.c.embedder == embedder, st.c.text_hash.in_(wanted[start : start + 500])
        )
        found.update((r.text_hash, bytes(r.vector)) for r in conn.execute(stmt))
    return found


def unstage(conn: Connection, embedder: str, hashes: Iterable[str]) -> None:
    wanted = list(hashes)
    for start in range(0, len(wanted), 500):
        conn.execute(st.delete().where(st.c.embedder == embedder, st.c.text_hash.in_(wanted[start : start + 500])))


def prune_jobs(conn: Connection, keep: int) -> None:
    """Forget finished jobs (done, cancelled) past the newest `keep`."""
    newest = sa.select(j.c.id).order_by(j.c.created_at.desc()).limit(keep).scalar_subquery()
    conn.execute(j.delete().where(j.c.status.in_(("done", "cancelled")), j.c.id.not_in(newest)))


def record_citations(
    conn: Connection, session_id: str, operation_id: str, cited: Sequence[tuple[int, float | None]]
) -> None:
    """Remember the passages (chunk id, score) an operation's answer was given."""
    if cited:
        now = datetime.now(UTC)
        conn.execute(
            ci.insert(),
            [
                {"session_id": session_id, "operation_id": operation_id, "chunk_id": chunk_id, "score": score,
                 "created_at": now}
                for chunk_id, score in cited
            ],
        )  # fmt: skip


def recent_citations(conn: Connection, session_id: str, *, operations: int, exclude: str | None = None) -> list[int]:
    """Chunk ids the session's last `operations` operations were given, newest operation first (best first within
    one), each once; `exclude` leaves one operation out (the one asking)."""
    stmt = sa.select(ci.c.operation_id, ci.c.chunk_id).where(ci.c.session_id == session_id).order_by(ci.c.id.desc())
    if exclude is not None:
        stmt = stmt.where(ci.c.operation_id != exclude)
    seen_operations: list[str] = []
    by_operation: dict[str, list[int]] = {}
    for row in conn.execute(stmt.limit(operations * 50)):
        if row.operation_id not in by_operation:
            if len(seen_operations) == operations:
                break
            seen_operations.append(row.operation_id)
            by_operation[row.operation_id] = []
        by_operation[row.operation_id].append(int(row.chunk_id))
    ordered: list[int] = []
    for operation in seen_operations:
        for chunk_id in reversed(by_operation[operation]):  # inserted best first; read back newest first
            if chunk_id not in ordered:
                ordered.append(chunk_id)
    return ordered


@dataclass(frozen=True, slots=True)
class Exchange:
    """A finished turn of a conversation: the user's message and the answer, for the conversations index."""

    session_id: str
    operation_id: str
    workspace: str
    title: str
    question: str
    answer: str
    finished_at: datetime


def finished_exchanges(conn: Connection, since: datetime | None, *, limit: int) -> list[Exchange]:
    """Chat turns of the main agent that ended well at or after `since`, oldest first: each with its user message
    and its last answer. Turns left out of the model's context (grounded refusals) and retried answers are left out
    here too; a turn without both texts is returned with what it has (the caller skips it)."""
    stmt = (
        sa.select(o.c.id, o.c.session_id, o.c.updated_at, ss.c.workspace, ss.c.title)
        .select_from(o.join(ss, ss.c.id == o.c.session_id))
        .where(o.c.status == "done", o.c.origin == "chat", o.c.parent_operation_id.is_(None))
        .order_by(o.c.updated_at, o.c.id)
        .limit(limit)
    )
    if since is not None:
        stmt = stmt.where(o.c.updated_at >= since)
    found = []
    for op in conn.execute(stmt).all():
        texts = conn.execute(
            sa.select(m.c.kind, m.c.text, m.c.excluded)
            .where(m.c.operation_id == op.id, m.c.text != "", m.c.superseded.is_(False))
            .order_by(m.c.position)
        ).all()
        if any(t.excluded for t in texts):
            question = answer = ""
        else:
            question = next((t.text for t in texts if t.kind == "request"), "")
            answer = next((t.text for t in reversed(texts) if t.kind == "response"), "")
        found.append(
            Exchange(op.session_id, op.id, op.workspace, op.title or "", question, answer, op.updated_at)
        )  # fmt: skip
    return found


def delete_sources_like(conn: Connection, kind: str, uri_prefix: str) -> int:
    """Remove every source of `kind` whose uri starts with `uri_prefix` (in every scope); how many."""
    escaped = escape_like(uri_prefix)
    ids = (
        conn.execute(sa.select(s.c.id).where(s.c.kind == kind, s.c.uri.like(f"{escaped}%", escape="\\")))
        .scalars()
        .all()
    )
    for source_id in ids:
        delete_source(conn, source_id)
    return len(ids)


def idle_sessions(conn: Connection, *, idle_before: datetime, active_after: datetime) -> list[tuple[str, int]]:
    """Sessions whose last operation ended between `active_after` and `idle_before` and none is in play, with the
    position of their last message: the candidates for observation (the caller compares with how far each was
    observed)."""
    last_op = sa.select(o.c.session_id, sa.func.max(o.c.updated_at).label("last")).group_by(o.c.session_id).subquery()
    busy = sa.select(o.c.session_id).where(o.c.status.in_(("running", "waiting_for_human", "interrupted")))
    last_message = (
        sa.select(m.c.session_id, sa.func.max(m.c.position).label("position")).group_by(m.c.session_id).subquery()
    )
    stmt = (
        sa.select(last_message.c.session_id, last_message.c.position)
        .join(last_op, last_op.c.session_id == last_message.c.session_id)
        .where(last_op.c.last < idle_before, last_op.c.last >= active_after, last_message.c.session_id.not_in(busy))
    )
    return [(r.session_id, int(r.position)) for r in conn.execute(stmt)]


def source_texts(conn: Connection, kind: str, scope: str) -> list[tuple[RagSourceRow, str]]:
    """Every source of `kind` in `scope` with its text (its chunks joined), newest first."""
    found = []
    for source in sorted(sources(conn, kind, scope), key=lambda r: r.indexed_at, reverse=True):
        texts = conn.execute(sa.select(c.c.text).where(c.c.source_id == source.id).order_by(c.c.ordinal)).scalars()
        found.append((source, "\n".join(texts)))
    return found


def pins(conn: Connection, scope: str) -> list[tuple[str, datetime]]:
    """The folder's pinned files (uri, when pinned), oldest pin first."""
    stmt = sa.select(pn.c.uri, pn.c.created_at).where(pn.c.scope == scope).order_by(pn.c.id)
    return [(r.uri, r.created_at) for r in conn.execute(stmt)]


def pinned_scopes(conn: Connection) -> set[str]:
    """The folders with at least one pin."""
    return set(conn.execute(sa.select(pn.c.scope).distinct()).scalars())


def pin(conn: Connection, scope: str, uri: str, *, now: datetime) -> bool:
    """Pin a file; False when it already was."""
    if conn.execute(sa.select(pn.c.id).where(pn.c.scope == scope, pn.c.uri == uri)).first() is not None:
        return False
    conn.execute(pn.insert().values(scope=scope, uri=uri, created_at=now))
    return True


def unpin(conn: Connection, scope: str, uri: str) -> bool:
    return bool(conn.execute(pn.delete().where(pn.c.scope == scope, pn.c.uri == uri)).rowcount)


def source_chunks(conn: Connection, kind: str, scope: str, uri: str) -> list[RagChunkRow]:
    """A source's chunks in reading order (none when it is not indexed)."""
    stmt = (
        sa.select(c.c.id, c.c.source_id, c.c.ordinal, c.c.heading, c.c.text, s.c.uri, s.c.title, s.c.kind, s.c.scope)
        .select_from(c.join(s))
        .where(s.c.kind == kind, s.c.scope == scope, s.c.uri == uri)
        .order_by(c.c.ordinal)
    )
    return [RagChunkRow(**r._asdict()) for r in conn.execute(stmt)]


def stale_sources(conn: Connection, embedder: str) -> list[RagSourceRow]:
    """Sources with passages another embedder made (the embedder was changed since)."""
    stmt = sa.select(s).where(s.c.embedder != embedder, s.c.chunk_count > 0, s.c.error.is_(None))
    return [_source(r) for r in conn.execute(stmt.order_by(s.c.id))]


def source_text(conn: Connection, source_id: int) -> str:
    """A source's text as its chunks hold it, in reading order."""
    texts = conn.execute(sa.select(c.c.text).where(c.c.source_id == source_id).order_by(c.c.ordinal)).scalars()
    return "\n\n".join(texts)

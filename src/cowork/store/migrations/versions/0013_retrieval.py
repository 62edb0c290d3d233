"""Retrieval: indexed sources, their chunks (text and vector) and ingestion jobs (see `cowork.retrieval`).

`rag_fts` is an FTS5 table (porter stemming) whose rowid is the chunk's id; the repository writes and deletes it
beside `rag_chunks` in the same transaction. Not part of `_schema.metadata` (a virtual table), like `search_index`.
On PostgreSQL the chunk text is searched with its own full-text search instead (the scale-out issue).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rag_sources",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("scope", sa.Text, nullable=False),
        sa.Column("uri", sa.Text, nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("size", sa.BigInteger, nullable=False),
        sa.Column("mtime_ns", sa.BigInteger, nullable=False),
        sa.Column("chunk_count", sa.Integer, nullable=False),
        sa.Column("embedder", sa.String(200), nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("indexed_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("kind", "scope", "uri", name="uq_rag_sources_uri"),
    )
    op.create_table(
        "rag_chunks",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("source_id", sa.Integer, sa.ForeignKey("rag_sources.id", ondelete="CASCADE"), nullable=False),
        sa.Column("ordinal", sa.Integer, nullable=False),
        sa.Column("heading", sa.Text, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("vector", sa.LargeBinary),
        sa.Index("ix_rag_chunks_source", "source_id", "ordinal"),
    )
    op.create_table(
        "rag_staged",
        sa.Column("embedder", sa.String(200), primary_key=True),
        sa.Column("text_hash", sa.String(40), primary_key=True),
        sa.Column("vector", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "ingest_jobs",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("scope", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("spec", sa.Text, nullable=False),
        sa.Column("total", sa.Integer, nullable=False),
        sa.Column("done", sa.Integer, nullable=False),
        sa.Column("failed", sa.Integer, nullable=False),
        sa.Column("chunks", sa.Integer, nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Index("ix_ingest_jobs_status", "status"),
    )
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            "CREATE VIRTUAL TABLE rag_fts USING fts5(text, heading, tokenize = 'porter unicode61 remove_diacritics 2')"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TABLE IF EXISTS rag_fts")
    op.drop_table("ingest_jobs")
    op.drop_table("rag_staged")
    op.drop_table("rag_chunks")
    op.drop_table("rag_sources")

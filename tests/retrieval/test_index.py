"""The hybrid index on a real SQLite file: incremental by content hash, kinds apart, BM25 and vectors fused."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowork.retrieval import RetrievalIndex, fts_query
from cowork.store.repos import retrieval as repo
from cowork.testing.embedders import HashEmbedder


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_fts_query_keeps_content_words_and_quotes_them() -> None:
    assert fts_query('How do I "copy" a folder? AND OR NEAR') == '"copy" OR "folder" OR "near"'
    assert fts_query("the a of") == ""


def test_an_unchanged_file_is_not_embedded_again_and_a_changed_one_replaces_its_chunks(db, tmp_path: Path) -> None:
    embedder = HashEmbedder()
    index = RetrievalIndex(db, embedder)
    path = _write(tmp_path, "notes.md", "# Budget\n\nThe zebra budget for 2027 is approved.")
    first = index.index_file(path, kind="documents", scope="w", uri="notes.md")
    assert (first.status, first.chunks, first.embedded) == ("indexed", 1, 1)
    assert index.index_file(path, kind="documents", scope="w", uri="notes.md").status == "unchanged"
    assert embedder.texts == 1
    path.write_text("# Budget\n\nThe giraffe plan replaced it.", encoding="utf-8")
    assert index.index_file(path, kind="documents", scope="w", uri="notes.md").status == "indexed"
    assert [h.uri for h in index.search("giraffe", kind="documents", scope="w", mode="keyword")] == ["notes.md"]
    assert index.search("zebra", kind="documents", scope="w", mode="keyword") == []  # the old chunk left FTS too
    assert db.read_sync(lambda c: repo.count_chunks(c, "documents", "w")) == 1


def test_search_fuses_keyword_and_vector_rankings_and_keeps_kinds_and_scopes_apart(db, tmp_path: Path) -> None:
    index = RetrievalIndex(db, HashEmbedder())
    index.index_text("Quarterly revenue rose in every region.", kind="documents", scope="w", uri="a.md", title="A")
    index.index_text("The cat sat on the mat.", kind="documents", scope="w", uri="b.md", title="B")
    index.index_text("Revenue notes from another folder.", kind="documents", scope="other", uri="c.md", title="C")
    index.index_text("Revenue observation.", kind="observations", scope="w", uri="o1", title="O")
    hits = index.search("revenue by region", kind="documents", scope="w", limit=5)
    assert hits[0].uri == "a.md"
    assert hits[0].keyword_rank == 0 and hits[0].vector_rank == 0 and hits[0].similarity is not None
    assert {h.uri for h in hits} <= {"a.md", "b.md"}
    assert [h.uri for h in index.search("revenue", kind="observations", scope="w")] == ["o1"]


def test_min_similarity_drops_weak_vector_matches_that_bm25_did_not_find(db) -> None:
    index = RetrievalIndex(db, HashEmbedder())
    index.index_text("Quarterly revenue rose.", kind="documents", scope="w", uri="a.md", title="A")
    index.index_text("Completely unrelated words here.", kind="documents", scope="w", uri="b.md", title="B")
    loose = index.search("revenue", kind="documents", scope="w")
    strict = index.search("revenue", kind="documents", scope="w", min_similarity=0.9)
    assert {h.uri for h in loose} == {"a.md", "b.md"}
    assert [h.uri for h in strict] == ["a.md"]


def test_a_new_embedder_re_embeds_and_searches_only_its_own_vectors(db, tmp_path: Path) -> None:
    path = _write(tmp_path, "n.md", "Alpha beta gamma.")
    RetrievalIndex(db, HashEmbedder(64)).index_file(path, kind="documents", scope="w", uri="n.md")
    other = HashEmbedder(32)
    index = RetrievalIndex(db, other)
    assert index.search("alpha", kind="documents", scope="w", mode="vector") == []  # 64-d vectors are not used
    before = other.texts
    assert index.index_file(path, kind="documents", scope="w", uri="n.md").status == "indexed"
    assert other.texts == before + 1
    assert [h.uri for h in index.search("alpha", kind="documents", scope="w", mode="vector")] == ["n.md"]


def test_forget_removes_a_source_its_chunks_and_their_vectors(db) -> None:
    index = RetrievalIndex(db, HashEmbedder())
    index.index_text("Alpha beta.", kind="documents", scope="w", uri="a.md", title="A")
    assert index.search("alpha", kind="documents", scope="w")
    assert index.forget(kind="documents", scope="w", uri="a.md")
    assert index.search("alpha", kind="documents", scope="w") == []
    assert not index.forget(kind="documents", scope="w", uri="a.md")


def test_a_file_that_cannot_be_converted_is_recorded_as_failed_not_raised(db, tmp_path: Path) -> None:
    index = RetrievalIndex(db, HashEmbedder())
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"not a pdf at all")
    outcome = index.index_file(path, kind="documents", scope="w", uri="broken.pdf")
    assert outcome.status == "failed" and outcome.error
    source = db.read_sync(lambda c: repo.get_source(c, "documents", "w", "broken.pdf"))
    assert source is not None and source.error and source.chunk_count == 0


def test_a_large_file_stages_its_vectors_so_a_retry_embeds_none_again(db, monkeypatch) -> None:
    embedder = HashEmbedder()
    index = RetrievalIndex(db, embedder)
    text = "\n\n".join(f"Paragraph {i} talks about topic {i} in enough words to stand alone. " * 12 for i in range(150))
    stored = index._store

    def fail(*args, **kwargs):
        raise RuntimeError("the process died here")

    monkeypatch.setattr(index, "_store", fail)
    with pytest.raises(RuntimeError):
        index.index_text(text, kind="documents", scope="w", uri="big.md", title="Big")
    first = embedder.texts
    assert first > 64
    monkeypatch.setattr(index, "_store", stored)
    outcome = index.index_text(text, kind="documents", scope="w", uri="big.md", title="Big")
    assert outcome.embedded == 0 and outcome.chunks == first  # every vector came from the staged batches
    assert embedder.texts == first
    assert db.read_sync(lambda c: repo.staged(c, embedder.id, ["x"])) == {}


def test_the_floor_keeps_the_best_keyword_matches_whatever_their_similarity(db) -> None:
    index = RetrievalIndex(db, HashEmbedder())
    filler = " ".join(f"filler{i}" for i in range(60))
    index.index_text(f"{filler} descaled", kind="documents", scope="w", uri="long.md", title="Long")
    hits = index.search("descaled", kind="documents", scope="w", min_similarity=0.9)
    assert [h.uri for h in hits] == ["long.md"]
    assert hits[0].similarity is not None and hits[0].similarity < 0.9 and hits[0].keyword_rank == 0

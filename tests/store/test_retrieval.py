"""The retrieval repository's keyword search and staging, on SQLite's FTS5 and PostgreSQL's own full-text search."""

from __future__ import annotations

from cowork.store import Database, repos
from cowork.store.repos.retrieval import NewChunk


def _put(db: Database, uri: str, title: str, chunks: list[tuple[str, str]], *, scope: str = "/w") -> int:
    new = [NewChunk(i, heading, text, None) for i, (heading, text) in enumerate(chunks)]
    return db.write_sync(
        lambda c: repos.retrieval.put_source(c, kind="documents", scope=scope, uri=uri, title=title, content_hash="h",
                                             size=1, mtime_ns=1, embedder="e", new_chunks=new)
    )  # fmt: skip


def _ids(db: Database, *terms: str, scope: str = "/w") -> list[int]:
    return db.read_sync(lambda c: repos.retrieval.fts_search(c, list(terms), "documents", scope, 10))


def test_keywords_are_stemmed_any_of_them_matches_and_the_heading_counts_most(db: Database) -> None:
    _put(db, "a.md", "Notes", [("", "The budget for the launch."), ("Budget", "Figures for the year.")])
    _put(db, "b.md", "Plans", [("", "Quarterly revenues rose in every region (see docs/budget.xlsx).")])
    chunks = db.read_sync(lambda c: repos.retrieval.source_chunks(c, "documents", "/w", "a.md"))
    in_text, in_heading = (chunk.id for chunk in chunks)
    (revenue,) = _ids(db, "revenue")  # stemmed, as FTS5's porter tokenizer does
    assert _ids(db, "budget")[0] == in_heading and set(_ids(db, "budget")) == {in_text, in_heading, revenue}
    assert set(_ids(db, "launch", "regions")) == {in_text, revenue}
    assert _ids(db, "xlsx") == [revenue]  # a file name's parts are words
    assert _ids(db, "nothing") == [] and _ids(db) == []
    assert _ids(db, "budget", scope="/elsewhere") == []


def test_reindexing_and_deleting_a_source_take_its_chunks_out_of_the_keyword_index(db: Database) -> None:
    source = _put(db, "a.md", "Notes", [("", "The pelican lands.")])
    _put(db, "a.md", "Notes", [("", "The heron lands.")])
    assert _ids(db, "pelican") == [] and len(_ids(db, "heron")) == 1
    db.write_sync(lambda c: repos.retrieval.delete_source(c, source))
    assert _ids(db, "heron") == [] and _ids(db, "lands") == []


def test_staging_a_vector_again_replaces_it(db: Database) -> None:
    db.write_sync(lambda c: repos.retrieval.stage(c, "e", {"h1": b"old", "h2": b"two"}))
    db.write_sync(lambda c: repos.retrieval.stage(c, "e", {"h1": b"new"}))
    assert db.read_sync(lambda c: repos.retrieval.staged(c, "e", ["h1", "h2", "h3"])) == {"h1": b"new", "h2": b"two"}

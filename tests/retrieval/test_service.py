"""Indexing jobs: the persisted state machine, progress, pause/resume/cancel, recovery at start-up, the folder
boundary, files that change or vanish — on a real SQLite file, with a fast test embedder."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from cowork.config import MemoryConfig
from cowork.retrieval import IngestError, Retrieval, scope_of
from cowork.store import IngestJobRow
from cowork.store.repos import retrieval as repo
from cowork.testing.embedders import HashEmbedder

pytestmark = pytest.mark.anyio


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "folder"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "budget.md").write_text("# Budget\n\nThe zebra project costs 40,000 euros.\n")
    (root / "docs" / "team.md").write_text("# Team\n\nSarah leads the giraffe group.\n")
    (root / "notes.txt").write_text("Buy milk.\n")
    (root / "image.png").write_bytes(b"\x89PNG not indexed")
    (root / ".env").write_text("SECRET=zebra\n")  # credentials: never read
    (root / ".hidden").mkdir()
    (root / ".hidden" / "x.md").write_text("hidden zebra\n")
    return root


async def _until(retrieval: Retrieval, job_id: str, *statuses: str) -> IngestJobRow:
    for _ in range(500):
        job = await retrieval.job(job_id)
        if job.status in statuses:
            return job
        await asyncio.sleep(0.01)
    raise AssertionError(f"job {job_id} stayed {job.status}")


async def test_a_folder_is_indexed_by_a_job_that_reports_its_progress(db, folder: Path) -> None:
    seen: list[IngestJobRow] = []
    retrieval = Retrieval(db, MemoryConfig(), embedder=HashEmbedder(), publish=seen.append)
    job = await retrieval.add(folder, ["."])
    done = await _until(retrieval, job.id, "done")
    assert (done.total, done.done, done.failed) == (3, 3, 0)
    sources = db.read_sync(lambda c: repo.sources(c, "documents", scope_of(folder)))
    assert [s.uri for s in sources] == ["docs/budget.md", "docs/team.md", "notes.txt"]  # no .env, .hidden, png
    for _ in range(100):  # the last notification follows the committed status
        if seen[-1].status == "done":
            break
        await asyncio.sleep(0.01)
    assert seen[0].status == "pending" and seen[-1].status == "done"
    assert "processing" in [j.status for j in seen]
    answer = await retrieval.search(folder, "zebra costs")
    assert answer.hits[0].uri == "docs/budget.md" and answer.sources == 3 and answer.indexing is None
    await retrieval.stop()


async def test_reindexing_skips_unchanged_files_and_forgets_vanished_ones(db, folder: Path) -> None:
    embedder = HashEmbedder()
    retrieval = Retrieval(db, MemoryConfig(), embedder=embedder)
    await _until(retrieval, (await retrieval.add(folder, ["."])).id, "done")
    first = embedder.texts
    (folder / "notes.txt").unlink()
    (folder / "docs" / "team.md").write_text("# Team\n\nTom leads the okapi group.\n")
    job = await _until(retrieval, (await retrieval.add(folder, ["."])).id, "done")
    assert embedder.texts == first + 1 and job.chunks == 1  # only the changed file
    uris = [s.uri for s in db.read_sync(lambda c: repo.sources(c, "documents", scope_of(folder)))]
    assert uris == ["docs/budget.md", "docs/team.md"]
    assert (await retrieval.search(folder, "okapi", mode="keyword")).hits[0].uri == "docs/team.md"
    assert (await retrieval.search(folder, "giraffe", mode="keyword")).hits == []


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("../outside.md", "path_denied"),
        ("/etc/passwd", "path_denied"),
        ("docs/missing.md", "path_denied"),
        ("~/.ssh/id_rsa", "path_denied"),
        (".env", "invalid_params"),
        ("image.png", "invalid_params"),
    ],
)
async def test_paths_outside_the_folder_missing_secret_or_unreadable_are_refused_and_no_job_is_made(
    db, folder: Path, path: str, code: str
) -> None:
    (folder.parent / "outside.md").write_text("outside\n")
    retrieval = Retrieval(db, MemoryConfig(), embedder=HashEmbedder())
    with pytest.raises(IngestError) as refused:
        await retrieval.add(folder, ["docs", path])
    assert refused.value.code == code
    assert await retrieval.jobs() == []


async def test_a_link_out_of_the_folder_is_not_followed(db, folder: Path) -> None:
    (folder.parent / "secret.md").write_text("the vault code is 1234\n")
    (folder / "docs" / "link.md").symlink_to(folder.parent / "secret.md")
    retrieval = Retrieval(db, MemoryConfig(), embedder=HashEmbedder())
    await _until(retrieval, (await retrieval.add(folder, ["."])).id, "done")
    assert (await retrieval.search(folder, "vault code", mode="keyword")).hits == []
    with pytest.raises(IngestError):
        await retrieval.add(folder, ["docs/link.md"])


async def test_pause_resume_and_cancel(db, folder: Path) -> None:
    for i in range(30):
        (folder / "docs" / f"n{i:02d}.md").write_text(f"# Note {i}\n\nNote number {i}.\n")
    embedder = HashEmbedder(delay=0.02)
    retrieval = Retrieval(db, MemoryConfig(), embedder=embedder)
    job = await retrieval.add(folder, ["."])
    for _ in range(500):
        if (await retrieval.job(job.id)).done >= 2:
            break
        await asyncio.sleep(0.01)
    paused = await retrieval.pause(job.id)
    assert paused.status == "paused" and 0 < paused.done < paused.total
    await asyncio.sleep(0.1)
    assert (await retrieval.job(job.id)).done == paused.done  # nothing moves while paused
    with pytest.raises(IngestError):
        await retrieval.pause(job.id)
    resumed = await retrieval.resume(job.id)
    assert resumed.status in ("pending", "processing")
    done = await _until(retrieval, job.id, "done")
    assert done.done == done.total == 33 and embedder.texts == 33  # each file embedded once
    second = await retrieval.add(folder, ["docs"])
    cancelled = await retrieval.cancel(second.id)
    assert cancelled.status == "cancelled"
    with pytest.raises(IngestError) as missing:
        await retrieval.job("nope")
    assert missing.value.code == "job_not_found"


async def test_a_job_left_processing_resumes_after_its_last_file_and_a_stale_one_fails(db, folder: Path) -> None:
    scope = scope_of(folder)
    spec = json.dumps({"workspace": scope, "paths": ["."]})
    db.write_sync(lambda c: repo.create_job(c, job_id="left", kind="documents", scope=scope, spec=spec, total=3))
    db.write_sync(lambda c: repo.update_job(c, "left", status="processing", done=1))
    db.write_sync(lambda c: repo.create_job(c, job_id="old", kind="documents", scope=scope, spec=spec, total=3))
    old = datetime.now(UTC) - timedelta(hours=48)
    db.write_sync(
        lambda c: c.execute(
            sa.text("UPDATE ingest_jobs SET status='processing', updated_at=:t WHERE id='old'"), {"t": old}
        )
    )
    embedder = HashEmbedder()
    retrieval = Retrieval(db, MemoryConfig(), embedder=embedder)
    budget = folder / "docs" / "budget.md"  # the file the stopped run finished
    await asyncio.to_thread(retrieval.index.index_file, budget, kind="documents", scope=scope, uri="docs/budget.md")
    (folder / "docs" / "added.md").write_text("# Added\n\nWritten while the server was down.\n")  # sorts first
    assert embedder.texts == 1
    await retrieval.start()
    done = await _until(retrieval, "left", "done")
    assert done.done == 4 and done.total == 4
    assert embedder.texts == 4  # added.md, team.md, notes.txt: budget.md was not embedded again
    assert (await retrieval.job("old")).status == "failed"


async def test_a_never_indexed_folder_starts_indexing_on_the_first_search_when_asked(db, folder: Path) -> None:
    retrieval = Retrieval(db, MemoryConfig(), embedder=HashEmbedder())
    assert (await retrieval.search(folder, "zebra")).indexing is None  # a plain search starts nothing
    first = await retrieval.search(folder, "zebra", auto_index=True)
    assert first.indexing is not None and first.hits == []
    await _until(retrieval, first.indexing.id, "done")
    assert (await retrieval.search(folder, "zebra", auto_index=True)).hits
    quiet = Retrieval(db, MemoryConfig(auto_index=False), embedder=HashEmbedder())
    other = folder / "docs"
    assert (await quiet.search(other, "zebra", auto_index=True)).indexing is None


class _Unreachable(HashEmbedder):
    def embed_blocking(self, texts):
        from cowork.embeddings import EmbedderError

        raise EmbedderError("ollama:nomic-embed-text at http://127.0.0.1:9: connection refused")


async def test_an_embedder_that_fails_fails_the_job_and_degrades_health(db, folder: Path) -> None:
    retrieval = Retrieval(db, MemoryConfig(), embedder=_Unreachable())
    job = await _until(retrieval, (await retrieval.add(folder, ["."])).id, "failed")
    assert job.error is not None and "connection refused" in job.error and job.done == 0
    status, reason = retrieval.embedder_health()
    assert status == "degraded" and "connection refused" in reason
    resumed = await retrieval.resume(job.id)  # a failed job can be retried
    assert resumed.status in ("pending", "processing", "failed")


def test_a_remote_embedder_is_configured_from_the_user_s_settings() -> None:
    from cowork.config import EmbedderConfig
    from cowork.embeddings import EmbedderError, RemoteEmbedder, make_embedder

    ollama = make_embedder(EmbedderConfig(provider="ollama", model="nomic-embed-text"))
    assert isinstance(ollama, RemoteEmbedder) and ollama.id == "ollama:nomic-embed-text"
    with pytest.raises(EmbedderError, match="needs a model"):
        make_embedder(EmbedderConfig(provider="openai"))
    with pytest.raises(EmbedderError, match="OPENAI_KEY_FOR_TESTS"):
        make_embedder(EmbedderConfig(provider="openai", model="m", api_key_env="OPENAI_KEY_FOR_TESTS"), environ={})


async def test_searching_an_indexed_folder_picks_up_its_changes_in_the_background(
    db, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cowork.retrieval import _service

    embedder = HashEmbedder()
    retrieval = Retrieval(db, MemoryConfig(), embedder=embedder)
    first = await retrieval.search(folder, "zebra", auto_index=True)
    assert first.indexing is not None
    await _until(retrieval, first.indexing.id, "done")
    (folder / "docs" / "new.md").write_text("# New\n\nThe okapi arrived.\n")
    assert (await retrieval.search(folder, "okapi", auto_index=True, mode="keyword")).hits == []  # refreshed < 60 s
    assert len(await retrieval.jobs()) == 1
    monkeypatch.setattr(_service, "REFRESH_EVERY_S", 0.0)
    embedded = embedder.texts
    await retrieval.search(folder, "okapi", auto_index=True, mode="keyword")  # starts the refresh
    refresh = (await retrieval.jobs())[0]
    await _until(retrieval, refresh.id, "done")
    assert embedder.texts == embedded + 1  # the new file only: the others were known by size and time
    assert [h.uri for h in (await retrieval.search(folder, "okapi", mode="keyword")).hits] == ["docs/new.md"]


async def test_a_touched_but_unchanged_file_is_not_embedded_again(db, folder: Path) -> None:
    import os

    embedder = HashEmbedder()
    retrieval = Retrieval(db, MemoryConfig(), embedder=embedder)
    await _until(retrieval, (await retrieval.add(folder, ["."])).id, "done")
    before = embedder.texts
    path = folder / "docs" / "budget.md"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000_000))
    await _until(retrieval, (await retrieval.add(folder, ["."])).id, "done")
    assert embedder.texts == before
    stored = db.read_sync(lambda c: repo.get_source(c, "documents", scope_of(folder), "docs/budget.md"))
    assert stored is not None and stored.mtime_ns == path.stat().st_mtime_ns


async def test_asking_again_while_the_folder_is_being_indexed_gives_the_same_job(db, folder: Path) -> None:
    retrieval = Retrieval(db, MemoryConfig(), embedder=HashEmbedder(delay=0.05))
    first = await retrieval.add(folder, ["."])
    again = await retrieval.add(folder, ["docs"])
    assert again.id == first.id and len(await retrieval.jobs()) == 1
    await _until(retrieval, first.id, "done")
    assert (await retrieval.add(folder, ["docs"])).id != first.id  # once it is done, a new job


async def test_a_changed_embedder_re_embeds_everything_in_the_background(db, folder: Path) -> None:
    before = Retrieval(db, MemoryConfig(), embedder=HashEmbedder(64))
    await before.start()
    job = await before.add(folder, ["."])
    await _until(before, job.id, "done")
    scope = scope_of(folder)
    turn = "User: what does the zebra project cost?\n\nAssistant: 40,000 euros."
    await asyncio.to_thread(
        before.index.index_text, turn, kind="conversations", scope=scope, uri="ses_1/op_1", title="Costs"
    )
    assert await before.reembed() == 0  # nothing stale for the embedder that made it
    await before.stop()

    after = Retrieval(db, MemoryConfig(), embedder=HashEmbedder(32))
    await after.start()
    assert (await after.search(folder, "zebra costs", mode="vector")).hits == []  # old vectors: not comparable
    assert after._reembedding is not None  # the first use of the index started it
    assert await after._reembedding == 4  # three files and the conversation
    for refreshing in [j for j in await after.jobs() if j.status in ("pending", "processing")]:
        await _until(after, refreshing.id, "done")
    every = db.read_sync(lambda c: repo.sources(c, "documents", scope) + repo.sources(c, "conversations", scope))
    assert {s.embedder for s in every} == {"test:hash-32"} and len(every) == 4
    assert (await after.search(folder, "zebra costs", mode="vector")).hits[0].uri == "docs/budget.md"
    recalled = await after.search(folder, "zebra cost", kind="conversations", mode="vector")
    assert recalled.hits[0].uri == "ses_1/op_1" and "40,000 euros" in recalled.hits[0].text
    assert await after.reembed() == 0
    await after.stop()

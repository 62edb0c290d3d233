"""SIGKILL during the ingestion of 2,000 chunks: after a restart the job resumes from its checkpoint, every chunk
ends up indexed once, and no vector that was committed is computed again (only the batch in flight when the process
died can be, at most one batch)."""

from __future__ import annotations

import collections
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cowork.retrieval._index import STAGE_BATCH
from cowork.store import Database
from cowork.store.repos import retrieval as repo

CHILD = Path(__file__).with_name("ingest_child.py")
FILES, CHUNKS_PER_FILE = 10, 200


def _folder(root: Path) -> Path:
    folder = root / "folder"
    folder.mkdir()
    for f in range(FILES):
        # One paragraph per chunk (each about 1,000 characters, so the chunker cuts between them), all different.
        paragraphs = [
            f"File {f} paragraph {p}: " + " ".join(f"word{f}x{p}x{w}" for w in range(90))
            for p in range(CHUNKS_PER_FILE)
        ]
        (folder / f"doc{f:02d}.md").write_text("# Doc\n\n" + "\n\n".join(paragraphs), encoding="utf-8")
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("kill_after", [300, 1100])
def test_a_killed_ingestion_resumes_and_embeds_no_committed_chunk_again(tmp_path: Path, kill_after: int) -> None:
    folder = _folder(tmp_path)
    database, log = tmp_path / "cowork.db", tmp_path / "embedded.log"
    command = [sys.executable, str(CHILD), str(database), str(folder), str(log)]
    with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as child:
        deadline = time.monotonic() + 90
        while (not log.exists() or len(log.read_text().splitlines()) < kill_after) and time.monotonic() < deadline:
            assert child.poll() is None, child.communicate()
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
        child.communicate()
    before = len(log.read_text().splitlines())
    assert before < FILES * CHUNKS_PER_FILE, "the job finished before it could be killed"

    finished = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    assert "resum" in finished.stdout or "job " in finished.stdout
    assert "finished done" in finished.stdout, finished.stdout

    db = Database.sqlite(database)
    try:
        job = db.read_sync(lambda c: repo.jobs(c))[0]
        assert (job.status, job.done, job.total) == ("done", FILES, FILES)
        assert db.read_sync(lambda c: repo.count_chunks(c, "documents", str(folder.resolve()))) == 2000
        assert db.read_sync(lambda c: c.exec_driver_sql("SELECT count(*) FROM rag_staged").scalar()) == 0
        fts = db.read_sync(lambda c: c.exec_driver_sql("SELECT count(*) FROM rag_fts").scalar())
        assert fts == 2000
    finally:
        db.close()
    counts = collections.Counter(log.read_text().splitlines())
    assert len(counts) == 2000
    repeated = [h for h, n in counts.items() if n > 1]
    assert all(counts[h] == 2 for h in repeated)
    assert len(repeated) <= STAGE_BATCH, f"{len(repeated)} chunks were embedded twice"

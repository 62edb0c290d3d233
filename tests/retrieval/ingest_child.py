"""A process that indexes a folder into a database and exits when the job is done (killed by the crash test).

    python tests/retrieval/ingest_child.py DATABASE FOLDER EMBED_LOG

Resumes a job a previous (killed) run left, or starts one for the whole folder. The test embedder appends the
hash of every text it embeds to EMBED_LOG, synced before it returns.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from cowork.config import MemoryConfig
from cowork.retrieval import Retrieval
from cowork.store import Database
from cowork.testing.embedders import HashEmbedder


async def main(database: Path, folder: Path, log: Path) -> None:
    db = Database.sqlite(database)
    db.migrate()
    retrieval = Retrieval(db, MemoryConfig(), embedder=HashEmbedder(log=log, delay=0.03))
    await retrieval.start()
    jobs = await retrieval.jobs()
    job = jobs[0] if jobs else await retrieval.add(folder, ["."])
    print(f"job {job.id} {job.status} at {job.done}/{job.total}", flush=True)
    for _ in range(10_000):  # at most about 200 s
        if (await retrieval.job(job.id)).status not in ("pending", "processing"):
            break
        await asyncio.sleep(0.02)
    print(f"finished {(await retrieval.job(job.id)).status}", flush=True)
    await retrieval.stop()
    db.close()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])))

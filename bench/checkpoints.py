"""Checkpoint cost per tool call on a folder of 10,000 files, as a ratio to the tool call alone.

    uv run python bench/checkpoints.py [--files 10000] [--runs 40]

For each kind of call that is checkpointed — `write` and `edit` (the file they name is kept), and a shell command
that changes a file (the whole folder is snapshotted before and after) — the same call is timed through the tool
alone and through the tool with the checkpoint around it, as the runner does it (`Checkpoints.before`, the call,
`Checkpoints.after`, which writes the checkpoint's row to a real SQLite file). Medians over `--runs` calls,
alternating the two, in one run. Also printed: the folder's first snapshot (every file read once, a one-off per
folder) and the disk the shadow repository takes.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

from cowork.config import CheckpointsConfig
from cowork.policy import PathPolicy
from cowork.sandbox import find_bwrap
from cowork.sessions import Checkpoints
from cowork.store import Database, SessionRow, repos
from cowork.tools import ToolContext, builtin_tools


def make_folder(root: Path, files: int) -> None:
    per_folder = 100
    for index in range(files):
        folder = root / f"pkg{index // per_folder:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"module{index % per_folder:03d}.py").write_text(
            f'"""Module {index}."""\n\n' + "".join(f"VALUE_{i} = {index * i}\n" for i in range(40))
        )


async def timed(action: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await action()
    return time.perf_counter() - start


async def main(files: int, runs: int) -> None:
    registry = builtin_tools()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace, home = root / "project", root / "home"
        workspace.mkdir()
        make_folder(workspace, files)
        db = Database.sqlite(home / "cowork.db")
        db.migrate()
        now = datetime.now(UTC)
        await db.write(
            lambda conn: repos.sessions.insert(
                conn, SessionRow("ses_bench", "bench", str(workspace), None, None, now, now)
            )
        )
        checkpoints = Checkpoints(db, home, CheckpointsConfig())
        bwrap = find_bwrap()
        ctx = ToolContext(workspace=workspace, paths=PathPolicy.build(workspace), bwrap=bwrap)

        start = time.perf_counter()
        first = await checkpoints.before(workspace, None)
        first_snapshot = time.perf_counter() - start
        assert first is not None, "the folder was not snapshotted (git missing?)"

        target = workspace / "pkg000" / "module000.py"
        counter = 0

        def arguments(kind: str) -> dict[str, object]:
            nonlocal counter
            counter += 1
            if kind == "write":
                return {"filePath": str(target), "content": "".join(f"x_{i} = {counter}\n" for i in range(40))}
            if kind == "edit":
                text = target.read_text()
                old = text.splitlines()[0]
                return {"filePath": str(target), "oldString": old, "newString": f"x = {counter}"}
            return {"command": f"echo 'y = {counter}' >> pkg000/module001.py", "description": "append"}

        async def call(kind: str, *, checkpointed: bool) -> None:
            tool = registry.get("bash" if kind == "bash" else kind)
            assert tool is not None
            args = arguments(kind)
            pending = None
            if checkpointed:
                files_ = None if kind == "bash" else [ctx.write_path(str(args["filePath"]))]
                pending = await checkpoints.before(workspace, files_)
            await tool.run(tool.parse(args), ctx)
            if checkpointed:
                recorded = await checkpoints.after(
                    pending, session_id="ses_bench", operation_id="op", tool_call_id=f"c{counter}", tool=kind
                )
                assert recorded is not None, f"{kind}: nothing was recorded"

        print(
            f"folder: {files:,} files; first snapshot {first_snapshot * 1e3:,.0f} ms (once per folder); "
            f"shell commands {'sandboxed' if bwrap else 'unsandboxed (no bubblewrap)'}"
        )
        for kind in ("write", "edit", "bash"):
            alone: list[float] = []
            with_checkpoint: list[float] = []
            for _ in range(3):  # warm both paths
                await call(kind, checkpointed=False)
                await call(kind, checkpointed=True)
            for _ in range(runs):
                alone.append(await timed(functools.partial(call, kind, checkpointed=False)))
                with_checkpoint.append(await timed(functools.partial(call, kind, checkpointed=True)))
            a, c = statistics.median(alone), statistics.median(with_checkpoint)
            print(
                f"{kind:5}: tool alone {a * 1e3:7.2f} ms, with its checkpoint {c * 1e3:7.2f} ms "
                f"(checkpoint {(c - a) * 1e3:6.2f} ms; ratio {c / a:5.2f})"
            )
        size = checkpoints.repo(workspace).size()
        print(
            f"shadow repository: {size / 1e6:.1f} MB for a {sum(p.stat().st_size for p in workspace.rglob('*.py')) / 1e6:.1f} MB folder"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=40)
    options = parser.parse_args()
    asyncio.run(main(options.files, options.runs))

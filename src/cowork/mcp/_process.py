"""stdio MCP server processes: spawn in their own session, a lockfile each (`_lockfiles`), tree kill.

The SDK's `stdio_client` hides the child process; Cowork needs its pid (status, lockfile) and its stderr (the
reason a server failed), so this module spawns it and speaks newline-delimited JSON-RPC over its pipes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from subprocess import PIPE
from typing import Any

import anyio
import anyio.abc
import mcp_types
from anyio.streams.text import TextReceiveStream
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from cowork.processes import stop_tree

from ._lockfiles import write_lock

__all__ = ["StdioChild", "spawn_stdio"]

_STDERR_LINES = 40


@dataclass
class StdioChild:
    """A running stdio server: its pid, its stderr tail, and whether it has exited."""

    pid: int
    stderr: deque[str]
    exited: anyio.Event
    process: anyio.abc.Process

    def stderr_tail(self) -> str | None:
        return "\n".join(self.stderr) or None

    def exit_reason(self) -> str:
        code = self.process.returncode
        tail = self.stderr_tail()
        what = f"exited with code {code}" if code is not None else "closed its output"
        return f"The server {what}." + (f" Last stderr: {tail.splitlines()[-1]}" if tail else "")


def _parse(line: str) -> SessionMessage | Exception:
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


@contextlib.asynccontextmanager
async def spawn_stdio(
    *,
    name: str,
    command: str,
    args: list[str],
    env: dict[str, str],
    cwd: str | None,
    lock_dir: Path,
    grace: float,
    on_spawn: Callable[[StdioChild], None] = lambda _child: None,
) -> AsyncIterator[tuple[Any, Any, StdioChild]]:
    """Start the server and yield (read stream, write stream, child); on exit stop its whole tree.

    Raises:
        FileNotFoundError: the command is not found (the message says which).
    """
    executable = shutil.which(command, path=env.get("PATH") or os.environ.get("PATH"))
    if executable is None:
        raise FileNotFoundError(f"Command not found: {command!r} (is it installed and on PATH?)")
    process = await anyio.open_process(
        [executable, *args],
        stdin=PIPE,
        stdout=PIPE,
        stderr=PIPE,
        env=get_default_environment() | env,
        cwd=cwd,
        start_new_session=True,
    )
    child = StdioChild(pid=process.pid, stderr=deque(maxlen=_STDERR_LINES), exited=anyio.Event(), process=process)
    lock = write_lock(lock_dir, name, process.pid)
    on_spawn(child)
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def stdout_reader() -> None:
        assert process.stdout is not None
        buffer = ""
        try:
            async with read_writer:
                async for chunk in TextReceiveStream(process.stdout):
                    lines = (buffer + chunk).split("\n")
                    buffer = lines.pop()
                    for line in lines:
                        if line.strip():
                            await read_writer.send(_parse(line))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            child.exited.set()

    async def stderr_reader() -> None:
        assert process.stderr is not None
        buffer = ""
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for chunk in TextReceiveStream(process.stderr, errors="replace"):
                lines = (buffer + chunk).split("\n")
                buffer = lines.pop()
                child.stderr.extend(line for line in lines if line.strip())
        if buffer.strip():
            child.stderr.append(buffer)

    async def stdin_writer() -> None:
        assert process.stdin is not None
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode())

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(stdout_reader)
            tg.start_soon(stderr_reader)
            tg.start_soon(stdin_writer)
            try:
                yield read_stream, write_stream, child
            finally:
                with anyio.CancelScope(shield=True):
                    write_stream.close()
                    read_stream.close()
                    if process.stdin is not None:
                        with contextlib.suppress(Exception):
                            await process.stdin.aclose()
                    if process.returncode is None:
                        await anyio.to_thread.run_sync(lambda: stop_tree(process.pid, grace=grace, pgid=process.pid))
                    with anyio.move_on_after(grace):
                        await process.wait()
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(Exception):
                await process.aclose()
        if lock is not None:
            lock.unlink(missing_ok=True)

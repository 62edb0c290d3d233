"""The `bash` tool: run a shell command in the workspace, sandboxed, streaming its output."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from typing import Any, ClassVar

import psutil
from pydantic import BaseModel, ConfigDict, Field

from cowork.policy import Places
from cowork.processes import die_with_parent, group_members, stop_tree
from cowork.sandbox import (
    CommandRun,
    ProtectedSnapshot,
    SandboxSpec,
    bwrap_command,
    command_environment,
    shell_argv,
)
from cowork.toolbox import Toolbox

from ._base import Tool, ToolContext, ToolError

__all__ = ["BashParams", "BashTool", "kill_tree"]

_GRACE_SECONDS = 2.0
_MAX_LOG_LINES = 400
_NETWORK_FAILURE = re.compile(
    r"could not resolve host|temporary failure in name resolution|name or service not known|network is unreachable"
    r"|failed to establish a new connection|connection refused|nodename nor servname|getaddrinfo failed",
    re.IGNORECASE,
)


class BashParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, max_length=100_000, description="The command line to run.")
    description: str = Field(default="", max_length=200, description="What it does, in 5-10 words (shown to the user).")
    timeout: float | None = Field(
        default=None, gt=0, description="Seconds before it is stopped (default 120, max 600)."
    )
    needsNetwork: bool = Field(
        default=False,
        description="Set when the command must reach the network (installs, downloads, git fetch/push, APIs): the "
        "user is asked to allow it when the session's network is off.",
    )


class BashTool(Tool[BashParams]):
    name = "bash"
    description = """Run a shell command (bash) in the workspace and return its output.

Use it for git, builds, tests, package managers, running scripts, and anything that needs a shell.

Do NOT use it for file operations that have dedicated tools:
- reading files: read (not cat/head/tail); finding files: glob (not find/ls -R);
- searching contents: grep (not grep/rg); editing: edit (not sed/awk); writing: write (not echo >/tee).

Rules:
- The working directory is the workspace; quote paths with spaces; prefer paths over cd.
- Commands run sandboxed: only the workspace (and the output directory) is writable, /tmp is private, and the
  network is off unless the session allows it. Set needsNetwork for commands that need it.
- Risky commands (deleting, force pushes, installs...) ask the user first; destructive ones always do.
- Default timeout 120 s, maximum 600 s. No TTY: never use interactive flags (git rebase -i, git add -p).
- Output beyond 30,000 characters is cut; the full output is saved to a file you can read.
- Git: never force push, reset --hard, or commit unless the user asked; stage specific files.

When a command fails, read the error, fix the cause, and try another way; do not repeat it unchanged."""
    params: ClassVar[type[BaseModel]] = BashParams
    side_effects: ClassVar[bool] = True

    def side_effects_of(self, arguments: dict[str, Any]) -> bool:
        from cowork.policy import classify  # the shell parser loads with the first command, not at start-up

        command = arguments.get("command")
        return not isinstance(command, str) or classify(command).verdict != "safe"

    def needs_approval(self, arguments: dict[str, Any]) -> bool:
        return self.side_effects_of(arguments) or self.needs_network(arguments)

    def shell_command(self, arguments: dict[str, Any]) -> str | None:
        command = arguments.get("command")
        return command if isinstance(command, str) else None

    def needs_network(self, arguments: dict[str, Any]) -> bool:
        # Truthy, not `is True`: the parameters model would coerce "yes"/1 to True, and asking too often is the safe side.
        return bool(arguments.get("needsNetwork"))

    async def run(self, params: BashParams, ctx: ToolContext) -> str:
        settings = ctx.settings.bash
        timeout = min(params.timeout or settings.default_timeout_seconds, settings.max_timeout_seconds)
        network = ctx.network or params.needsNetwork
        argv = shell_argv(params.command)
        protected: ProtectedSnapshot | None = None
        # Cowork's document toolbox, once installed: first on PATH (python3 imports openpyxl…), read-only in the sandbox.
        toolbox = Toolbox.of_home(ctx.home) if ctx.home is not None and ctx.settings.toolbox.enabled else None
        toolbox_bin = toolbox.active() if toolbox is not None else None
        if ctx.bwrap is not None:
            policy = ctx.paths
            spec = SandboxSpec(
                workspace=ctx.workspace,
                writable=tuple(policy.write_roots) if policy else (),
                hidden=(*Places.current(ctx.home).sensitive_roots(), *(policy.deny if policy else ())),
                readonly=(toolbox_bin.parent,) if toolbox_bin is not None else (),
                network=network,
            )
            argv = bwrap_command(ctx.bwrap, spec, argv)
            protected = ProtectedSnapshot.take(ctx.workspace)
        # Only allow-listed variables: the server's own secrets (and the user's) must not reach what the model runs.
        env = command_environment(ctx.settings.environment, os.environ)
        if toolbox is not None and toolbox_bin is not None:
            env = toolbox.environment(env, toolbox_bin)
        # Recorded before it starts, so that a Cowork killed meanwhile finds and stops it at its next start.
        record = None
        if ctx.home is not None:
            record = CommandRun.begin(
                ctx.home, session_id=ctx.session_id, operation_id=ctx.operation_id, tool_call_id=ctx.tool_call_id
            )
        undone: list[str] = []
        try:
            code, output, timed_out = await _execute(argv, env, ctx, timeout, record)
        finally:
            if record is not None:
                record.close()
            if protected is not None:
                undone = protected.enforce()  # also after a cancel or a timeout
        text = output.text().rstrip("\n")
        if undone:
            text += "\n[Cowork undid changes to protected files: " + " ".join(undone) + "]"
        if timed_out:
            raise ToolError(f"The command was stopped after {timeout:.0f} s (timeout).\n{text}")
        note = ""
        if code != 0 and not network and _NETWORK_FAILURE.search(output.tail()):
            note = (
                "\nThis looks like a network failure, and the network is off for this session. If the command "
                "needs it, run it again with needsNetwork set to true (the user will be asked)."
            )
        return f"{text}\n[exit code {code}]{note}" if code != 0 else (text or "(no output)")


async def _execute(
    argv: list[str], env: dict[str, str], ctx: ToolContext, limit: float, record: CommandRun | None
) -> tuple[int, _Output, bool]:
    """Run the command to its end (or its timeout); its exit code, its output, and whether it timed out."""
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=ctx.workspace,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            # Its own group, so the whole command can be stopped; and killed by the kernel if Cowork dies (what it
            # started lives on in the group until the next start stops it; bubblewrap's --die-with-parent ends a
            # sandboxed command's every process).
            start_new_session=True,
            preexec_fn=die_with_parent(),
        )
    )
    try:
        process = await asyncio.shield(starting)
    except asyncio.CancelledError:
        # Cancelled while the transport was still being set up: the shell may already run (on a busy machine its
        # children even have started), so it is stopped as soon as it exists rather than left behind.
        if not starting.cancelled():
            with contextlib.suppress(OSError):
                await kill_tree(await starting)
        raise
    except OSError as exc:
        raise ToolError(f"Could not start the shell: {exc.strerror}.") from None
    if record is not None:
        record.started(process.pid)
    output = _Output(ctx)
    try:
        timed_out = await _collect(process, output, limit)
    except asyncio.CancelledError:
        await kill_tree(process)
        raise
    if timed_out:
        await kill_tree(process)
    code = await process.wait()
    if record is not None:
        record.exited(code)
    return code, output, timed_out


class _Output:
    """Collects output: all of it on disk when large, lines streamed as log events up to a cap."""

    def __init__(self, ctx: ToolContext) -> None:
        self._ctx = ctx
        self._chunks: list[bytes] = []
        self._size = 0
        self._log_lines = 0
        self._partial = b""

    async def add(self, data: bytes) -> None:
        self._chunks.append(data)
        self._size += len(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if self._log_lines < _MAX_LOG_LINES:
                await self._ctx.log(line.decode(errors="replace"))
            self._log_lines += 1

    def text(self) -> str:
        return b"".join(self._chunks).decode(errors="replace")

    def tail(self, chars: int = 4000) -> str:
        return self.text()[-chars:]


async def _collect(process: asyncio.subprocess.Process, output: _Output, limit: float) -> bool:
    """Read output until the process ends; True if the timeout passed first."""
    assert process.stdout is not None

    async def pump() -> None:
        assert process.stdout is not None
        while chunk := await process.stdout.read(65536):
            await output.add(chunk)

    try:
        await asyncio.wait_for(pump(), limit)
    except TimeoutError:
        return True
    return False


async def kill_tree(process: asyncio.subprocess.Process) -> None:
    """Stop a command and everything it started (see `cowork.processes.stop_tree`), then reap it.

    Also when the shell itself has already exited: what it started in its process group may still run (and hold
    its output open). Its group is stopped only while it has members and no process has the shell's pid: then the
    group number cannot have been reused by anyone else.
    """
    if process.returncode is not None and (psutil.pid_exists(process.pid) or not group_members(process.pid)):
        return
    # Not in the file tools' pool: a stop may wait seconds, and must not hold up reads and writes meanwhile.
    await asyncio.to_thread(stop_tree, process.pid, grace=_GRACE_SECONDS, pgid=process.pid)
    await process.wait()

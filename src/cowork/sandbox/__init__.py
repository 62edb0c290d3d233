"""Running shell commands confined: bubblewrap on Linux.

Inside the sandbox the whole file system is read-only except the workspace, the output directory, configured
extra folders and a private `/tmp`; protected workspace files (`.git/config`, `.git/hooks`, `.cowork/`, `.envrc`,
editor tasks… see `cowork.policy.PROTECTED_IN_WORKSPACE`) stay read-only, so a command cannot plant something
that runs later outside the sandbox (`ProtectedSnapshot` covers what binds cannot); credential locations and
Cowork's own home are masked (an empty folder or file in their place);
the network is off unless the session allows it. Processes get their own PID namespace and die with the
sandbox, so killing it leaves no survivors.

Also here: the allow-listed environment every command and stdio MCP server gets (`_environment`), and the run
records that let a restarted Cowork stop what a killed one left running (`_runs`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cowork.policy import PROTECTED_IN_WORKSPACE

from ._environment import MINIMAL_ENVIRONMENT, command_environment
from ._protected import ProtectedSnapshot, git_config_executes
from ._runs import CommandRun, EarlierRun, recover_runs, runs_directory

__all__ = [
    "MINIMAL_ENVIRONMENT",
    "SYSTEM_BWRAP_PATHS",
    "CommandRun",
    "EarlierRun",
    "ProtectedSnapshot",
    "SandboxSpec",
    "bwrap_command",
    "command_environment",
    "find_bwrap",
    "git_config_executes",
    "recover_runs",
    "runs_directory",
]

SYSTEM_BWRAP_PATHS: tuple[str, ...] = ("/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap")
"""Only these (or a configured path): a `bwrap` earlier on PATH could be anything."""


def find_bwrap(configured: str | None = None) -> str | None:
    """The bubblewrap binary to use, or None when there is none."""
    candidates = [configured] if configured else list(SYSTEM_BWRAP_PATHS)
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


@dataclass(frozen=True)
class SandboxSpec:
    """What a sandboxed command may touch."""

    workspace: Path
    writable: tuple[Path, ...] = ()
    """Writable in addition to the workspace (output directory, configured extras)."""
    hidden: tuple[Path, ...] = field(default_factory=tuple)
    """Paths masked out entirely (credential stores, Cowork's secrets)."""
    readonly: tuple[Path, ...] = ()
    """Shown read-only whatever the masks and writable binds above say (Cowork's toolbox, inside its masked home)."""
    network: bool = False


def _existing(paths: Iterable[Path]) -> list[Path]:
    return [p for p in paths if p.exists()]


def bwrap_command(bwrap: str, spec: SandboxSpec, argv: Sequence[str]) -> list[str]:
    """The full command line that runs `argv` inside the sandbox described by `spec`."""
    workspace = spec.workspace.resolve()
    args = [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
    ]  # fmt: skip
    # Writable binds come after the private /tmp, so a workspace under /tmp is still the real one.
    for path in _existing([workspace, *(p.resolve() for p in spec.writable)]):
        args += ["--bind", str(path), str(path)]
    for protected in _existing(workspace / name for name in PROTECTED_IN_WORKSPACE):
        if not protected.is_symlink():  # a link is read-only already: its target's place decides
            args += ["--ro-bind", str(protected), str(protected)]
    for hidden in _existing(p.resolve() for p in spec.hidden):
        if hidden == workspace or hidden in workspace.parents:
            continue  # a workspace inside a masked place stays usable (masking would hide it)
        if hidden.is_dir():
            args += ["--tmpfs", str(hidden)]
        else:
            args += ["--ro-bind", "/dev/null", str(hidden)]
    # Last, so they win: bubblewrap applies binds in order, and a later one over a masked place shows just that one.
    for shown in _existing(p.resolve() for p in spec.readonly):
        args += ["--ro-bind", str(shown), str(shown)]
    if not spec.network:
        args.append("--unshare-net")
    args += [
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--die-with-parent",
        # A new session: a sandboxed command cannot push keystrokes into the user's terminal (TIOCSTI).
        "--new-session",
        "--chdir", str(workspace),
    ]  # fmt: skip
    return [*args, "--", *argv]


def shell_argv(command: str) -> list[str]:
    """How a command string is run: by bash when there is one, else sh."""
    shell = shutil.which("bash") or "/bin/sh"
    return [shell, "-c", command]

"""The machine checks: Python, the state folder and its disk, the sandbox, git, ripgrep, a running server.

Each check returns `Check` values and changes nothing; what it looks at is passed in where a test needs to vary it
(versions, modes, free space), so the verdicts are tested without a machine in that state.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cowork.config import CoworkPaths, SandboxConfig, ToolboxConfig
from cowork.toolbox import LIBREOFFICE_MISSING, ToolboxStatus

__all__ = [
    "Check",
    "Status",
    "check_disk",
    "check_git",
    "check_python",
    "check_ripgrep",
    "check_sandbox",
    "check_server",
    "check_state_folder",
    "check_toolbox",
]

Status = Literal["ok", "warning", "problem"]

MIN_PYTHON = (3, 11)
LOW_DISK = 1 << 30
"""Under this much free space (1 GB) the state folder's disk gets a warning."""
FULL_DISK = 100 << 20
"""Under this much (100 MB) it is a problem: the database and tool outputs need room to grow."""
_OTHERS = 0o077
"""Mode bits that let anyone but the owner in."""


@dataclass(frozen=True)
class Check:
    """One verdict: what was checked, how it stands, what was found, and what to do when it is not ok."""

    check: str
    status: Status
    detail: str
    fix: str | None = None


def check_python(version: tuple[int, int, int], cowork_version: str) -> Check:
    shown = ".".join(map(str, version))
    if version[:2] < MIN_PYTHON:
        return Check(
            "python",
            "problem",
            f"Python {shown} is too old for Cowork {cowork_version} (3.11 or newer is needed).",
            "Install Python 3.11+ and reinstall Cowork with it (for example `uv tool install --python 3.12 cowork`).",
        )
    return Check("python", "ok", f"Python {shown}, Cowork {cowork_version}")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_state_folder(paths: CoworkPaths) -> list[Check]:
    """The state folder exists (or can be made), is private to the user, and so are its database and token."""
    home = paths.home
    if not home.exists():
        parent = _nearest_existing(home.parent)
        if parent.is_dir() and os.access(parent, os.W_OK | os.X_OK):
            return [Check("state folder", "ok", f"{home} does not exist yet; it is created (0700) at first start.")]
        return [
            Check(
                "state folder",
                "problem",
                f"{home} does not exist and cannot be created: {parent} is not a writable folder.",
                f"mkdir -p {home} && chmod 700 {home}, or set COWORK_HOME to a folder you own.",
            )
        ]
    if not home.is_dir():
        return [
            Check(
                "state folder",
                "problem",
                f"{home} is not a folder.",
                "Move the file away, or set COWORK_HOME to another folder.",
            )
        ]
    checks: list[Check] = []
    mode = _mode(home)
    if mode & _OTHERS:
        checks.append(
            Check(
                "state folder",
                "problem",
                f"{home} is readable by other users (mode {mode:04o}); it holds conversations and secrets.",
                f"chmod 700 {home} (the server also tightens it when it starts).",
            )
        )
    elif not os.access(home, os.W_OK | os.X_OK):
        checks.append(Check("state folder", "problem", f"{home} is not writable by you.", f"chown -R $USER {home}"))
    else:
        checks.append(Check("state folder", "ok", f"{home} (mode {mode:04o})"))
    files = [paths.database, *(paths.database.with_name(paths.database.name + s) for s in ("-wal", "-shm"))]
    loose = [(f, _mode(f)) for f in (*files, paths.token_file) if f.is_file() and _mode(f) & _OTHERS]
    if loose:
        shown = ", ".join(f"{f.name} ({m:04o})" for f, m in loose)
        checks.append(
            Check(
                "state files",
                "problem",
                f"readable by other users: {shown}",
                f"chmod 600 {' '.join(str(f) for f, _ in loose)} (the server also tightens them when it starts).",
            )
        )
    return checks


def check_disk(home: Path, free_bytes: int | None = None) -> Check:
    """Free space on the state folder's file system (measured unless `free_bytes` is given)."""
    if free_bytes is None:
        free_bytes = shutil.disk_usage(_nearest_existing(home)).free
    shown = f"{free_bytes / (1 << 30):.1f} GB" if free_bytes >= LOW_DISK else f"{free_bytes / (1 << 20):.0f} MB"
    if free_bytes < FULL_DISK:
        return Check(
            "disk space",
            "problem",
            f"only {shown} free for {home}: the database cannot grow.",
            "Free some space, or move the state folder (COWORK_HOME) to a larger disk.",
        )
    if free_bytes < LOW_DISK:
        return Check(
            "disk space",
            "warning",
            f"{shown} free for {home}.",
            "Free some space soon, or move the state folder (COWORK_HOME) to a larger disk.",
        )
    return Check("disk space", "ok", f"{shown} free")


def check_sandbox(settings: SandboxConfig, source: str | None, *, platform: str = sys.platform) -> Check:
    """Whether shell commands will run confined: enabled in the configuration, bubblewrap present and working."""
    from cowork.sandbox import SandboxSpec, bwrap_command, find_bwrap

    if not settings.enabled:
        where = f" (set in {source})" if source else ""
        return Check(
            "sandbox",
            "warning",
            f"disabled by configuration{where}: shell commands run unconfined.",
            "Set tools.sandbox.enabled = true, unless you mean it.",
        )
    if not platform.startswith("linux"):
        return Check(
            "sandbox",
            "warning",
            f"the sandbox needs Linux (bubblewrap); on {platform} shell commands run unconfined and most ask first.",
        )
    bwrap = find_bwrap(settings.bwrap_path)
    if bwrap is None:
        where = f" at {settings.bwrap_path}" if settings.bwrap_path else ""
        return Check(
            "sandbox",
            "problem",
            f"bubblewrap not installed{where}: shell commands run unconfined and every unclear one asks first.",
            "apt install bubblewrap (Fedora: dnf install bubblewrap)",
        )
    with tempfile.TemporaryDirectory(prefix="cowork-doctor-") as folder:
        argv = bwrap_command(bwrap, SandboxSpec(workspace=Path(folder)), ["true"])
        try:
            run = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
            failure = (run.stderr.strip() or f"exit code {run.returncode}") if run.returncode else None
        except (OSError, subprocess.TimeoutExpired) as exc:
            failure = str(exc)
    if failure:
        return Check(
            "sandbox",
            "problem",
            f"{bwrap} cannot create a sandbox here: {failure}",
            "Allow unprivileged user namespaces (Ubuntu 24.04+: an AppArmor profile for bwrap, or "
            "sysctl kernel.apparmor_restrict_unprivileged_userns=0).",
        )
    return Check("sandbox", "ok", f"bubblewrap at {bwrap}")


def check_git(checkpoints_enabled: bool, git: str | None = None) -> Check:
    """git keeps the checkpoints that `/undo` and `/rewind` take shell commands' changes back with."""
    git = git or shutil.which("git")
    if git is None:
        if not checkpoints_enabled:
            return Check("git", "ok", "not installed; not needed (checkpoints are off).")
        return Check(
            "git",
            "warning",
            "not installed: /undo and /rewind cannot take back what shell commands changed.",
            "Install git (apt install git, brew install git).",
        )
    try:
        version = subprocess.run([git, "--version"], capture_output=True, text=True, timeout=5, check=False)
        shown = version.stdout.strip().removeprefix("git version ") or git
    except (OSError, subprocess.TimeoutExpired):
        shown = git
    return Check("git", "ok", f"git {shown}")


def check_ripgrep(rg: str | None) -> Check:
    """ripgrep is the grep tool's engine (`cowork.tools` finds it next to the interpreter, else on PATH)."""
    if rg is None:
        return Check(
            "ripgrep",
            "warning",
            "not found: the grep tool is unavailable.",
            "Reinstall Cowork (its `ripgrep` dependency ships the binary), or install ripgrep (apt install ripgrep).",
        )
    return Check("ripgrep", "ok", rg)


def check_toolbox(settings: ToolboxConfig, status: ToolboxStatus) -> list[Check]:
    """The document toolbox shell commands use (`cowork.toolbox`), and LibreOffice beside it."""
    fix = "Run `cowork toolbox install`."
    if not settings.enabled:
        toolbox = Check("toolbox", "ok", "off (tools.toolbox.enabled = false): commands get no document libraries.")
    elif status.state == "ready":
        toolbox = Check("toolbox", "ok", f"{status.summary()[len('ready ') :]} at {status.root}")
    elif status.state == "installing":
        toolbox = Check("toolbox", "ok", f"being installed into {status.root}")
    elif status.state == "broken":
        toolbox = Check("toolbox", "warning", f"broken: {status.reason}", fix)
    else:
        when = "at the next server start" if settings.install == "background" else "only when asked"
        detail = f"not installed ({when}): commands cannot import openpyxl, python-docx, python-pptx…"
        toolbox = Check("toolbox", "warning", detail, fix)
    if status.libreoffice:
        office = Check("libreoffice", "ok", status.libreoffice)
    else:
        office = Check(
            "libreoffice", "warning", LIBREOFFICE_MISSING.removeprefix("LibreOffice (soffice) "), _OFFICE_FIX
        )
    return [toolbox, office]


_OFFICE_FIX = "Install LibreOffice (apt install libreoffice-calc libreoffice-writer, brew install --cask libreoffice)."


def check_server(paths: CoworkPaths) -> Check:
    """A server recorded in `server.json` that answers `/healthz`; not running is fine (clients start one)."""
    from cowork.clients.connection import running_server

    record = paths.server_file
    if not record.exists():
        return Check("server", "ok", "not running (clients start one when needed)")
    server = running_server(paths.home)
    if server is not None:
        return Check("server", "ok", f"running at {server.url} (pid {server.pid}, since {server.since()})")
    try:
        pid = json.loads(record.read_text(encoding="utf-8")).get("pid", "?")
    except (OSError, ValueError, AttributeError):
        pid = "?"
    # A server that was stopped or died leaves its record; clients see that it does not answer and start another.
    return Check("server", "ok", f"not running (the last one, pid {pid}, left {record.name}; clients start one)")

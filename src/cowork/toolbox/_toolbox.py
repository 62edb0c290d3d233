"""The toolbox on disk: its state, and building it from the lock, idempotently, atomically and one builder at a time.

Layout under the root (`<COWORK_HOME>/toolbox`, 0700):

- `env-<hash>/`: the environment built from the lock whose sha256 starts with `<hash>`; `cowork-toolbox.json` in it
  is written last, so an environment without it (or with a file of it missing) is broken, never half-used;
- `.build-<hash>-<pid>/`: one being built, renamed to `env-<hash>` once its libraries import;
- `.lock`: held (`flock`) by whoever builds, so two servers (or a server and `cowork toolbox install`) take turns,
  and a status read meanwhile says `installing`.

A new lock (a Cowork upgrade) names a new `env-<hash>`; the next build removes the others.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Literal

from cowork.config import private_dir

__all__ = [
    "DEFAULT_IMPORTS",
    "LIBREOFFICE_MISSING",
    "REQUIREMENTS",
    "Progress",
    "Toolbox",
    "ToolboxCancelled",
    "ToolboxError",
    "ToolboxState",
    "ToolboxStatus",
    "find_libreoffice",
    "find_uv",
]

REQUIREMENTS = Path(__file__).with_name("requirements.txt")
"""The lock shipped with Cowork: exact versions with their hashes (regenerate it from `requirements.in`)."""

DEFAULT_IMPORTS: tuple[str, ...] = ("openpyxl", "docx", "pptx", "pypdf", "pdfplumber", "reportlab", "matplotlib", "PIL")
"""What must import for a built toolbox to count as ready."""

SHOWN_DISTRIBUTIONS: tuple[str, ...] = (
    "openpyxl",
    "python-docx",
    "python-pptx",
    "pypdf",
    "pdfplumber",
    "reportlab",
    "matplotlib",
    "pillow",
)
"""The versions status lines name (the lock holds their dependencies too)."""

LIBREOFFICE_MISSING = (
    "LibreOffice (soffice) not found: spreadsheets' formulas won't be recalculated; documents can't be converted "
    "to PDF."
)

MARKER = "cowork-toolbox.json"
_STEPS = 4
_CANCEL_POLL_SECONDS = 0.2

# Run by the toolbox's own interpreter: imports each module, then reports the installed versions and one file per
# module (whose absence later means the toolbox was damaged). A string, so Cowork itself never imports them.
_CHECK = """
import importlib, importlib.metadata as md, json, os, re, sys
root = os.path.realpath(sys.prefix)
files = []
for name in sys.argv[1:]:
    module = importlib.import_module(name)
    files.append(os.path.relpath(os.path.realpath(module.__file__), root))
versions = {re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower(): d.version for d in md.distributions() if d.metadata["Name"]}
print(json.dumps({"files": files, "versions": versions, "python": sys.version.split()[0]}))
"""

ToolboxState = Literal["ready", "missing", "installing", "broken"]


class ToolboxError(Exception):
    """Building the toolbox failed; the message says which step and why."""


class ToolboxCancelled(ToolboxError):
    """The build was stopped (the server is shutting down); nothing was put in place."""


@dataclass(frozen=True)
class Progress:
    """One step of a build, for a progress display."""

    step: int
    steps: int
    message: str


@dataclass(frozen=True)
class ToolboxStatus:
    """How the toolbox stands, read from disk."""

    state: ToolboxState
    root: Path
    python: Path | None = None
    """The interpreter commands get (`COWORK_PYTHON`), when ready."""
    versions: Mapping[str, str] = field(default_factory=dict)
    """Every installed distribution's version (normalised names: `python-docx`), when ready."""
    size_bytes: int = 0
    python_version: str = ""
    reason: str | None = None
    """Why it is broken or missing."""
    libreoffice: str | None = None
    """`soffice` (or `libreoffice`) on PATH, when the machine has it."""

    def summary(self) -> str:
        """One line: the state, the main libraries' versions and the size."""
        if self.state != "ready":
            return f"{self.state}: {self.reason}" if self.reason else self.state
        shown = ", ".join(f"{name} {self.versions[name]}" for name in SHOWN_DISTRIBUTIONS if name in self.versions)
        return f"ready (Python {self.python_version}, {self.size_bytes / 1e6:.0f} MB): {shown}"


def find_uv() -> str | None:
    """The `uv` that builds the toolbox: the one next to Cowork (its checkout's `.tools/bin`, or beside its
    interpreter), else the one on PATH; None means `python -m venv` and pip."""
    checkout = Path(__file__).resolve().parents[3] / ".tools" / "bin" / "uv"
    beside = Path(sys.executable).parent / "uv"
    for candidate in (checkout, beside):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("uv")


def find_libreoffice() -> str | None:
    """LibreOffice's command-line program on PATH, or None."""
    return shutil.which("soffice") or shutil.which("libreoffice")


_BY_HOME: dict[Path, Toolbox] = {}


class Toolbox:
    """Cowork's document toolbox under `root`: a Python environment with pinned document and chart libraries."""

    def __init__(
        self,
        root: Path,
        *,
        requirements: Path = REQUIREMENTS,
        imports: tuple[str, ...] = DEFAULT_IMPORTS,
        python: str | None = None,
        uv: str | None = None,
    ) -> None:
        self.root = root
        self.requirements = requirements
        self.imports = imports
        self.python = python or sys.executable
        """The interpreter the environment is based on: the one Cowork runs on, by default."""
        self.uv = uv
        """The `uv` to build with; None finds one (`find_uv`)."""
        self.lock_hash = _lock_hash(requirements)

    @classmethod
    def of_home(cls, home: Path) -> Toolbox:
        """The toolbox a Cowork home keeps (`<home>/toolbox`): one per home and process, so the lock file is read
        and hashed once, not at every shell command."""
        toolbox = _BY_HOME.get(home)
        if toolbox is None:
            toolbox = _BY_HOME[home] = cls(home / "toolbox")
        return toolbox

    @property
    def env(self) -> Path:
        """Where the environment built from this lock lives."""
        return self.root / f"env-{self.lock_hash[:16]}"

    @property
    def bin_dir(self) -> Path:
        return self.env / "bin"

    @property
    def interpreter(self) -> Path:
        return self.bin_dir / "python3"

    def active(self) -> Path | None:
        """The `bin/` commands get on PATH, or None: a quick check (two stats) for every command."""
        if (self.env / MARKER).is_file() and self.interpreter.exists():
            return self.bin_dir
        return None

    def environment(self, env: Mapping[str, str], bin_dir: Path | None = None) -> dict[str, str]:
        """`env` with the toolbox first on PATH and `COWORK_PYTHON` naming its interpreter (unchanged when the
        toolbox is not ready). `bin_dir`: what `active()` just returned, so it is not checked twice."""
        bin_dir = bin_dir or self.active()
        if bin_dir is None:
            return dict(env)
        path = env.get("PATH", os.defpath)
        return {**env, "PATH": f"{bin_dir}{os.pathsep}{path}", "COWORK_PYTHON": str(self.interpreter)}

    def status(self) -> ToolboxStatus:
        """The toolbox's state now: cheap (a lock probe and a few stats), never builds anything."""
        libreoffice = find_libreoffice()
        if self._building():
            return ToolboxStatus("installing", self.root, reason="being installed", libreoffice=libreoffice)
        return self._read_state(libreoffice)

    def _read_state(self, libreoffice: str | None = None) -> ToolboxStatus:
        if not self.env.is_dir():
            older = any(self._others())
            reason = "built for another version of Cowork; replaced at the next install" if older else "not installed"
            return ToolboxStatus("missing", self.root, reason=reason, libreoffice=libreoffice)
        try:
            marker = json.loads((self.env / MARKER).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return self._broken("its install did not finish (no record of it)", libreoffice)
        if marker.get("requirements") != self.lock_hash:
            return self._broken("its record names another lock", libreoffice)
        missing = [f for f in ["bin/python3", *marker.get("files", [])] if not (self.env / f).exists()]
        if missing:
            return self._broken(f"{missing[0]} is missing", libreoffice)
        return ToolboxStatus(
            "ready",
            self.root,
            python=self.interpreter,
            versions=marker.get("versions", {}),
            size_bytes=int(marker.get("size", 0)),
            python_version=str(marker.get("python", "")),
            libreoffice=libreoffice,
        )

    def _broken(self, reason: str, libreoffice: str | None) -> ToolboxStatus:
        return ToolboxStatus(
            "broken", self.root, reason=f"{reason}; run `cowork toolbox install`", libreoffice=libreoffice
        )

    def ensure(
        self, progress: Callable[[Progress], None] | None = None, cancel: threading.Event | None = None
    ) -> ToolboxStatus:
        """Build the toolbox unless it is ready; waits for another builder first. Blocking: call it off the loop.

        Raises:
            ToolboxError: a step failed (the message says which, with the tool's last output lines).
            ToolboxCancelled: `cancel` was set meanwhile.
        """
        report = progress or (lambda _p: None)
        cancel = cancel or threading.Event()
        with self._lock():
            if self._read_state().state != "ready":
                self._build(report, cancel)
            self._remove_others()
            return self._read_state(find_libreoffice())

    def remove(self) -> None:
        """Delete every environment (waits for a build to end first)."""
        if not self.root.exists():
            return
        with self._lock():
            for path in self.root.iterdir():
                if path.name != ".lock":
                    _remove(path)

    def _build(self, report: Callable[[Progress], None], cancel: threading.Event) -> None:
        build = self.root / f".build-{self.lock_hash[:16]}-{os.getpid()}"
        for leftover in self.root.glob(".build-*"):
            _remove(leftover)  # we hold the lock: nobody else is building
        try:
            uv = self.uv or find_uv()
            count = sum(1 for line in self.requirements.read_text(encoding="utf-8").splitlines() if "==" in line)
            report(Progress(1, _STEPS, f"Creating the environment (Python from {self.python})"))
            if uv is not None:
                self._run([uv, "venv", "--quiet", "--relocatable", "--python", self.python, str(build)], cancel)
                report(Progress(2, _STEPS, f"Installing {count} pinned packages with uv"))
                install = [uv, "pip", "install", "--compile-bytecode", "--require-hashes"]
                self._run([*install, "-r", str(self.requirements), "--python", str(build / "bin" / "python")], cancel)
            else:
                self._run([self.python, "-m", "venv", str(build)], cancel)
                report(Progress(2, _STEPS, f"Installing {count} pinned packages with pip (uv was not found)"))
                pip = [str(build / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check"]
                self._run([*pip, "--quiet", "--require-hashes", "-r", str(self.requirements)], cancel)
            report(Progress(3, _STEPS, "Checking that the libraries load"))
            checked = json.loads(self._run([str(build / "bin" / "python"), "-I", "-c", _CHECK, *self.imports], cancel))
            marker = {
                "requirements": self.lock_hash,
                "python": checked["python"],
                "versions": checked["versions"],
                "files": checked["files"],
                "size": _size(build),
                "built": datetime.now(UTC).isoformat(),
            }
            (build / MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
            report(Progress(4, _STEPS, "Putting it in place"))
            if self.env.exists():
                aside = self.root / f".old-{self.env.name}-{os.getpid()}"
                os.rename(self.env, aside)  # a broken one: out of the way first, so the rename below is atomic
            os.rename(build, self.env)
        except BaseException:
            _remove(build)
            raise

    def _run(self, argv: list[str], cancel: threading.Event) -> str:
        """Run one build step in the toolbox's folder (so no project's uv config applies); its standard output."""
        if cancel.is_set():
            raise ToolboxCancelled("the toolbox install was stopped")
        try:
            process = subprocess.Popen(
                argv, cwd=self.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True
            )
        except OSError as exc:
            raise ToolboxError(f"could not run {argv[0]}: {exc.strerror}") from None
        with process:
            while True:
                try:
                    out, err = process.communicate(timeout=_CANCEL_POLL_SECONDS)
                    break
                except subprocess.TimeoutExpired:
                    if cancel.is_set():
                        process.kill()
                        process.communicate()
                        raise ToolboxCancelled("the toolbox install was stopped") from None
        if process.returncode != 0:
            tail = "\n".join((err or out).strip().splitlines()[-8:])
            raise ToolboxError(f"{Path(argv[0]).name} {argv[1]} failed (exit {process.returncode}): {tail}")
        return out

    def _others(self) -> Iterator[Path]:
        if not self.root.is_dir():
            return
        for path in self.root.iterdir():
            if path != self.env and (path.name.startswith(("env-", ".old-"))):
                yield path

    def _remove_others(self) -> None:
        for path in list(self._others()):
            _remove(path)

    @contextlib.contextmanager
    def _lock(self) -> Iterator[IO[bytes]]:
        private_dir(self.root)
        with open(self.root / ".lock", "ab") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield handle
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _building(self) -> bool:
        """Whether someone (this process or another) holds the build lock now."""
        try:
            handle = open(self.root / ".lock", "rb")
        except OSError:
            return False
        with handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle, fcntl.LOCK_UN)
            return False


@functools.lru_cache(maxsize=8)
def _lock_hash(requirements: Path) -> str:
    # Read once per process: the `bash` tool asks for every command, and a lock changes only with Cowork.
    return hashlib.sha256(requirements.read_bytes()).hexdigest()


def _size(root: Path) -> int:
    total = 0
    for folder, _dirs, names in os.walk(root):
        for name in names:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()

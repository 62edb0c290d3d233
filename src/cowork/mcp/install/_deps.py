"""Checking the programs a server needs: on PATH? recent enough? If not, how to install them here."""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import sys
from dataclasses import dataclass, field

from cowork.protocol import DependencyInfo

from ._manifest import DependencySpec

__all__ = ["KNOWN_PROGRAMS", "Program", "check_dependencies", "check_dependency", "platform_key", "satisfies"]

_VERSION = re.compile(r"(\d+(?:\.\d+)*)")
_REQUIREMENT = re.compile(r"^\s*(>=|<=|==|>|<|=)?\s*v?(\d+(?:\.\d+)*)\s*$")
VERSION_TIMEOUT = 10.0


@dataclass(frozen=True)
class Program:
    """How to find a program, ask its version, and install it on each platform."""

    executables: tuple[str, ...]
    install: dict[str, str] = field(default_factory=dict)
    version_args: tuple[str, ...] = ("--version",)


_NODE = {
    "linux": "Install Node.js 18 or newer: `sudo apt install nodejs npm` (Debian/Ubuntu) or https://nodejs.org",
    "macos": "Install Node.js: `brew install node` or https://nodejs.org",
    "windows": "Install Node.js: `winget install OpenJS.NodeJS.LTS` or https://nodejs.org",
}
_UV = {
    "linux": "Install uv: `curl -LsSf https://astral.sh/uv/install.sh | sh`",
    "macos": "Install uv: `brew install uv` or `curl -LsSf https://astral.sh/uv/install.sh | sh`",
    "windows": 'Install uv: `powershell -c "irm https://astral.sh/uv/install.ps1 | iex"`',
}
_PYTHON = {
    "linux": "Install Python 3: `sudo apt install python3` (Debian/Ubuntu)",
    "macos": "Install Python 3: `brew install python` or https://www.python.org",
    "windows": "Install Python 3: `winget install Python.Python.3.12` or https://www.python.org",
}
_DOCKER = {
    "linux": "Install Docker Engine: `sudo apt install docker.io` or https://docs.docker.com/engine/install/",
    "macos": "Install Docker Desktop: `brew install --cask docker` or https://www.docker.com/products/docker-desktop",
    "windows": "Install Docker Desktop: `winget install Docker.DockerDesktop`",
}

KNOWN_PROGRAMS: dict[str, Program] = {
    "node": Program(("node",), _NODE),
    "npx": Program(("npx",), _NODE),
    "npm": Program(("npm",), _NODE),
    "uv": Program(("uv",), _UV),
    "uvx": Program(("uvx",), _UV),
    "python": Program(("python3", "python"), _PYTHON),
    "python3": Program(("python3",), _PYTHON),
    "docker": Program(("docker",), _DOCKER),
}
"""Programs with built-in install instructions; any other name is looked up on PATH as is."""


def platform_key(platform: str | None = None) -> str:
    """`linux`, `macos` or `windows` for `sys.platform` (or the given value)."""
    value = platform or sys.platform
    if value.startswith("win"):
        return "windows"
    if value == "darwin":
        return "macos"
    return "linux"


def _parse(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def satisfies(version: str, requirement: str) -> bool:
    """Whether `version` (e.g. `20.11.1`) meets `requirement` (`>=18`, `>3.1`, `<=2`, `=1.2`; bare means `>=`)."""
    match = _REQUIREMENT.match(requirement)
    if match is None:
        raise ValueError(f"not a version requirement: {requirement!r}")
    op, wanted = match.group(1) or ">=", _parse(match.group(2))
    have = _parse(version)
    width = max(len(have), len(wanted))
    have, wanted = have + (0,) * (width - len(have)), wanted + (0,) * (width - len(wanted))
    if op == ">=":
        return have >= wanted
    if op == ">":
        return have > wanted
    if op == "<=":
        return have <= wanted
    if op == "<":
        return have < wanted
    return have == wanted


async def _version_of(path: str, args: tuple[str, ...]) -> str | None:
    try:
        process = await asyncio.create_subprocess_exec(
            path,
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
    except OSError:
        return None
    try:
        output, _ = await asyncio.wait_for(process.communicate(), VERSION_TIMEOUT)
    except TimeoutError:
        return None
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    match = _VERSION.search(output.decode(errors="replace"))
    return match.group(1) if match else None


async def check_dependency(spec: DependencySpec, *, platform: str | None = None) -> DependencyInfo:
    """Find the program on PATH and, when a version is required, ask it for its version."""
    program = KNOWN_PROGRAMS.get(spec.name, Program((spec.name,)))
    where = platform_key(platform)
    hint = spec.install.get(where) or program.install.get(where) or f"Install `{spec.name}` and put it on PATH."  # type: ignore[call-overload]
    path = next((p for p in map(shutil.which, program.executables) if p is not None), None)
    if path is None:
        return DependencyInfo(
            name=spec.name, required=spec.version, found=False, satisfied=False, install_hint=_hint(spec, hint)
        )
    version = await _version_of(path, program.version_args)
    satisfied = True
    if spec.version is not None:
        satisfied = version is not None and satisfies(version, spec.version)
    return DependencyInfo(
        name=spec.name,
        required=spec.version,
        found=True,
        version=version,
        satisfied=satisfied,
        install_hint=None if satisfied else _hint(spec, hint, version),
    )


def _hint(spec: DependencySpec, hint: str, version: str | None = None) -> str:
    if spec.version is None:
        return hint
    have = f" (found {version})" if version else ""
    return f"{spec.name} {spec.version.strip()} is required{have}. {hint}"


async def check_dependencies(specs: list[DependencySpec], *, platform: str | None = None) -> list[DependencyInfo]:
    return list(await asyncio.gather(*(check_dependency(s, platform=platform) for s in specs)))

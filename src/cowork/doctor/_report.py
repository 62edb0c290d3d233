"""Running every check in order and showing the verdicts: a table on a terminal, plain lines otherwise, or JSON."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TextIO

from cowork.config import CoworkPaths, resolve_home
from cowork.toolbox import Toolbox

from ._checks import (
    Check,
    check_disk,
    check_git,
    check_python,
    check_ripgrep,
    check_sandbox,
    check_server,
    check_state_folder,
    check_toolbox,
)
from ._setup import check_config, check_mcp, check_providers, check_tracing

__all__ = ["exit_code", "main", "render_text", "run_checks"]

MARKS = {"ok": "✓", "warning": "!", "problem": "✗"}
_STYLES = {"ok": "green", "warning": "yellow", "problem": "bold red"}


def _guarded(name: str, run: Callable[[], list[Check]]) -> list[Check]:
    """One check that fails unexpectedly is reported as a problem; the others still run."""
    try:
        return run()
    except Exception as exc:
        return [Check(name, "problem", f"the check itself failed: {type(exc).__name__}: {exc}")]


async def run_checks(workspace: Path, env: Mapping[str, str], *, network: bool = False) -> list[Check]:
    """Every check, in the order a person would fix them."""
    import cowork
    from cowork.tools._grep import find_rg  # its own module: the tools package loads it lazily

    paths = CoworkPaths(resolve_home(env))
    version = sys.version_info
    checks = [check_python((version.major, version.minor, version.micro), cowork.__version__)]
    checks += _guarded("state folder", lambda: check_state_folder(paths))
    checks += _guarded("disk space", lambda: [check_disk(paths.home)])
    loaded, config_checks = check_config(workspace, env)
    checks += config_checks
    if loaded is None:
        return [*checks, *_without_config(paths)]
    sandbox, source = loaded.config.tools.sandbox, loaded.sources.get("tools.sandbox.enabled")
    checks += _guarded("sandbox", lambda: [check_sandbox(sandbox, source)])
    checks += _guarded("git", lambda: [check_git(loaded.config.checkpoints.enabled)])
    checks += _guarded("ripgrep", lambda: [check_ripgrep(find_rg())])
    toolbox = loaded.config.tools.toolbox
    checks += _guarded("toolbox", lambda: check_toolbox(toolbox, Toolbox.of_home(paths.home).status()))
    try:
        checks += await check_providers(loaded, env, network=network)
    except Exception as exc:
        checks.append(Check("providers", "problem", f"the check itself failed: {type(exc).__name__}: {exc}"))
    checks += _guarded("mcp", lambda: check_mcp(loaded))
    try:
        checks += await check_tracing(loaded, network=network)
    except Exception as exc:
        checks.append(Check("tracing", "problem", f"the check itself failed: {type(exc).__name__}: {exc}"))
    checks += _guarded("server", lambda: [check_server(paths)])
    return checks


def _without_config(paths: CoworkPaths) -> list[Check]:
    """The checks that need no configuration; the others say why they were skipped."""
    from cowork.tools._grep import find_rg  # its own module: the tools package loads it lazily

    skipped = "not checked: the configuration did not load (see config above)."
    return [
        Check("sandbox", "warning", skipped),
        *_guarded("git", lambda: [check_git(True)]),
        *_guarded("ripgrep", lambda: [check_ripgrep(find_rg())]),
        Check("providers", "warning", skipped),
        Check("mcp", "warning", skipped),
        Check("tracing", "warning", skipped),
        *_guarded("server", lambda: [check_server(paths)]),
    ]


def exit_code(checks: Sequence[Check]) -> int:
    """0 when nothing is a problem (warnings allowed), else 1."""
    return 1 if any(c.status == "problem" for c in checks) else 0


def summary(checks: Sequence[Check]) -> str:
    counts = {status: sum(c.status == status for c in checks) for status in MARKS}
    verdict = "problems found" if counts["problem"] else "no problems"
    return (
        f"{verdict}: {counts['ok']} ok, {counts['warning']} warning{'s' * (counts['warning'] != 1)}, "
        f"{counts['problem']} problem{'s' * (counts['problem'] != 1)}"
    )


def render_text(checks: Sequence[Check]) -> str:
    """Plain lines for pipes and logs: a mark, the check, what was found, and the fix under it."""
    width = max((len(c.check) for c in checks), default=0)
    lines = []
    for c in checks:
        lines.append(f"{MARKS[c.status]} {c.check.ljust(width)}  {c.detail}")
        if c.fix and c.status != "ok":
            lines.append(f"  {' ' * width}  fix: {c.fix}")
    lines.append(summary(checks))
    return "\n".join(lines) + "\n"


def _render_rich(checks: Sequence[Check], out: TextIO) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True, style="bold")
    table.add_column()
    for c in checks:
        detail = Text(c.detail)
        if c.fix and c.status != "ok":
            detail.append(f"\nfix: {c.fix}", style="cyan")
        table.add_row(Text(MARKS[c.status], style=_STYLES[c.status]), c.check, detail)
    console = Console(file=out)
    console.print(table)
    console.print(Text(summary(checks), style=_STYLES["problem" if exit_code(checks) else "ok"]))


def main(*, workspace: Path | None = None, network: bool = False, as_json: bool = False) -> int:
    """`cowork doctor`: print the checks; 0 when there is no problem, 1 when there is one."""
    folder = (workspace or Path.cwd()).resolve()
    checks = asyncio.run(run_checks(folder, dict(os.environ), network=network))
    if as_json:
        print(json.dumps([asdict(c) for c in checks], indent=2, ensure_ascii=False))
    elif sys.stdout.isatty():
        _render_rich(checks, sys.stdout)
    else:
        sys.stdout.write(render_text(checks))
    return exit_code(checks)

"""`cowork toolbox [status|install|remove]`: the toolbox without a server, with a progress display."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from cowork.config import resolve_home

from ._toolbox import LIBREOFFICE_MISSING, Progress, Toolbox, ToolboxError, ToolboxStatus

__all__ = ["main"]


def main(action: str, *, as_json: bool = False, home: Path | None = None) -> int:
    """Run one `cowork toolbox` action; the exit code."""
    toolbox = Toolbox.of_home(home or resolve_home())
    if action == "remove":
        toolbox.remove()
        print(f"Removed the toolbox from {toolbox.root}.")
        return 0
    if action == "install":
        started = time.monotonic()
        try:
            with _progress() as report:
                status = toolbox.ensure(report)
        except ToolboxError as exc:
            print(f"cowork: the toolbox install failed: {exc}", file=sys.stderr)
            return 1
        print(f"{status.summary()} (took {time.monotonic() - started:.1f} s)")
        _print_libreoffice(status)
        return 0
    status = toolbox.status()
    if as_json:
        print(json.dumps(_as_dict(status), indent=2))
    else:
        print(f"toolbox: {status.summary()}")
        print(f"  at {toolbox.env}")
        if status.state == "missing":
            print("  install it with `cowork toolbox install` (a server also installs it in the background)")
        _print_libreoffice(status)
    return 0 if status.state == "ready" else 1


def _print_libreoffice(status: ToolboxStatus) -> None:
    print(f"LibreOffice: {status.libreoffice}" if status.libreoffice else LIBREOFFICE_MISSING)


def _as_dict(status: ToolboxStatus) -> dict[str, object]:
    return {
        "state": status.state,
        "root": str(status.root),
        "python": str(status.python) if status.python else None,
        "pythonVersion": status.python_version or None,
        "versions": dict(status.versions),
        "sizeBytes": status.size_bytes,
        "reason": status.reason,
        "libreoffice": status.libreoffice,
    }


@contextmanager
def _progress() -> Iterator[Callable[[Progress], None]]:
    """A rich progress bar on a terminal; plain lines otherwise (logs, pipes, CI)."""
    if not sys.stdout.isatty():

        def plain(step: Progress) -> None:
            print(f"[{step.step}/{step.steps}] {step.message}", flush=True)

        yield plain
        return
    from rich.progress import BarColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    with Bar(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn()) as bar:
        task = bar.add_task("Installing the document toolbox", total=None)

        def fancy(step: Progress) -> None:
            bar.update(task, description=step.message, completed=step.step - 1, total=step.steps)

        yield fancy
        bar.update(task, completed=bar.tasks[0].total or 0)

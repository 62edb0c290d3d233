"""`cowork logs`: the server log's last lines, filtered, readable or as JSON, and `-f` to keep following it.

It runs without a server and reads the file the server writes (`COWORK_HOME/logs/server.log`), so it lives here
rather than in `cowork.clients` (which may import only the protocol). rich is imported only to colour a terminal.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from cowork.config import CoworkPaths, resolve_home

from ._entries import LEVELS, LogEntry, LogFilter, parse_line, parse_since
from ._files import log_files
from ._tail import Tail, read_lines

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

__all__ = ["main", "render_line"]

POLL_SECONDS = 0.2
"""How often `--follow` looks for new lines while there are none."""

_LEVEL_STYLES = {"DEBUG": "dim", "INFO": "green", "WARNING": "yellow", "ERROR": "red", "CRITICAL": "bold red"}


def _clock(entry: LogEntry) -> str:
    """`HH:MM:SS.mmm` in local time (the file keeps UTC)."""
    if entry.ts is None:
        return "--:--:--.---"
    local = entry.ts.astimezone()
    return f"{local:%H:%M:%S}.{local.microsecond // 1000:03d}"


def _tail_text(entry: LogEntry) -> str:
    """What follows the message: the extras as ` key=value`, then the traceback on the lines below."""
    assert entry.fields is not None
    extras = "".join(f" {key}={_show(value)}" for key, value in entry.extras.items())
    below = "".join(f"\n{entry.fields[key]}" for key in ("exc", "stack") if isinstance(entry.fields.get(key), str))
    return extras + below


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def render_line(entry: LogEntry) -> str:
    """`HH:MM:SS.mmm LEVEL logger: message`, or a plain-text line as it was written."""
    if entry.fields is None:
        return entry.raw
    return f"{_clock(entry)} {(entry.level or '?'):<7} {entry.logger}: {entry.msg}{_tail_text(entry)}"


def _render_rich(entry: LogEntry) -> Text:
    from rich.text import Text

    if entry.fields is None:
        return Text(entry.raw)
    level = entry.level or "?"
    text = Text()  # styled piece by piece: a style given to Text() itself would cover the whole line
    text.append(_clock(entry), style="dim")
    text.append(" ")
    text.append(f"{level:<7}", style=_LEVEL_STYLES.get(level, ""))
    text.append(f" {entry.logger}: ", style="cyan")
    text.append(entry.msg, style="bold" if level in ("ERROR", "CRITICAL") else "")
    text.append(_tail_text(entry), style="dim")
    return text


def _as_json(entry: LogEntry) -> str:
    """The line as written; a plain-text one wrapped as `{"raw": …}`, so every line of `--json` parses."""
    return entry.raw if entry.fields is not None else json.dumps({"raw": entry.raw}, ensure_ascii=False)


@dataclass
class _Printer:
    """Writes entries the chosen way and flushes each batch (a pipe would otherwise hold `-f`'s lines back)."""

    as_json: bool
    out: TextIO
    console: Console | None = None

    def print(self, entries: Iterable[LogEntry]) -> None:
        for entry in entries:
            if self.as_json:
                self.out.write(_as_json(entry) + "\n")
            elif self.console is not None:
                self.console.print(_render_rich(entry))
            else:
                self.out.write(render_line(entry) + "\n")
        self.out.flush()


def _printer(as_json: bool, out: TextIO) -> _Printer:
    if as_json or not out.isatty():
        return _Printer(as_json, out)
    from rich.console import Console

    return _Printer(as_json, out, Console(file=out, highlight=False, soft_wrap=True, markup=False))


class _Reader:
    """Lines into entries, each parsed knowing the one before (an old traceback belongs to the record above)."""

    def __init__(self, keep: LogFilter) -> None:
        self.keep = keep
        self.previous: LogEntry | None = None

    def entries(self, lines: Iterable[str]) -> Iterator[LogEntry]:
        for raw in lines:
            if not raw:
                continue
            self.previous = parse_line(raw, self.previous)
            if self.keep.accepts(self.previous):
                yield self.previous


def _missing(path: Path) -> int:
    print(
        f"cowork logs: no server log at {path}; the Cowork server writes it when it runs "
        "(`cowork serve`, or any client that starts one).",
        file=sys.stderr,
    )
    return 1


def _show_history(paths: list[Path], tail: Tail | None, reader: _Reader, count: int) -> list[LogEntry]:
    """The last `count` kept entries of the rotated files in `paths` (all but the last) and of the current file
    (through `tail` when following, so following goes on exactly where this stopped)."""
    last: deque[LogEntry] = deque(maxlen=count)
    for path in paths[:-1]:
        try:
            last.extend(reader.entries(read_lines(path)))
        except FileNotFoundError:
            continue  # rotated away while we read
    if tail is not None:
        last.extend(reader.entries(tail.lines()))
    elif paths[-1].exists():
        last.extend(reader.entries(read_lines(paths[-1])))
    return list(last)


def _follow(tail: Tail, reader: _Reader, printer: _Printer) -> None:
    while True:
        batch = list(reader.entries(tail.lines()))
        if batch:
            printer.print(batch)
        else:
            time.sleep(POLL_SECONDS)


def _bad_arguments(lines: int, level: str | None) -> str | None:
    """What is wrong with the arguments argparse does not check (or a caller from Python passed)."""
    if lines < 0:
        return f"-n {lines}: expected 0 or more lines"
    if level is not None and level.upper() not in LEVELS:
        return f"--level {level}: expected one of {', '.join(name.lower() for name in LEVELS)}"
    return None


def main(
    *,
    lines: int = 50,
    level: str | None = None,
    grep: str | None = None,
    since: str | None = None,
    follow: bool = False,
    as_json: bool = False,
    rotated: bool = False,
    home: Path | None = None,
) -> int:
    """`cowork logs`: 0 when shown (or followed until Ctrl-C), 1 when there is no log, 2 for a bad argument."""
    problem = _bad_arguments(lines, level)
    if problem:
        print(f"cowork logs: {problem}", file=sys.stderr)
        return 2
    try:
        keep = LogFilter(
            min_level=level.upper() if level else None,
            grep=grep or None,
            since=parse_since(since, datetime.now().astimezone()) if since else None,
        )
    except ValueError as exc:
        print(f"cowork logs: {exc}", file=sys.stderr)
        return 2
    path = CoworkPaths(home or resolve_home()).server_log
    paths = log_files(path, rotated=rotated)
    if not any(p.exists() for p in paths):
        return _missing(path)
    printer = _printer(as_json, sys.stdout)
    reader = _Reader(keep)
    try:
        if not follow:
            printer.print(_show_history(paths, None, reader, lines))
            return 0
        if threading.current_thread() is threading.main_thread():
            # Ctrl-C is how -f ends, even when started with SIGINT ignored (as a shell's background job is).
            signal.signal(signal.SIGINT, signal.default_int_handler)
        with Tail(path) as tail:
            printer.print(_show_history(paths, tail, reader, lines))
            _follow(tail, reader, printer)
    except KeyboardInterrupt:
        return 0 if follow else 130  # Ctrl-C is how -f ends; it interrupts anything else
    except BrokenPipeError:
        # The reader went away (`cowork logs | head`): nothing more to say, and nothing to say it to.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0

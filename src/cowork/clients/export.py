"""`/export` and `/import` in the terminal clients: what the arguments ask for, and saving what the server wrote out.

The server writes the session out (`session/export`); the client saves it on this machine, in the folder the client
was started in unless a path is given, and never over an existing file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from cowork.protocol import SessionExportResult

__all__ = ["EXPORT_USAGE", "IMPORT_USAGE", "ExportFormat", "import_path", "parse_export", "save_export"]

ExportFormat = Literal["markdown", "json"]
EXPORT_USAGE = "Usage: /export [md|json] [FILE]  (default: Markdown, named after the session, in this folder)"
IMPORT_USAGE = "Usage: /import FILE  (a JSON export: /export json)"
_FORMATS: dict[str, ExportFormat] = {"md": "markdown", "markdown": "markdown", "json": "json"}


def parse_export(arg: str) -> tuple[ExportFormat, Path | None]:
    """`md`, `json`, a file name, or a format then a file name (the rest of the line, spaces and all). Without a
    format, a file ending in `.json` means JSON, anything else Markdown."""
    words = arg.split(maxsplit=1)
    fmt: ExportFormat | None = None
    if words and words[0].lower() in _FORMATS:
        fmt = _FORMATS[words.pop(0).lower()]
    path = Path(words[0].strip()).expanduser() if words else None
    if fmt is None:
        fmt = "json" if path is not None and path.suffix.lower() == ".json" else "markdown"
    return fmt, path


def save_export(result: SessionExportResult, path: Path | None, folder: Path) -> Path:
    """Write the export to `path` (relative to `folder`), or to `folder` under the name the server chose.

    Raises:
        FileExistsError: something is there already (nothing is overwritten).
        OSError: it could not be written.
    """
    # The server's name is made safe there; its last part only, all the same: it names a file in `folder`.
    target = folder / (path if path is not None else (Path(result.filename).name or "session.md"))
    with target.open("x", encoding="utf-8") as out:
        out.write(result.content)
    return target


def import_path(arg: str, cwd: Path) -> str:
    """`/import FILE`: the file as an absolute path (relative to the folder the client was started in), for the
    server on this machine to read (`session/import` with `path`; no size limit of a request).

    Raises:
        ValueError: no file named (the message says how to use `/import`).
    """
    name = arg.strip()
    if not name:
        raise ValueError(IMPORT_USAGE)
    path = Path(name).expanduser()
    return str(path if path.is_absolute() else cwd / path)

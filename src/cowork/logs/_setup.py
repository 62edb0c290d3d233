"""The server's logging: JSON lines into its rotating, private log file, and warnings on stderr for a person."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from cowork.config._paths import private_file

from ._files import DEFAULT_BACKUPS, DEFAULT_MAX_BYTES, PrivateRotatingFileHandler
from ._format import JsonFormatter, TextFormatter

__all__ = ["setup_server_logging"]


def _ours(handler: logging.Handler) -> logging.Handler:
    """Mark `handler` as installed by Cowork, so a second set-up in the same process adds no duplicate."""
    handler._cowork = True  # type: ignore[attr-defined]
    return handler


def setup_server_logging(
    path: Path,
    *,
    quiet: bool,
    max_bytes: int = DEFAULT_MAX_BYTES,
    backups: int = DEFAULT_BACKUPS,
) -> bool:
    """Send the process's INFO and above to `path` as JSON lines, and (unless `quiet`) its warnings to stderr.

    Returns whether it did: a process whose logging Cowork has already set up is left as it is (tests and the
    in-process harness serve more than once).

    Args:
        path: The log file; created 0600, rotated past `max_bytes` into `path.1` … `path.<backups>`.
        quiet: No stderr handler (a background server, whose stderr goes to a file nobody watches).
        max_bytes: Size at which the file is rotated.
        backups: Rotated files kept; the oldest is deleted.
    """
    root = logging.getLogger()
    if any(getattr(h, "_cowork", False) for h in root.handlers):
        return False
    # Made private first, saying so if it cannot be: the handler's own open cannot log (it runs inside logging).
    private_file(path)
    file_handler = PrivateRotatingFileHandler(path, max_bytes=max_bytes, backups=backups)
    file_handler.setFormatter(JsonFormatter())
    root.addHandler(_ours(file_handler))
    root.setLevel(logging.INFO)
    if not quiet:
        stderr = logging.StreamHandler(sys.stderr)
        stderr.setLevel(logging.WARNING)
        stderr.setFormatter(TextFormatter())
        root.addHandler(_ours(stderr))
    return True

"""The server log: JSON lines with secrets redacted, in private (0600) files rotated by size, and `cowork logs`.

`_redact` takes secrets out of text; `_format` turns records into JSON lines (with the current OpenTelemetry trace
and span ids) or readable stderr text; `_files` is the rotating handler that keeps every file 0600 and lists the
rotated files; `_setup` installs them for the server. Reading them back: `_entries` parses and filters lines (pure),
`_tail` follows a file across rotation, `_cli` is `cowork logs`. See docs/observability.md.
"""

from ._cli import main, render_line
from ._entries import LEVELS, LogEntry, LogFilter, parse_line, parse_since
from ._files import DEFAULT_BACKUPS, DEFAULT_MAX_BYTES, PrivateRotatingFileHandler, log_files
from ._format import JsonFormatter, TextFormatter, current_trace_ids
from ._redact import REDACTED, redact, redact_value
from ._setup import setup_server_logging
from ._tail import Tail, read_lines

__all__ = [
    "DEFAULT_BACKUPS",
    "DEFAULT_MAX_BYTES",
    "LEVELS",
    "REDACTED",
    "JsonFormatter",
    "LogEntry",
    "LogFilter",
    "PrivateRotatingFileHandler",
    "Tail",
    "TextFormatter",
    "current_trace_ids",
    "log_files",
    "main",
    "parse_line",
    "parse_since",
    "read_lines",
    "redact",
    "redact_value",
    "render_line",
    "setup_server_logging",
]

"""`cowork tui`: a Textual terminal UI over the same JSON-RPC protocol as every other client."""

from .app import CoworkApp, TuiOptions, run_tui

__all__ = ["CoworkApp", "TuiOptions", "run_tui"]

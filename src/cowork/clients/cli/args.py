"""The `cowork` command line's arguments: the REPL's, `cowork run`'s, `cowork tui`'s, `cowork doctor`'s, `cowork logs`'
(and `cowork automation`'s, in `automation_args`).

Only argparse here, so `cowork --help` and `cowork serve` parse their arguments without loading a client.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from cowork.clients.automation_args import add_automation_parser

__all__ = [
    "add_doctor_parser",
    "add_index_parsers",
    "add_logs_parser",
    "add_repl_arguments",
    "add_run_parser",
    "add_tui_parser",
]


def add_repl_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", "-w", type=Path, default=None, help="folder to work in (default: current)")
    parser.add_argument("--resume", metavar="SESSION_ID", help="continue a session")
    parser.add_argument("--url", help="server URL (default: the local server, started if needed)")
    parser.add_argument("--token", help="bearer token for --url (default: COWORK_TOKEN or the local token file)")
    parser.add_argument(
        "--yolo", action="store_true", help="new sessions run with approvals and the sandbox OFF (careful)"
    )


def add_run_parser(sub: Any) -> None:
    """Register `cowork run` on the main parser's subparsers."""
    run = sub.add_parser(
        "run",
        help="run one turn without the REPL (prompt as argument, or piped on stdin); see docs/cli.md for exit codes",
        description="Run one turn and exit: 0 done, 1 the turn failed, 2 usage error, 3 waiting for a human, "
        "4 no provider, 130 interrupted.",
    )
    run.add_argument("prompt", nargs="?", help="the prompt; `-` or nothing reads it from stdin")
    run.add_argument("--json", action="store_true", help="print every session event as a JSON line, then the outcome")
    safety = run.add_mutually_exclusive_group()
    safety.add_argument("--yolo", action="store_true", help="approvals and the sandbox OFF for this session (careful)")
    safety.add_argument(
        "--approve-safe", action="store_true", help="approve calls not flagged dangerous; reject the dangerous ones"
    )
    run.add_argument("--workspace", "-w", type=Path, default=None, help="folder to work in (default: current)")
    run.add_argument("--model", "-m", metavar="PROVIDER:MODEL", help="the model for this session")
    run.add_argument("--session", "-s", metavar="SESSION_ID", help="continue this session")
    run.add_argument("--url", help="server URL (default: the local server, started if needed)")
    run.add_argument("--token", help="bearer token for --url (default: COWORK_TOKEN or the local token file)")
    add_tui_parser(sub)
    add_automation_parser(sub)


def add_tui_parser(sub: Any) -> None:
    """Register `cowork tui` (the Textual UI; see docs/tui.md)."""
    tui = sub.add_parser("tui", help="the terminal UI: sessions, chat, approvals, todos, models, MCP (docs/tui.md)")
    add_repl_arguments(tui)


def add_doctor_parser(sub: Any) -> None:
    """Register `cowork doctor` (checks the machine and configuration without a server; see docs/doctor.md)."""
    doctor = sub.add_parser(
        "doctor",
        help="check Python, the state folder, config, sandbox, git, providers, MCP servers (docs/doctor.md)",
        description="Check the machine and configuration, each with a verdict and a fix; needs no running server. "
        "Exit code 0 when there is no problem (warnings allowed), 1 when there is one.",
    )
    doctor.add_argument(
        "--workspace", "-w", type=Path, default=None, help="folder whose config to check (default: current)"
    )
    doctor.add_argument("--network", action="store_true", help="also reach each connected provider (short timeout)")
    doctor.add_argument("--json", action="store_true", help='print [{"check", "status", "detail", "fix"}] as JSON')


def add_toolbox_parser(sub: Any) -> None:
    """Register `cowork toolbox` (the document toolbox shell commands use; see docs/documents.md#toolbox)."""
    toolbox = sub.add_parser(
        "toolbox",
        help="the document toolbox shell commands use (python3 with openpyxl, python-docx…): status, install, remove",
        description="status: whether it is installed, its libraries' versions, its size, and LibreOffice; install: "
        "build it from Cowork's lock now (also repairs a broken one); remove: delete it. Exit code 0, 1 when it is "
        "not ready (status) or the install failed.",
    )
    toolbox.add_argument("action", nargs="?", choices=["status", "install", "remove"], default="status")
    toolbox.add_argument("--json", action="store_true", help="status as JSON")


def add_logs_parser(sub: Any) -> None:
    """Register `cowork logs` (reads the server log without a server; see docs/observability.md#logs)."""
    logs = sub.add_parser(
        "logs",
        help="show or follow the server log (COWORK_HOME/logs/server.log), filtered (docs/observability.md)",
        description="Show the server log's last lines as `HH:MM:SS.mmm LEVEL logger: message`, or follow it with -f "
        "(Ctrl-C stops). Exit code 0, 1 when there is no log yet, 2 for a bad argument.",
    )
    logs.add_argument("-n", "--lines", type=int, default=50, metavar="N", help="how many lines to show (default 50)")
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing new lines, across rotations")
    logs.add_argument(
        "--level",
        type=str.lower,
        choices=["debug", "info", "warning", "error", "critical"],
        help="only lines at this level or above",
    )
    logs.add_argument("--grep", metavar="TEXT", help="only lines whose message or logger contains TEXT (any case)")
    logs.add_argument("--since", metavar="WHEN", help="only lines since then: 30s, 10m, 2h, 1d or 2025-06-01T09:30")
    logs.add_argument("--all", action="store_true", help="also the rotated files (server.log.1 …), oldest first")
    logs.add_argument("--json", action="store_true", help="print the JSON lines as they are in the file")


def add_index_parsers(sub: Any) -> None:
    """Register `cowork index` and `cowork search` (the folder's document index; see docs/memory.md)."""
    index = sub.add_parser(
        "index",
        help="index this folder's documents (pdf, docx, xlsx, pptx, html, md, code…) or web pages for search",
        description="Index files or folders (default: the whole folder) and web pages (http:// or https:// URLs, "
        "into this folder's index) in the background server and show its progress; unchanged files and pages are "
        "not embedded again. Ctrl-C stops watching, not the job. Exit code 0 when the job is done, 1 when it "
        "failed or was paused, 2 for a path or URL that is refused.",
    )
    index.add_argument(
        "paths", nargs="*", help="files or folders inside the folder (default: all of it), or URLs", metavar="PATH|URL"
    )
    index.add_argument("--workspace", "-w", type=Path, default=None, help="the folder (default: current)")
    control = index.add_mutually_exclusive_group()
    control.add_argument("--status", action="store_true", help="list the recent indexing jobs instead")
    control.add_argument("--pause", metavar="JOB", help="pause a running job (its id, or the first characters)")
    control.add_argument("--resume", metavar="JOB", help="resume a paused or failed job, and follow it")
    control.add_argument("--cancel", metavar="JOB", help="cancel a job (what it indexed stays searchable)")
    index.add_argument("--json", action="store_true", help="print the job (or jobs) as JSON")
    search = sub.add_parser(
        "search",
        help="search this folder's indexed documents by meaning and keywords",
        description="Print the best passages for QUERY with their file and heading. Exit code 0 with results, 1 "
        "with none (or nothing indexed), 2 for a bad query.",
    )
    search.add_argument("query", help="what to look for, in plain words")
    search.add_argument("--workspace", "-w", type=Path, default=None, help="the folder (default: current)")
    search.add_argument("-n", "--limit", type=int, default=5, choices=range(1, 51), metavar="N", help="passages (5)")
    search.add_argument("--json", action="store_true", help="print the answer as JSON")

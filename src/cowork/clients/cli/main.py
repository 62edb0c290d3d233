"""`cowork` with no subcommand: the REPL in the current folder; `cowork run`: one turn for scripts."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from cowork.clients.connection import ServerAddress

from .repl import ReplOptions, run_repl
from .run import ExitCode, RunOptions, outcome_line, run_once

__all__ = ["add_repl_arguments", "add_run_parser", "add_tui_parser", "main_repl", "main_run", "main_tui"]


def add_repl_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", "-w", type=Path, default=None, help="folder to work in (default: current)")
    parser.add_argument("--resume", metavar="SESSION_ID", help="continue a session")
    parser.add_argument("--url", help="server URL (default: the local server, started if needed)")
    parser.add_argument("--token", help="bearer token for --url (default: COWORK_TOKEN or the local token file)")
    parser.add_argument(
        "--yolo", action="store_true", help="new sessions run with approvals and the sandbox OFF (careful)"
    )


def _address(args: argparse.Namespace) -> ServerAddress | None:
    if not args.url:
        return None
    return ServerAddress(args.url.rstrip("/"), args.token or os.environ.get("COWORK_TOKEN"))


def main_repl(args: argparse.Namespace) -> int:
    if getattr(args, "command", None) == "tui":  # `cowork tui` (registered by add_run_parser)
        return main_tui(args)
    workspace = (args.workspace or Path.cwd()).resolve()
    if not workspace.is_dir():
        print(f"cowork: workspace {workspace} is not a folder")
        return 2
    return run_repl(ReplOptions(workspace=workspace, address=_address(args), resume=args.resume, yolo=args.yolo))


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


def _usage(message: str, as_json: bool) -> int:
    print(f"cowork run: {message}", file=sys.stderr)
    if as_json:
        print(json.dumps(outcome_line(ExitCode.USAGE, error=("usage_error", message))), flush=True)
    return int(ExitCode.USAGE)


def main_run(args: argparse.Namespace) -> int:
    prompt: str | None = args.prompt
    if prompt is None or prompt == "-":
        if prompt is None and sys.stdin.isatty():
            return _usage('give a prompt (cowork run "…"), or pipe one on stdin', args.json)
        prompt = sys.stdin.read()
    if not prompt.strip():
        return _usage("the prompt is empty", args.json)
    workspace = (args.workspace or Path.cwd()).resolve()
    if not workspace.is_dir():
        return _usage(f"workspace {workspace} is not a folder", args.json)
    options = RunOptions(
        prompt=prompt.strip(),
        workspace=workspace,
        address=_address(args),
        session_id=args.session,
        model=args.model,
        json=args.json,
        yolo=args.yolo,
        approve_safe=args.approve_safe,
    )
    return run_once(options)


def add_tui_parser(sub: Any) -> None:
    """Register `cowork tui` (the Textual UI; see docs/tui.md)."""
    tui = sub.add_parser("tui", help="the terminal UI: sessions, chat, approvals, todos, models, MCP (docs/tui.md)")
    add_repl_arguments(tui)


def main_tui(args: argparse.Namespace) -> int:
    from cowork.clients.tui import TuiOptions, run_tui  # imported here: Textual loads only for `cowork tui`

    workspace = (args.workspace or Path.cwd()).resolve()
    if not workspace.is_dir():
        print(f"cowork: workspace {workspace} is not a folder")
        return 2
    return run_tui(TuiOptions(workspace=workspace, address=_address(args), resume=args.resume, yolo=args.yolo))

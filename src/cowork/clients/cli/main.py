"""`cowork` with no subcommand: the REPL in the current folder; `cowork run`: one turn for scripts."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from cowork.clients.connection import ServerAddress

from .run import ExitCode, RunOptions, outcome_line, run_once

__all__ = ["main_repl", "main_run", "main_tui"]


def _address(args: argparse.Namespace) -> ServerAddress | None:
    if not args.url:
        return None
    return ServerAddress(args.url.rstrip("/"), args.token or os.environ.get("COWORK_TOKEN"))


def main_repl(args: argparse.Namespace) -> int:
    if getattr(args, "command", None) == "tui":  # `cowork tui` (registered by add_run_parser)
        return main_tui(args)
    if getattr(args, "command", None) == "automation":  # `cowork automation` (registered by add_run_parser)
        from .automation_cmds import main_automation

        return main_automation(args)
    from .repl import ReplOptions, run_repl  # imported here: `cowork run` needs no prompt_toolkit

    workspace = (args.workspace or Path.cwd()).resolve()
    if not workspace.is_dir():
        print(f"cowork: workspace {workspace} is not a folder")
        return 2
    return run_repl(ReplOptions(workspace=workspace, address=_address(args), resume=args.resume, yolo=args.yolo))


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


def main_tui(args: argparse.Namespace) -> int:
    from cowork.clients.tui import TuiOptions, run_tui  # imported here: Textual loads only for `cowork tui`

    workspace = (args.workspace or Path.cwd()).resolve()
    if not workspace.is_dir():
        print(f"cowork: workspace {workspace} is not a folder")
        return 2
    return run_tui(TuiOptions(workspace=workspace, address=_address(args), resume=args.resume, yolo=args.yolo))

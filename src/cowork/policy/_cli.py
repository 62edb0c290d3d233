"""`cowork policy check`: classify shell commands from the command line or standard input, printing JSON.

`cowork policy check COMMAND` prints one JSON object `{"command", "verdict", "reason", "detail", "fragment"}`;
`cowork policy check -` reads one command per line from standard input and prints one JSON line for each
non-empty line. `--allow PATTERN` and `--deny PATTERN` (repeatable) add to the `[tools.commands]` patterns of
the configuration (COWORK_HOME's config.toml, the current folder's `.cowork/config.toml`, `COWORK_*`).
Paths are judged as the runtime judges them: the current folder is the workspace, the configured extra roots
(`[tools.permissions]` `extra_read_roots`/`extra_write_roots`, `[tools.sandbox]` `extra_writable`) are allowed,
and the sensitive places are the current user's and COWORK_HOME's; the reason and detail name a path that
decided the verdict (`sensitive_path`, `protected_path`, `outside_workspace`, `git_executes`).
The exit code is 0 whatever the verdicts; 2 for bad usage or an unusable configuration.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from cowork.config import ConfigError, load_config, resolve_home

from ._commands import CommandPaths, classify

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cowork policy", description="Inspect Cowork's command policy.")
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = sub.add_parser(
        "check",
        help="classify a shell command as safe, review or dangerous",
        description="Classify shell commands as safe, review or dangerous and print the verdicts as JSON.",
    )
    check.add_argument("command", metavar="COMMAND", help='the command, or "-" to read one command per line from stdin')
    check.add_argument(
        "--allow", action="append", default=[], metavar="PATTERN", help="a pattern treated as safe (repeatable)"
    )
    check.add_argument(
        "--deny", action="append", default=[], metavar="PATTERN", help="a pattern treated as dangerous (repeatable)"
    )
    return parser


def _configured() -> tuple[list[str], list[str], CommandPaths]:
    """The configured patterns, and the paths of a command run here: this folder is the workspace."""
    tools = load_config().config.tools
    permissions = tools.permissions
    roots = [*permissions.extra_read_roots, *permissions.extra_write_roots, *tools.sandbox.extra_writable]
    paths = CommandPaths.build(Path.cwd(), cowork_home=resolve_home(), roots=roots)
    return list(tools.commands.allow), list(tools.commands.deny), paths


def _line(command: str, allow: Sequence[str], deny: Sequence[str], paths: CommandPaths) -> str:
    result = classify(command, allow=allow, deny=deny, paths=paths)
    return json.dumps(
        {
            "command": command,
            "verdict": result.verdict,
            "reason": result.reason,
            "detail": result.detail,
            "fragment": result.fragment,
        }
    )


def main(argv: list[str]) -> int:
    """Run `cowork policy ACTION …` (`argv` is what follows `policy`); the exit code."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage or the help
        return exc.code if isinstance(exc.code, int) else 2
    try:
        allow, deny, paths = _configured()
    except ConfigError as exc:
        print(f"cowork policy: {exc}", file=sys.stderr)
        return 2
    allow += args.allow
    deny += args.deny
    if args.command != "-":
        print(_line(args.command, allow, deny, paths))
        return 0
    for raw in sys.stdin:
        command = raw.rstrip("\r\n")
        if command.strip():
            print(_line(command, allow, deny, paths), flush=True)
    return 0

"""The arguments of `cowork automation ACTION …`, also parsed for `/automation ACTION …` in the REPL and the TUI.

Argparse only (like `args.py`), so both the command line and the REPL read the same words the same way.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, NoReturn

__all__ = ["ACTIONS", "SlashUsage", "add_automation_parser", "slash_parser"]

ACTIONS = (
    "list",
    "show",
    "import",
    "export",
    "run",
    "runs",
    "run-info",
    "enable",
    "disable",
    "delete",
    "cancel",
    "resume",
    "approve",
    "reject",
)
"""Every action, in the order `--help` lists them (tab completion offers them too)."""


class SlashUsage(Exception):
    """`/automation …` words that do not parse, or `--help`: the text to show instead of running anything."""


class _SlashParser(argparse.ArgumentParser):
    """Raises instead of exiting: a typo after `/automation` must not end the REPL."""

    def error(self, message: str) -> NoReturn:
        raise SlashUsage(f"{self.format_usage().strip()}\n{self.prog}: {message}")

    def print_help(self, file: Any = None) -> None:
        raise SlashUsage(self.format_help().strip())

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise SlashUsage((message or "").strip())


def _limit(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 500:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number from 1 to 500")
    return int(text)


def _add_actions(parser: argparse.ArgumentParser, parents: list[argparse.ArgumentParser]) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    def action(name: str, help_: str, description: str | None = None) -> argparse.ArgumentParser:
        return actions.add_parser(name, help=help_, description=description or help_, parents=parents)

    def as_json(p: argparse.ArgumentParser) -> None:
        p.add_argument("--json", action="store_true", help="print the server's answer as JSON")

    as_json(action("list", "every automation: state, trigger, last and next run"))
    show = action("show", "one automation: its steps, inputs, warnings, recent runs and flow file")
    show.add_argument("name", metavar="NAME", help="its name (or id)")
    as_json(show)
    imp = action(
        "import",
        "save an automation from a flow file (.yaml, .yml or .toml)",
        "Save an automation from a flow file. A file that does not describe a valid flow saves nothing and each "
        "problem is printed on its own line (exit code 2).",
    )
    imp.add_argument("file", type=Path, help="the flow file")
    imp.add_argument("--replace", action="store_true", help="update the automation of that name if there is one")
    export = action("export", "print an automation's flow file (YAML), or write it to FILE")
    export.add_argument("name", metavar="NAME", help="its name (or id)")
    export.add_argument("file", nargs="?", type=Path, help="where to write it (default: standard output)")
    export.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    run = action(
        "run",
        "run an automation now and show its steps as they run",
        "Run an automation now (enabled or not) and show each step as it runs. A step that needs approval is asked "
        "about on a terminal; otherwise the command says how to answer and exits with code 3.",
    )
    run.add_argument("name", metavar="NAME", help="its name (or id)")
    run.add_argument(
        "--input",
        "-i",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a value for an input (JSON when it parses: n=3, flag=true; else text); repeat for more",
    )
    run.add_argument("--no-wait", action="store_true", help="start it and print its run id; do not follow it")
    runs = action("runs", "recent runs, newest first (all automations', or NAME's)")
    runs.add_argument("name", nargs="?", metavar="NAME", help="only this automation's runs")
    runs.add_argument("--limit", "-n", type=_limit, default=20, metavar="N", help="how many, 1 to 500 (20)")
    as_json(runs)
    info = action("run-info", "one run, step by step: input, output, duration, errors")
    info.add_argument("run_id", metavar="RUN_ID")
    as_json(info)
    for name, what in (("enable", "enable: its trigger fires, the agent may call it"), ("disable", "disable it")):
        action(name, what).add_argument("name", metavar="NAME", help="its name (or id)")
    delete = action("delete", "delete an automation and its run history (asks first)")
    delete.add_argument("name", metavar="NAME", help="its name (or id)")
    delete.add_argument("--yes", "-y", action="store_true", help="do not ask first")
    action("cancel", "cancel a run that is running, waiting or interrupted").add_argument("run_id", metavar="RUN_ID")
    for name, what in (
        ("resume", "go on with an interrupted run (a step with side effects asks again), and follow it"),
        ("approve", "approve the step a run waits on, and follow the run"),
        ("reject", "reject the step a run waits on (the run fails), and show how it ended"),
    ):
        answer = action(name, what)
        if name == "resume":
            answer.add_argument("run_id", metavar="RUN_ID")
        else:
            answer.add_argument("run_id", metavar="RUN_ID", nargs="?", help="the run (default: the one run that waits)")
        answer.add_argument("--no-wait", action="store_true", help="do not follow the run afterwards")


def add_automation_parser(sub: Any) -> None:
    """Register `cowork automation` (saved flows and their runs; see docs/cli.md#automations)."""
    automation = sub.add_parser(
        "automation",
        help="saved automations (flows): import, run with live progress, approve, list runs (docs/cli.md)",
        description="Saved automations and their runs, on the Cowork server. Exit codes: 0 done, 1 the run failed "
        "or was cancelled (or the server refused), 2 bad input (unknown automation or run, a flow file that does "
        "not parse, a bad --input), 3 a run waits for an approval that was not given here, 130 Ctrl-C (the run goes "
        "on).",
    )
    connection = argparse.ArgumentParser(add_help=False)
    connection.add_argument(
        "--workspace", "-w", type=Path, default=None, help="folder to start the server in (default: current)"
    )
    connection.add_argument("--url", help="server URL (default: the local server, started if needed)")
    connection.add_argument("--token", help="bearer token for --url (default: COWORK_TOKEN or the local token file)")
    _add_actions(automation, [connection])


def slash_parser() -> argparse.ArgumentParser:
    """The parser of what follows `/automation` in the REPL (no connection options: the REPL has its server)."""
    parser = _SlashParser(prog="/automation", description="Saved automations and their runs.")
    _add_actions(parser, [])
    return parser

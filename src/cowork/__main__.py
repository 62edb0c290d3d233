"""The `cowork` command: the REPL by default; `serve` runs the server; `protocol docs` prints the reference."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# Argument definitions only: each command imports what it runs once it is chosen (below), so `cowork serve` loads
# no client and `cowork --help` neither client nor server.
from cowork.clients.cli.args import (
    add_doctor_parser,
    add_index_parsers,
    add_logs_parser,
    add_repl_arguments,
    add_run_parser,
    add_toolbox_parser,
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cowork", description="Cowork: a local-first AI coworker.")
    add_repl_arguments(parser)
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser("serve", help="run the Cowork server in the foreground")
    serve.add_argument("--workspace", "-w", type=Path, default=None, help="default folder for new sessions")
    serve.add_argument("--host", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to bind (default: a free port)")
    serve.add_argument("--no-auth", action="store_true", help="no token (loopback only; any local program can connect)")
    serve.add_argument("--idle-exit", type=float, metavar="SECONDS", help="exit after this long with no clients")
    serve.add_argument("--quiet", action="store_true", help="print nothing but warnings")
    serve.add_argument(
        "--reuse-port",
        action="store_true",
        help="bind with SO_REUSEPORT so several replicas share one --port (each with its own COWORK_HOME)",
    )
    serve.add_argument(
        "--database-url",
        metavar="URL",
        help="the database: postgresql://user@host:port/db (shared by replicas) or sqlite:///path "
        "(default: the SQLite file in Cowork's home; also COWORK_DATABASE_URL)",
    )
    policy = sub.add_parser(
        "policy", help="policy tools: `cowork policy check COMMAND` (or `-` to read commands from stdin)"
    )
    policy.add_argument("policy_args", nargs=argparse.REMAINDER, help="check COMMAND | check - [--allow P] [--deny P]")
    protocol = sub.add_parser("protocol", help="protocol tools")
    protocol.add_argument("action", choices=["docs"], help="docs: print docs/protocol.md")
    server = sub.add_parser(
        "server", help="the background server clients share: status, stop, restart (with this shell's settings)"
    )
    server.add_argument("action", choices=["status", "stop", "restart"])
    backup = sub.add_parser(
        "backup",
        help="copy Cowork's database, also while it runs (checked; API keys are not in it; docs/continuity.md)",
    )
    backup.add_argument("file", nargs="?", type=Path, help="where to write it (default: ~/.cowork/backups/…)")
    restore = sub.add_parser("restore", help="put a backup in place of the database (the server must be stopped)")
    restore.add_argument("file", type=Path, help="the backup to restore")
    restore.add_argument("--yes", action="store_true", help="do not ask first")
    add_run_parser(sub)
    add_doctor_parser(sub)
    add_logs_parser(sub)
    add_toolbox_parser(sub)
    add_index_parsers(sub)
    parser.add_argument("--version", action="version", version=f"cowork {_version()}")
    return parser


def _version() -> str:
    import cowork

    return cowork.__version__


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        from cowork.server import ServeOptions, serve

        code = serve(
            ServeOptions(
                workspace=args.workspace,
                host=args.host,
                port=args.port,
                no_auth=args.no_auth,
                idle_exit_seconds=args.idle_exit,
                quiet=args.quiet,
                reuse_port=args.reuse_port,
                database_url=args.database_url,
            )
        )
    elif args.command == "policy":
        from cowork.policy._cli import main as policy_main

        code = policy_main(args.policy_args)
    elif args.command == "server":
        from cowork.clients.cli.server_cmds import main_server

        code = main_server(args.action, getattr(args, "workspace", None))
    elif args.command == "backup":
        from cowork.config import resolve_home
        from cowork.store._cli import main_backup

        code = main_backup(resolve_home(), args.file)
    elif args.command == "restore":
        from cowork.clients.connection import cowork_home, running_server
        from cowork.store._cli import main_restore

        home = cowork_home()
        code = main_restore(home, args.file, yes=args.yes, server_running=running_server(home) is not None)
    elif args.command == "doctor":
        from cowork.doctor import main as doctor_main

        code = doctor_main(workspace=args.workspace, network=args.network, as_json=args.json)
    elif args.command == "toolbox":
        from cowork.toolbox._cli import main as toolbox_main

        code = toolbox_main(args.action, as_json=args.json)
    elif args.command == "logs":
        from cowork.logs import main as logs_main

        code = logs_main(
            lines=args.lines,
            level=args.level,
            grep=args.grep,
            since=args.since,
            follow=args.follow,
            as_json=args.json,
            rotated=args.all,
        )
    elif args.command == "index":
        from cowork.clients.cli.index_cmds import main_index

        action = next(
            ((verb, getattr(args, verb)) for verb in ("pause", "resume", "cancel") if getattr(args, verb)), None
        )
        code = main_index(args.workspace, args.paths, status=args.status, as_json=args.json, action=action)
    elif args.command == "search":
        from cowork.clients.cli.index_cmds import main_search

        code = main_search(args.workspace, args.query, limit=args.limit, as_json=args.json)
    elif args.command == "run":
        from cowork.clients.cli.main import main_run

        code = main_run(args)
    elif args.command == "protocol":
        from cowork.protocol import render_protocol_markdown

        sys.stdout.write(render_protocol_markdown())
        code = 0
    else:
        from cowork.clients.cli.main import main_repl

        code = main_repl(args)
    sys.exit(code)


if __name__ == "__main__":
    main()

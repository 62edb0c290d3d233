"""`cowork automation …`: saved automations and their runs, over the `automation/*` methods.

Each action is one function in `ACTIONS`; the REPL runs the same ones for `/automation …` with its own connection
and console (`run_action`). The server does the work: a run goes on after Ctrl-C, and answers given here or in any
other client are the same answers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.text import Text

from cowork.clients.automation_listings import automation_detail, automations_table, run_detail, runs_table
from cowork.clients.automations import flow_format, input_types, parse_inputs, run_heading, waiting_run
from cowork.clients.connection import RpcClient, RpcError, ServerAddress, ensure_server
from cowork.clients.format import SafeConsole, clean
from cowork.protocol import (
    AutomationCreateParams,
    AutomationIdParams,
    AutomationInfo,
    AutomationListResult,
    AutomationRespondParams,
    AutomationRunIdParams,
    AutomationRunInfo,
    AutomationRunParams,
    AutomationRunsParams,
    AutomationRunsResult,
    AutomationUpdateParams,
)

from .automation_follow import Context, ExitCode, ask_terminal, follow, outcome

__all__ = ["ACTIONS", "main_automation", "run_action"]

Action = Callable[[Context, argparse.Namespace], Awaitable[int]]

_USAGE_CODES = {"automation_not_found", "run_not_found", "invalid_params", "automation_exists"}
"""Refusals about what was typed (exit code 2); any other refusal is 1."""
_NAMED = re.compile(r"named '([a-z0-9_-]+)'")
_NAME_LINE = re.compile(r"""^name\s*[:=]\s*["']?([a-z0-9]+(?:[-_][a-z0-9]+)*)["']?\s*(?:#.*)?$""", re.MULTILINE)


class _Refused(Exception):
    """What was asked cannot be done; the message says why (exit code 2)."""


def _json(ctx: Context, value: BaseModel | dict[str, Any]) -> None:
    data = value.model_dump(mode="json", by_alias=True) if isinstance(value, BaseModel) else value
    if ctx.out.is_terminal:
        ctx.out.print_json(json.dumps(data))
    else:  # for a script: one line, exactly as JSON
        print(json.dumps(data), flush=True)


async def _get(ctx: Context, name: str) -> AutomationInfo:
    return AutomationInfo.model_validate(await ctx.client.call("automation/get", AutomationIdParams(id=name)))


async def _list(ctx: Context, args: argparse.Namespace) -> int:
    result = AutomationListResult.model_validate(await ctx.client.call("automation/list", {}))
    if args.json:
        _json(ctx, result)
    elif not result.automations:
        ctx.out.print(Text(f"No automations yet: {ctx.command} import FILE saves one from a flow file.", "dim"))
    else:
        ctx.out.print(automations_table(result.automations))
    return ExitCode.OK


async def _runs_of(ctx: Context, name: str | None, limit: int) -> list[AutomationRunInfo]:
    raw = await ctx.client.call("automation/runs", AutomationRunsParams(id=name, limit=limit))
    return AutomationRunsResult.model_validate(raw).runs


async def _show(ctx: Context, args: argparse.Namespace) -> int:
    automation = await _get(ctx, args.name)
    runs = await _runs_of(ctx, automation.id, 5)
    if args.json:
        _json(ctx, {"automation": automation.model_dump(mode="json", by_alias=True),
                    "runs": [r.model_dump(mode="json", by_alias=True) for r in runs]})  # fmt: skip
        return ExitCode.OK
    for part in automation_detail(automation, runs):
        ctx.out.print(part)
    return ExitCode.OK


def _read_flow(path: Path) -> tuple[str, str]:
    try:
        kind = flow_format(path)
        return path.read_text(encoding="utf-8"), kind
    except ValueError as exc:
        raise _Refused(str(exc)) from None
    except OSError as exc:
        raise _Refused(f"cannot read {path}: {exc.strerror}") from None


def _existing_name(exc: RpcError, text: str) -> str | None:
    """The automation a create collided with: as the server names it, else the file's top-level `name`."""
    details = exc.data.get("details")
    if isinstance(details, dict):
        for key in ("id", "name"):
            if isinstance(details.get(key), str):
                return str(details[key])
    found = _NAMED.search(exc.message) or _NAME_LINE.search(text)
    return found.group(1) if found else None


async def _import(ctx: Context, args: argparse.Namespace) -> int:
    text, kind = _read_flow(args.file)
    params: dict[str, Any] = {"text": text, "format": kind}
    try:
        raw = await ctx.client.call("automation/create", AutomationCreateParams.model_validate(params))
        verb = "Imported"
    except RpcError as exc:
        if exc.code == "invalid_params":
            _problems(ctx, args.file, exc, "Nothing was saved.")
            return ExitCode.USAGE
        if exc.code != "automation_exists":
            raise
        existing = _existing_name(exc, text)
        if not args.replace or existing is None:
            hint = f" ({ctx.command} import --replace updates it)" if not args.replace else ""
            raise _Refused(f"{clean(exc.message)}{hint}") from None
        try:
            update = AutomationUpdateParams.model_validate({**params, "id": existing})
            raw = await ctx.client.call("automation/update", update)
        except RpcError as again:
            if again.code != "invalid_params":
                raise
            _problems(ctx, args.file, again, f"Nothing was changed: {existing} is as it was.")
            return ExitCode.USAGE
        verb = "Replaced"
    automation = AutomationInfo.model_validate(raw)
    state = "enabled" if automation.enabled else "disabled"
    ctx.out.print(
        Text.assemble(
            f"{verb} ",
            (clean(automation.name), "bold"),
            f" ({automation.id}, version {automation.version}, {state}). Run it: {ctx.command} run {automation.name}",
        ),
        soft_wrap=True,
    )
    for warning in automation.warnings:
        ctx.out.print(Text(f"⚠ {clean(warning)}", style="yellow"))
    return ExitCode.OK


def _problems(ctx: Context, file: Path, exc: RpcError, outcome: str) -> None:
    """A refused flow file: the server's first line, then one line per problem as it lists them."""
    details = exc.data.get("details")
    listed = details.get("problems") if isinstance(details, dict) else None
    lines = [str(p) for p in listed] if isinstance(listed, list) else exc.message.splitlines()
    head, problems = (lines[0], lines[1:]) if len(lines) > 1 and lines[0].endswith(":") else ("", lines)
    ctx.err.print(Text(f"{file}: {clean(head) or 'not a valid flow:'}", style="red"), soft_wrap=True)
    for problem in problems:
        if problem.strip():
            ctx.err.print(Text(f"  {clean(problem.strip())}"), soft_wrap=True)
    ctx.err.print(Text(outcome, style="dim"))


def _check_target(path: Path, force: bool) -> None:
    if path.suffix.lower() == ".toml":
        raise _Refused(f"{path.name}: export writes YAML; name a .yaml or .yml file")
    if path.exists() and not force:
        raise _Refused(f"{path} exists already; --force overwrites it")


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _Refused(f"cannot write {path}: {exc.strerror}") from None


async def _export(ctx: Context, args: argparse.Namespace) -> int:
    path: Path | None = args.file
    if path is not None:
        _check_target(path, args.force)  # before asking the server: a refusal changes nothing
    automation = await _get(ctx, args.name)
    if path is None:
        text = automation.text if automation.text.endswith("\n") else automation.text + "\n"
        sys.stdout.write(clean(text) if sys.stdout.isatty() else text)  # a pipe or a file gets it byte for byte
        sys.stdout.flush()
        return ExitCode.OK
    _write(path, automation.text)
    ctx.out.print(Text(f"Wrote {automation.name} (version {automation.version}) to {path}", style="dim"))
    return ExitCode.OK


async def _run(ctx: Context, args: argparse.Namespace) -> int:
    automation = await _get(ctx, args.name)
    try:
        inputs = parse_inputs(args.input, input_types(automation))
    except ValueError as exc:
        raise _Refused(str(exc)) from None
    raw = await ctx.client.call("automation/run", AutomationRunParams(id=automation.id, inputs=inputs))
    run = AutomationRunInfo.model_validate(raw)
    if args.no_wait:
        ctx.out.print(
            Text(f"Started {run.id}: {ctx.command} run-info {run.id} shows how it goes", "dim"), soft_wrap=True
        )
        return ExitCode.OK
    ctx.out.print(Text.assemble(("▶ ", "cyan"), (clean(run.automation_name), "bold"), f" · run {run.id}"))
    return outcome(ctx, await follow(ctx, run))


async def _runs(ctx: Context, args: argparse.Namespace) -> int:
    runs = await _runs_of(ctx, args.name, args.limit)
    if args.json:
        _json(ctx, AutomationRunsResult(runs=runs))
    elif not runs:
        ctx.out.print(Text("No runs yet.", style="dim"))
    else:
        ctx.out.print(runs_table(runs))
    return ExitCode.OK


async def _one_run(ctx: Context, run_id: str) -> AutomationRunInfo:
    runs = await ctx.client.call("automation/runs", AutomationRunsParams(run_id=run_id, limit=1))
    if not runs.get("runs"):
        raise _Refused(f"no run {run_id} ({ctx.command} runs lists them)")
    return AutomationRunInfo.model_validate(runs["runs"][0])


async def _run_info(ctx: Context, args: argparse.Namespace) -> int:
    run = await _one_run(ctx, args.run_id)
    if args.json:
        _json(ctx, run)
        return ExitCode.OK
    for line in run_detail(run, ctx.command):
        ctx.out.print(line)
    return ExitCode.OK


async def _switch(ctx: Context, args: argparse.Namespace) -> int:
    raw = await ctx.client.call(f"automation/{args.action}", AutomationIdParams(id=args.name))
    automation = AutomationInfo.model_validate(raw)
    if automation.enabled:
        said = f"enabled: its trigger fires, and the agent may call it as {automation.tool}"
    else:
        said = "disabled: its trigger no longer fires, and the agent cannot call it"
    ctx.out.print(Text.assemble((clean(automation.name), "bold"), f" {said}"))
    return ExitCode.OK


async def _delete(ctx: Context, args: argparse.Namespace) -> int:
    automation = await _get(ctx, args.name)
    if not args.yes:
        if ctx.ask is None:
            raise _Refused(f"delete {automation.name} for good? Nobody here to ask: add --yes")
        runs = len(await _runs_of(ctx, automation.id, 500))
        question = f"Delete {clean(automation.name)} and its {runs} run(s) for good? [y/N] › "
        if ((await ctx.ask(question)) or "").strip().lower() not in ("y", "yes"):
            ctx.out.print(Text("Nothing was deleted.", style="dim"))
            return ExitCode.OK
    await ctx.client.call("automation/delete", AutomationIdParams(id=automation.id))
    ctx.out.print(Text.assemble("Deleted ", (clean(automation.name), "bold"), " and its runs."))
    return ExitCode.OK


async def _cancel(ctx: Context, args: argparse.Namespace) -> int:
    raw = await ctx.client.call("automation/cancel", AutomationRunIdParams(run_id=args.run_id))
    ctx.out.print(run_heading(AutomationRunInfo.model_validate(raw)))
    return ExitCode.OK


async def _the_waiting_run(ctx: Context) -> str:
    try:
        return waiting_run(await _runs_of(ctx, None, 100), ctx.command)
    except ValueError as exc:
        raise _Refused(str(exc)) from None


async def _answer(ctx: Context, args: argparse.Namespace) -> int:
    """`resume`, `approve` and `reject`: the server goes on with the run, and this follows it (unless --no-wait)."""
    if args.action == "resume":
        raw = await ctx.client.call("automation/resume", AutomationRunIdParams(run_id=args.run_id))
    else:
        run_id = args.run_id or await _the_waiting_run(ctx)
        params = AutomationRespondParams(run_id=run_id, approve=args.action == "approve")
        raw = await ctx.client.call("automation/respond", params)
    run = AutomationRunInfo.model_validate(raw)
    verb = {"resume": "Resumed", "approve": "Approved", "reject": "Rejected"}[args.action]
    ctx.out.print(Text.assemble(f"{verb}: ", (clean(run.automation_name), "bold"), f" · run {run.id}"))
    if not args.no_wait:
        run = await follow(ctx, run)
    code = outcome(ctx, run)
    # A rejection fails the run: that is what was asked for, not a failure of this command.
    return ExitCode.OK if args.action == "reject" and run.status in ("failed", "cancelled") else code


ACTIONS: dict[str, Action] = {
    "list": _list,
    "show": _show,
    "import": _import,
    "export": _export,
    "run": _run,
    "runs": _runs,
    "run-info": _run_info,
    "enable": _switch,
    "disable": _switch,
    "delete": _delete,
    "cancel": _cancel,
    "resume": _answer,
    "approve": _answer,
    "reject": _answer,
}


async def run_action(ctx: Context, args: argparse.Namespace) -> int:
    """Run the action `args` names; a refusal is said on `ctx.err` and turned into the exit code."""
    try:
        return await ACTIONS[args.action](ctx, args)
    except _Refused as exc:
        ctx.err.print(Text(f"{ctx.command} {args.action}: {exc}", style="red"), soft_wrap=True)
        return ExitCode.USAGE
    except RpcError as exc:
        if exc.code == "method_not_found":
            ctx.err.print(Text("This Cowork server does not offer automations yet (update it).", style="red"))
            return ExitCode.FAILED
        ctx.err.print(
            Text(f"{ctx.command} {args.action}: {clean(exc.message)} ({exc.code})", style="red"), soft_wrap=True
        )
        return ExitCode.USAGE if exc.code in _USAGE_CODES else ExitCode.FAILED


async def _main(args: argparse.Namespace, ctx_holder: list[Context]) -> int:
    workspace = (args.workspace or Path.cwd()).resolve()
    if args.url:
        address = ServerAddress(args.url.rstrip("/"), args.token or os.environ.get("COWORK_TOKEN"))
    else:
        address = await asyncio.to_thread(ensure_server, workspace=workspace)
    client = await RpcClient.connect(address)
    try:
        await client.call("initialize", {"clientInfo": {"name": "cowork-automation", "version": "1"}})
        terminal = sys.stdin.isatty() and sys.stdout.isatty()
        # A file or a pipe gets whole lines, not lines wrapped at 80 columns.
        ctx = Context(
            client=client,
            out=SafeConsole(highlight=False, soft_wrap=not sys.stdout.isatty()),
            err=SafeConsole(stderr=True, highlight=False, soft_wrap=not sys.stderr.isatty()),
            command="cowork automation",
            ask=ask_terminal if terminal else None,
        )
        ctx_holder.append(ctx)
        client.on_notification = ctx.on_notification
        return await run_action(ctx, args)
    finally:
        await client.close()


def main_automation(args: argparse.Namespace) -> int:
    held: list[Context] = []
    try:
        return asyncio.run(_main(args, held))
    except KeyboardInterrupt:
        watching = held[0].watching if held else None
        if watching is not None:
            print(f"\nStopped watching; the run goes on: cowork automation run-info {watching}", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except (OSError, RuntimeError) as exc:
        print(f"cowork automation: {exc}", file=sys.stderr)
        return ExitCode.FAILED

"""Slash commands typed in the TUI's prompt: the table every client shares (`cowork.protocol.SLASH_COMMANDS`),
each done with the protocol method behind it. A `/word` that names no command is refused here and never reaches the
model; `/usr/bin …` (a path) is a message."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from cowork.clients import format as fmt
from cowork.clients.export import import_path, parse_export, save_export
from cowork.protocol import (
    SLASH_COMMANDS,
    SessionCompactParams,
    SessionDiffResult,
    SessionExportParams,
    SessionExportResult,
    SessionImportParams,
    SessionImportResult,
    SessionListParams,
    SessionListResult,
    SessionRef,
    SessionSearchParams,
    SessionSearchResult,
    SessionUpdateParams,
    SlashCommand,
    ToolListResult,
    ToolSetPolicyParams,
)

from . import restore
from .automations import automation_command, notifications_command
from .trace_screen import show_trace

if TYPE_CHECKING:
    from .app import CoworkApp

__all__ = ["is_command", "run_command", "tui_commands"]

_WORD = re.compile(r"/[A-Za-z][\w-]*")


def is_command(text: str) -> bool:
    return _WORD.fullmatch(text.strip().split(" ", 1)[0]) is not None


def tui_commands(sent: list[SlashCommand] | None) -> list[SlashCommand]:
    """The server's table (an older server sends none: ours), the TUI's part of it."""
    return [c for c in (sent or SLASH_COMMANDS) if "tui" in c.clients]


async def run_command(app: CoworkApp, text: str) -> None:
    """Run one slash command; anything unknown gets a note and changes nothing."""
    word, _, arg = text.strip().partition(" ")
    name, arg = word[1:].lower(), arg.strip()
    known = {c.name: c for c in tui_commands(app.commands)}
    if name not in known:
        await app.chat.note(Text(f"Unknown command /{name} — /help lists them. Nothing was sent.", style="yellow"))
        return
    if name == "help":
        await app.chat.note(_help(list(known.values())))
        return
    handler = _HANDLERS.get(name)
    if handler is not None:
        await handler(app, arg)


async def _new(app: CoworkApp, _arg: str) -> None:
    app.action_new_session()


async def _quit(app: CoworkApp, _arg: str) -> None:
    app.exit()


async def _model(app: CoworkApp, arg: str) -> None:
    if arg:
        await app.set_model(arg)
    else:
        app.action_pick_model()


async def _delete(app: CoworkApp, arg: str) -> None:
    target = app.session if not arg else next((s for s in app.sessions if s.id == arg), None)
    if target is None:
        await app.chat.note(Text(f"No session {arg!r} — /sessions lists them.", style="yellow"))
    else:
        app.confirm_delete(target)


async def _title(app: CoworkApp, arg: str) -> None:
    title = " ".join(arg.split())
    if app.session is None:
        return
    if not title:
        await app.chat.note(Text(f"{fmt.clean(app.session.title)} — /title NEW TITLE renames it", style="dim"))
        return
    params = SessionUpdateParams(session_id=app.session.id, title=title)
    if await app.guarded(app.rpc_request("session/update", params)) is not None:
        await app.guarded(app.refresh_sessions())  # the new title shows there and in the header (its event)


async def _fork(app: CoworkApp, arg: str) -> None:
    """Goes on in the new session; the message it was forked before is put in the prompt, to send again or change."""
    if app.session is None:
        return
    try:
        number = fmt.fork_number(arg)
    except ValueError as exc:
        await app.chat.note(Text(str(exc), style="yellow"))
        return
    app.fork(app.session, number)


async def _undo(app: CoworkApp, _arg: str) -> None:
    if app.session is not None:
        app.run_worker(restore.undo(app), group="switch", exclusive=True)


async def _rewind(app: CoworkApp, arg: str) -> None:
    """`/rewind N` asks what to restore; without N (or with a bad one) the usage and the user's messages, numbered."""
    if app.session is None:
        return
    try:
        number = fmt.rewind_number(arg)
    except ValueError as exc:
        await app.chat.note(fmt.rewind_help(app.state.messages, str(exc)))
        return
    app.run_worker(restore.rewind(app, number), group="switch", exclusive=True)


async def _import(app: CoworkApp, arg: str) -> None:
    """A file relative to the folder the TUI was started in; the TUI goes on in the new session."""
    try:
        path = import_path(arg, Path.cwd())
    except ValueError as exc:
        await app.chat.note(Text(str(exc), style="yellow"))
        return
    workspace = str(app.options.workspace) if app.options is not None else None
    result: SessionImportResult | None = await app.guarded(
        app.rpc_request("session/import", SessionImportParams(path=path, workspace=workspace))
    )
    if result is None:
        return
    await app.show_session(result.session)
    await app.guarded(app.refresh_sessions())
    app.notify(f"Imported: {result.messages} of your messages, {result.events:,} events.")


async def _search(app: CoworkApp, arg: str) -> None:
    if not arg:
        await app.chat.note(Text("Usage: /search WORDS (then /resume ID)", style="yellow"))
        return
    result: SessionSearchResult | None = await app.guarded(
        app.rpc_request("session/search", SessionSearchParams(query=arg))
    )
    if result is None:
        return
    if not result.hits:
        await app.chat.note(Text(f"Nothing found for {fmt.clean(arg)!r}.", style="dim"))
        return
    body = Text()
    for hit in result.hits:
        body.append(f"{hit.session_id}  {fmt.clean(hit.title)}  ({fmt.clean(hit.workspace)})\n", style="bold")
        body.append("  ")
        body.append(fmt.search_hit(hit))
        body.append("\n")
    body.append("/resume ID opens one", style="dim")
    await app.chat.note(body)


async def _usage(app: CoworkApp, _arg: str) -> None:
    usage = app.state.usage
    line = f"This session: {usage.input_tokens:,} tokens in · {usage.output_tokens:,} out · "
    await app.chat.note(Text(line + fmt.cost(usage.cost_usd, usage.cost_known), style="dim"))


def _help(commands: list[SlashCommand]) -> Text:
    body = Text()
    for c in commands:
        body.append(f"{c.usage}", style="bold")
        body.append(f"  {c.summary}\n", style="dim")
    keys = "Keys: Ctrl-N new session · Ctrl-B sessions · Ctrl-O model · Ctrl-T panels · Esc cancel · Ctrl-Q quit"
    body.append(keys, style="dim")
    return body


async def _resume(app: CoworkApp, arg: str) -> None:
    if not arg:
        await app.chat.note(Text("Usage: /resume ID (/sessions and /search find them)", style="yellow"))
    else:
        app.switch_session(arg)  # any session, listed or not; an unknown id is said so


async def _compact(app: CoworkApp, arg: str) -> None:
    """Runs like a turn: its `context_compressed` line shows in the chat, Esc cancels it."""
    if app.session is None:
        return
    params = SessionCompactParams(session_id=app.session.id, instructions=arg or None)
    if await app.guarded(app.rpc_request("session/compact", params)) is not None:
        await app.chat.note(Text("compacting the conversation…", style="dim"))


async def _export(app: CoworkApp, arg: str) -> None:
    """Saved in the folder the TUI was started in (or at the path given), never over a file."""
    if app.session is None:
        return
    kind, path = parse_export(arg)
    params = SessionExportParams(session_id=app.session.id, format=kind)
    result: SessionExportResult | None = await app.guarded(app.rpc_request("session/export", params))
    if result is None:
        return
    try:
        saved = save_export(result, path, Path.cwd())
    except FileExistsError as exc:
        await app.chat.note(Text(f"{exc.filename} exists already; name another file: /export FILE", style="yellow"))
        return
    except OSError as exc:
        await app.chat.note(Text(f"Could not write {exc.filename}: {exc.strerror}.", style="red"))
        return
    await app.chat.note(Text(f"Saved {result.events:,} events as {kind} to {saved}", style="dim"))


async def _diff(app: CoworkApp) -> None:
    if app.session is None:
        return
    result: SessionDiffResult | None = await app.guarded(
        app.rpc_request("session/diff", SessionRef(session_id=app.session.id))
    )
    if result is None:
        return
    if not result.files:
        await app.chat.note(Text("No changes by this session to the folder's files.", style="dim"))
        return
    body = Text()
    for change in result.files:
        body.append(
            f"{change.status} {fmt.clean(change.path)}  +{change.additions} -{change.deletions}\n", style="bold"
        )
        body.append_text(fmt.diff_text(change.diff, 200))
        body.append("\n")
    await app.chat.note(body)


async def _tools(app: CoworkApp, arg: str) -> None:
    if arg:
        name, _, policy = arg.partition(" ")
        if policy.strip() not in ("always", "never", "inherit"):
            await app.chat.note(Text("Usage: /tools [NAME always|never|inherit]", style="yellow"))
            return
        params = ToolSetPolicyParams.model_validate({"name": name, "policy": policy.strip()})
        if await app.guarded(app.rpc_request("tool/setPolicy", params)) is not None:
            await app.chat.note(Text(f"{name}: {policy.strip()}", style="dim"))
        return
    result: ToolListResult | None = await app.guarded(app.rpc_request("tool/list", None))
    if result is None:
        return
    lines = Text()
    for tool in result.tools:
        lines.append(f"{tool.name}", style="bold")
        lines.append(f"  {fmt.clean(tool.summary)}  ({tool.policy})\n", style="dim")
    await app.chat.note(lines)


async def _sessions(app: CoworkApp, *, every: bool) -> None:
    folder = None if every or app.session is None else app.session.workspace
    result: SessionListResult | None = await app.guarded(
        app.rpc_request("session/list", SessionListParams(limit=30, workspace=folder, include_empty=False))
    )
    if result is None:
        return
    if not result.sessions:
        await app.chat.note(Text("No sessions with messages yet.", style="dim"))
        return
    lines = Text()
    for s in result.sessions:
        lines.append(f"{s.id}  ", style="bold")
        lines.append(fmt.clean(s.title))
        lines.append(
            f"  {s.updated_at:%Y-%m-%d %H:%M}" + (f"  {fmt.clean(s.workspace)}" if every else "") + "\n", style="dim"
        )
    lines.append("/resume ID opens one; Ctrl-B shows the list.", style="dim")
    await app.chat.note(lines)


async def _switch(app: CoworkApp, name: str, arg: str) -> None:
    if app.session is None or arg not in ("on", "off"):
        await app.chat.note(Text(f"Usage: /{name} on|off", style="yellow"))
        return
    value = arg == "on"
    params = SessionUpdateParams(session_id=app.session.id, **{name: value})
    session = await app.guarded(app.rpc_request("session/update", params))
    if session is not None:
        app.session = session
        what = "shell commands may reach the network" if name == "network" else "approvals and the sandbox are OFF"
        await app.chat.note(
            Text(f"{name} {arg}: {what}" if value else f"{name} off", style="yellow" if value else "dim")
        )


async def _plan(app: CoworkApp, arg: str) -> None:
    if app.session is None:
        return
    if arg not in ("on", "off"):
        state = fmt.PLAN_ON if app.session.plan_mode else fmt.PLAN_OFF
        await app.chat.note(Text(f"{state} (/plan on|off)", style="dim"))
        return
    params = SessionUpdateParams(session_id=app.session.id, plan_mode=arg == "on")
    session = await app.guarded(app.rpc_request("session/update", params))
    if session is not None:
        app.session = session
        await app.chat.note(Text(fmt.PLAN_ON if session.plan_mode else fmt.PLAN_OFF, style="cyan"))


_HANDLERS: dict[str, Callable[[CoworkApp, str], Awaitable[None]]] = {
    "new": _new,
    "clear": _new,
    "quit": _quit,
    "model": _model,
    "sessions": lambda app, arg: _sessions(app, every=arg in ("--all", "-a", "all")),
    "resume": _resume,
    "network": lambda app, arg: _switch(app, "network", arg),
    "yolo": lambda app, arg: _switch(app, "yolo", arg),
    "tools": _tools,
    "diff": lambda app, _arg: _diff(app),
    "trace": show_trace,
    "compact": _compact,
    "fork": _fork,
    "undo": _undo,
    "rewind": _rewind,
    "import": _import,
    "export": _export,
    "delete": _delete,
    "title": _title,
    "plan": _plan,
    "search": _search,
    "usage": _usage,
    "automations": lambda app, arg: automation_command(app, f"list {arg}"),
    "automation": automation_command,
    "notifications": notifications_command,
}
"""What each of the TUI's commands does (`help` is answered from the table itself)."""

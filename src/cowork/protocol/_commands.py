"""The slash commands every client offers: one table, so `/help` reads the same in the REPL, the TUI and the web UI.

A client handles each command itself (they are conveniences over protocol methods); text starting with `/` that
names no command here is refused by the client and never sent to the model.
"""

from __future__ import annotations

from typing import Literal

from ._base import WireModel

__all__ = ["SLASH_COMMANDS", "ClientKind", "SlashCommand", "slash_command"]

ClientKind = Literal["repl", "tui", "web"]
_ALL: tuple[ClientKind, ...] = ("repl", "tui", "web")
_TERMINAL: tuple[ClientKind, ...] = ("repl", "tui")
_REPL: tuple[ClientKind, ...] = ("repl",)


class SlashCommand(WireModel):
    """A command a person types after `/`."""

    name: str
    usage: str
    summary: str
    clients: list[ClientKind]


def _cmd(name: str, usage: str, summary: str, clients: tuple[ClientKind, ...] = _ALL) -> SlashCommand:
    return SlashCommand(name=name, usage=usage, summary=summary, clients=list(clients))


SLASH_COMMANDS: tuple[SlashCommand, ...] = (
    _cmd("help", "/help", "show the commands"),
    _cmd("new", "/new", "start a new session"),
    _cmd("clear", "/clear", "start a new session in the same folder (the old one is kept)"),
    _cmd("sessions", "/sessions [--all]", "this folder's sessions (--all: every folder)"),
    _cmd("resume", "/resume ID", "continue a session", _TERMINAL),
    _cmd("continue", "/continue", "resume this session's interrupted or paused turn", _REPL),
    _cmd("model", "/model [provider:model | auto]", "show or switch the model (auto: the router picks per turn)"),
    _cmd("diff", "/diff", "what this session changed in the folder (edits, writes, commands)"),
    _cmd(
        "trace",
        "/trace [ID]",
        "what the last turn (or trace or operation ID) did: steps, model calls (time, tokens, cost), tools, waits",
    ),
    _cmd("search", "/search WORDS", "find sessions (every folder's) by what was said or what tools returned"),
    _cmd("title", "/title [NEW TITLE]", "show or rename this session"),
    _cmd("delete", "/delete [ID]", "delete this session (or ID) for good, after a yes"),
    _cmd(
        "fork",
        "/fork [N]",
        "a new session holding this one's conversation (before your message N: to ask it differently); this one stays",
    ),
    _cmd("undo", "/undo", "take back the agent's last change to the folder's files (shows the diff, asks first)"),
    _cmd(
        "rewind",
        "/rewind [N]",
        "go back to before your message N: the files, the conversation (a new session; this one stays), or both",
    ),
    _cmd("export", "/export [md|json] [FILE]", "save this session as Markdown (for people) or JSON"),
    _cmd("import", "/import FILE", "a new session from a JSON export (/export json), here or from another machine"),
    _cmd("compact", "/compact [what to keep]", "summarise the conversation so far, to free the model's context"),
    _cmd("cwd", "/cwd [DIR]", "show the session's folder, or start a new session in DIR", _REPL),
    _cmd(
        "tools", "/tools [NAME always|never|inherit]", "list tools and when they ask, or set when one asks", _TERMINAL
    ),
    _cmd("network", "/network on|off", "let shell commands reach the network"),
    _cmd("plan", "/plan [on|off]", "plan mode: only tools that change nothing run; off approves the plan"),
    _cmd("yolo", "/yolo on|off", "approvals and the sandbox off (careful)"),
    _cmd(
        "mcp",
        "/mcp [enable|disable|restart|remove NAME | add NAME -- COMMAND ARGS… | add NAME URL | trust]",
        "MCP servers",
        _REPL,
    ),
    _cmd(
        "memory",
        "/memory [show|edit|forget KEY | profile [set KEY VALUE | forget KEY] | observations [forget ID] | observe]",
        "what the agent remembers: list, read, correct in $EDITOR, forget (user:KEY for your own, across folders); "
        "your profile (in every conversation); observations of past conversations, or observe this one now",
        _REPL,
    ),
    _cmd(
        "capture",
        "/capture [pause [MINUTES] | resume | on|off STREAM | exclude|include app|title PATTERN | retention DAYS]",
        "activity capture: what it records now and with which consent; pause it, change a stream, exclude an app",
        _REPL,
    ),
    _cmd(
        "context",
        "/context [today|yesterday|Nh] [APP] | delete today|yesterday|Nh",
        "what was captured: time per application, focus sessions, windows; or delete a range of it",
        _REPL,
    ),
    _cmd("pin", "/pin [PATH]", "put a file of the folder in every turn's context (no path: what is pinned)", _REPL),
    _cmd("unpin", "/unpin PATH", "take a pinned file out of every turn's context", _REPL),
    _cmd("source", "/source N", "the passage the latest answer's source N is (its Sources: line numbers them)", _REPL),
    _cmd("connect", "/connect PROVIDER [KEY or URL] [--no-verify]", "save a provider's key or a server URL", _REPL),
    _cmd("disconnect", "/disconnect PROVIDER", "forget a saved key and URL", _REPL),
    _cmd("provider", "/provider [ID]", "which providers are connected, and what to do about the others", _REPL),
    _cmd("reasoning", "/reasoning off|minimal|low|medium|high|xhigh|max|default", "how hard the model thinks", _REPL),
    _cmd("usage", "/usage", "tokens and cost: this session, today, this week, this month; budgets"),
    _cmd(
        "budget",
        "/budget [request=0.5 daily=10 weekly=50 monthly=200 warn=0.8 | reset]",
        "spend caps (none: no cap)",
        _REPL,
    ),
    _cmd(
        "retry",
        "/retry",
        "try harder: run the last turn again on the next stronger model (shows the cost first)",
        _REPL,
    ),
    _cmd("automations", "/automations", "saved automations: state, trigger, last and next run", _TERMINAL),
    _cmd(
        "automation",
        "/automation run NAME [--input KEY=VALUE …] | approve|reject|cancel|resume RUN | show|runs|run-info|import|"
        "export|enable|disable|delete …",
        "run an automation and follow it, answer a run that waits for approval, and the rest of `cowork automation`",
        _TERMINAL,
    ),
    _cmd(
        "notifications",
        "/notifications [accept|dismiss|snooze|expand ID]",
        "recent proactive notifications (from automations), or answer one",
        _TERMINAL,
    ),
    _cmd("quit", "/quit", "exit", _TERMINAL),
)

_BY_NAME = {command.name: command for command in SLASH_COMMANDS}


def slash_command(text: str, client: ClientKind) -> tuple[SlashCommand, str] | None:
    """The command `text` names for `client` and the rest of the line; None when it names none (or not for it)."""
    if not text.startswith("/"):
        return None
    name, _, rest = text[1:].partition(" ")
    command = _BY_NAME.get(name.strip().lower())
    if command is None or client not in command.clients:
        return None
    return command, rest.strip()

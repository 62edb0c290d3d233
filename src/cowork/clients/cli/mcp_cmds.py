"""`/mcp`: list MCP servers with their status, enable/disable/restart/remove one, add a stdio or HTTP server,
trust the workspace.

Coded against the JSON of the `mcp/*` methods (docs/protocol.md), so it prints a clean note on a server
that does not offer MCP (`method_not_found`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from cowork.clients.connection import RpcError

if TYPE_CHECKING:
    from .repl import Repl

__all__ = ["MCP_ACTIONS", "MCP_HELP", "STATUS_STYLE", "run_mcp_command"]

MCP_HELP = (
    "/mcp [enable|disable|restart|remove NAME | add NAME -- COMMAND ARGS… | add NAME URL | trust] — MCP servers; "
    "trust: trust this workspace (its stdio MCP servers, and its config from the next server start)"
)
MCP_ACTIONS = ("list", "enable", "disable", "restart", "remove", "add", "trust")
STATUS_STYLE: dict[str, str] = {
    "running": "green",
    "starting": "yellow",
    "stopped": "dim",
    "disabled": "dim",
    "error": "red",
    "auth_required": "magenta",
    "untrusted": "yellow",
}
_USAGE = (
    "Usage: /mcp · /mcp enable|disable|restart|remove NAME · /mcp add NAME -- COMMAND ARGS… · /mcp add NAME URL · "
    "/mcp trust"
)


def _status(server: dict[str, Any]) -> Text:
    status = str(server.get("status", "?"))
    return Text(status, style=STATUS_STYLE.get(status, ""))


def _line(server: dict[str, Any]) -> Text:
    text = Text.assemble((str(server.get("name")), "bold"), ": ", _status(server))
    if server.get("reason"):
        text.append(f" — {server['reason']}", style="dim")
    return text


async def _call(repl: Repl, method: str, params: dict[str, Any]) -> Any:
    """Call an `mcp/*` method; None (after saying why) when the server has no MCP."""
    try:
        return await repl.rpc.call(method, params)
    except RpcError as exc:
        if exc.code == "method_not_found" or exc.rpc_code == -32601:
            repl.console.print(Text(f"This Cowork server does not offer MCP yet ({method} is unknown).", "yellow"))
            return None
        raise


def _add_params(arg: str) -> dict[str, Any] | None:
    name, _, rest = arg.partition(" ")
    rest = rest.strip()
    if not name or not rest:
        return None
    if rest.startswith("--"):
        words = rest[2:].split()
        if not words:
            return None
        return {"name": name, "transport": "stdio", "command": words[0], "args": words[1:]}
    if rest.startswith(("http://", "https://")) and " " not in rest:
        return {"name": name, "transport": "http", "url": rest}
    return None


async def run_mcp_command(repl: Repl, arg: str) -> None:
    action, _, rest = arg.partition(" ")
    action, rest = action or "list", rest.strip()
    if action == "list":
        result = await _call(repl, "mcp/list", {})
        if result is None:
            return
        servers: list[dict[str, Any]] = result.get("servers", [])
        repl.mcp_names = [str(s.get("name")) for s in servers]
        if not servers:
            repl.console.print(Text("No MCP servers. Add one: /mcp add NAME -- COMMAND ARGS…", style="dim"))
            return
        table = Table("server", "status", "transport", "tools", "source", "policy")
        for s in servers:
            status = _status(s)
            if s.get("reason"):
                status.append(f"\n{s['reason']}", style="dim")
            table.add_row(
                str(s.get("name")),
                status,
                str(s.get("transport")),
                str(len(s.get("tools") or [])),
                str(s.get("source", "")),
                str(s.get("policy", "")),
            )
        repl.console.print(table)
        return
    if action in ("enable", "disable", "restart", "remove"):
        if not rest or " " in rest:
            repl.console.print(Text(_USAGE, style="yellow"))
            return
        info = await _call(repl, f"mcp/{action}", {"name": rest})
        if info is None:
            return
        if action == "remove":
            repl.console.print(Text(f"{rest}: removed", style="bold"))
            if rest in repl.mcp_names:
                repl.mcp_names.remove(rest)
        else:
            repl.console.print(_line(info))
        return
    if action == "trust" and not rest:
        await _trust(repl)
        return
    if action == "add":
        params = _add_params(rest)
        if params is None:
            repl.console.print(Text(_USAGE, style="yellow"))
            return
        info = await _call(repl, "mcp/add", params)
        if info is not None:
            repl.mcp_names.append(str(info.get("name")))
            repl.console.print(_line(info))
        return
    repl.console.print(Text(_USAGE, style="yellow"))


async def _trust(repl: Repl) -> None:
    """Trust the session's workspace: the user's own act (the model cannot call `mcp/trust`)."""
    workspace = repl.session.workspace if repl.session is not None else str(repl.options.workspace)
    trusted = await _call(repl, "mcp/trust", {"workspace": workspace})
    if trusted is not None:
        repl.console.print(
            Text(
                f"Trusted {trusted.get('workspace')}: its stdio MCP servers may start now, and its "
                ".cowork/config.toml applies in full from the next server start.",
                style="bold",
            )
        )

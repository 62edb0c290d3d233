"""`/memory`: what the agent remembers — list it, read one, correct one in $EDITOR, forget one; and
`/memory profile`: the user's profile (working memory), in every conversation — show it, set an entry, forget one.

Keys are as `/memory` lists them: `AGENT.md` (the hot cache, in every conversation) or a note of the deep store
(`people/sarah`), the folder's by default; `user:KEY` for the user's own, which follow them across folders. Over
`memory/list|get|update|delete` and `memory/profile*`; the server holds keys to the tools' rules.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import tempfile
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from cowork.clients.format import clean

if TYPE_CHECKING:
    from .repl import Repl

__all__ = ["run_memory_command", "run_pin_command"]

_USAGE = "Usage: /memory · /memory show KEY · /memory edit KEY · /memory forget KEY   (KEY or user:KEY)"
_PROFILE_USAGE = "Usage: /memory profile · /memory profile set KEY VALUE · /memory profile forget KEY"
_OBSERVATIONS_USAGE = "Usage: /memory observations · /memory observations forget ID · /memory observe"


def _ref(repl: Repl, key: str) -> dict[str, Any]:
    scope, _, rest = key.partition(":")
    if rest and scope in ("user", "project"):
        return {"scope": scope, "key": rest, "workspace": str(repl.options.workspace)}
    return {"scope": "project", "key": key, "workspace": str(repl.options.workspace)}


def _shown(memory: dict[str, Any]) -> str:
    return memory["key"] if memory["scope"] == "project" else f"user:{memory['key']}"


async def _list(repl: Repl) -> None:
    memories = (await repl.rpc.call("memory/list", {"workspace": str(repl.options.workspace)}))["memories"]
    if not memories:
        repl.console.print(Text("Nothing remembered yet: the agent writes memories as it learns (memory tool).", "dim"))
        return
    table = Table("key", "lines", "updated", "file")
    for memory in memories:
        when = datetime.fromisoformat(memory["updatedAt"]).astimezone().strftime("%Y-%m-%d %H:%M")
        key = _shown(memory) + (" (every conversation)" if memory["hot"] else "")
        table.add_row(clean(key), str(memory["lines"]), when, clean(memory["path"]))
    repl.console.print(table)


def _edit_in_editor(text: str) -> str | None:
    """The text after the user's $EDITOR (VISUAL, EDITOR, else vi) changed it; None when the editor failed."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory(prefix="cowork-memory-") as folder:
        path = Path(folder) / "memory.md"
        path.write_text(text, encoding="utf-8")
        if subprocess.run([*shlex.split(editor), str(path)], check=False).returncode != 0:
            return None
        return path.read_text(encoding="utf-8")


def _show_profile(repl: Repl, profile: dict[str, Any]) -> None:
    entries = profile["entries"]
    if not entries:
        repl.console.print(
            Text("Your profile is empty: the agent adds what it learns about you (profile tool), or use "
                 "/memory profile set KEY VALUE.", "dim")
        )  # fmt: skip
        return
    table = Table("key", "value", "by", "updated", title="Your profile (in every conversation)")
    for entry in entries:
        when = datetime.fromisoformat(entry["updatedAt"]).astimezone().strftime("%Y-%m-%d %H:%M")
        table.add_row(clean(entry["key"]), clean(entry["value"]), entry["source"], when)
    repl.console.print(table)


async def _profile(repl: Repl, arg: str) -> None:
    action, _, rest = arg.strip().partition(" ")
    key, _, value = rest.strip().partition(" ")
    if not action:
        _show_profile(repl, await repl.rpc.call("memory/profile", {}))
    elif action == "set" and key and value.strip():
        _show_profile(repl, await repl.rpc.call("memory/profile/set", {"key": key, "value": value.strip()}))
    elif action == "forget" and key and not value:
        _show_profile(repl, await repl.rpc.call("memory/profile/delete", {"key": key}))
    else:
        repl.console.print(Text(_PROFILE_USAGE, style="yellow"))


async def _observations(repl: Repl, arg: str) -> None:
    action, _, ident = arg.strip().partition(" ")
    where = {"workspace": str(repl.options.workspace)}
    if not action:
        found = (await repl.rpc.call("memory/observations", where))["observations"]
    elif action == "forget" and ident.strip():
        found = (await repl.rpc.call("memory/observations/delete", {**where, "id": ident.strip()}))["observations"]
        repl.console.print(Text(f"Forgot {clean(ident.strip())}.", style="bold"))
    else:
        repl.console.print(Text(_OBSERVATIONS_USAGE, style="yellow"))
        return
    if not found:
        repl.console.print(
            Text("No observations in this folder yet: conversations are observed once they have rested "
                 "(memory.observe_idle_minutes), or now with /memory observe.", "dim")
        )  # fmt: skip
        return
    for item in found:
        repl.console.print(Text(f"{item['id']} — {item['title']}", style="bold"))
        repl.console.print(Text(clean(item["text"])))


async def _observe(repl: Repl) -> None:
    if repl.session is None:
        repl.console.print(Text("No conversation yet: say something first.", style="yellow"))
        return
    started = await repl.rpc.call("memory/observe", {"sessionId": repl.session.id})
    repl.console.print(
        Text(f"Observing this conversation ({started['operationId']}); /memory observations shows the result.", "dim")
    )


async def run_memory_command(repl: Repl, arg: str) -> None:
    from cowork.clients.connection import RpcError

    action, _, key = arg.strip().partition(" ")
    key = key.strip()
    if not action or action == "list":
        await _list(repl)
        return
    if action == "profile":
        await _profile(repl, key)
        return
    if action == "observations":
        await _observations(repl, key)
        return
    if action == "observe" and not key:
        await _observe(repl)
        return
    if action not in ("show", "edit", "forget") or not key:
        repl.console.print(Text(_USAGE, style="yellow"))
        return
    ref = _ref(repl, key)
    if action == "show":
        got = await repl.rpc.call("memory/get", ref)
        repl.console.print(Text(f"{_shown(got['memory'])} — {got['memory']['path']}", style="bold"))
        repl.console.print(Text(clean(got["content"]) or "(empty)"))
        return
    if action == "forget":
        await repl.rpc.call("memory/get", ref)  # a clear `memory_not_found` before asking
        if (await repl.ask_line(f"Forget {key} for good? [y/N] › ")).strip().lower() not in ("y", "yes"):
            repl.console.print(Text("Nothing was forgotten.", style="dim"))
            return
        gone = await repl.rpc.call("memory/delete", ref)
        repl.console.print(Text(f"Forgot {_shown(gone['deleted'])}.", style="bold"))
        return
    try:
        current = (await repl.rpc.call("memory/get", ref))["content"]
    except RpcError as exc:
        if exc.code != "memory_not_found":
            raise
        current = ""  # a new memory
    edited = await asyncio.to_thread(_edit_in_editor, current)
    if edited is None:
        repl.console.print(Text("The editor failed; nothing was changed.", style="yellow"))
    elif edited == current:
        repl.console.print(Text("Unchanged.", style="dim"))
    else:
        saved = await repl.rpc.call("memory/update", {**ref, "content": edited})
        repl.console.print(Text(f"Saved {_shown(saved)} ({saved['lines']} lines).", style="bold"))


async def run_pin_command(repl: Repl, arg: str, *, pin: bool) -> None:
    """`/pin [PATH]` (no path: the list) and `/unpin PATH`: files of the folder in every turn's context."""
    path = arg.strip()
    where = {"workspace": str(repl.options.workspace)}
    if not path:
        if not pin:
            repl.console.print(Text("Usage: /unpin PATH (/pin lists what is pinned)", style="yellow"))
            return
        result = await repl.rpc.call("memory/pins", where)
    else:
        result = await repl.rpc.call("memory/pin" if pin else "memory/unpin", {**where, "path": path})
        done = "Pinned" if pin else "Unpinned"
        repl.console.print(Text(f"{done} {clean(path)}.", style="bold"))
        if result.get("indexing"):
            repl.console.print(Text("It is not indexed yet: indexing it now (cowork index --status).", style="dim"))
    pins = result["pins"]
    if not pins:
        repl.console.print(Text("Nothing pinned: /pin PATH puts a file in every turn's context.", style="dim"))
        return
    table = Table("pinned file", "passages", "tokens", title="In every turn's context in this folder")
    for item in pins:
        table.add_row(
            clean(item["path"]), str(item["chunks"]) if item["chunks"] else "not indexed yet", str(item["tokens"])
        )
    repl.console.print(table)

"""`/source N`: the passage the latest answer's source N is (its `Sources:` line numbers them), over `memory/passage`.

The numbers come from the session's event log, so they are the ones every client shows, after `cowork --resume` too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from cowork.clients.connection import RpcError
from cowork.clients.format import clean
from cowork.clients.sources import operation_sources, source_label
from cowork.protocol import PassageInfo, PassageParams

from .event_log import session_payloads

if TYPE_CHECKING:
    from .repl import Repl

__all__ = ["run_source_command"]

_USAGE = "Usage: /source N (N as the latest answer's Sources: line numbers it)"
_GONE = (
    "Source [{n}] ({label}) is no longer in the index: its file was indexed again since the answer was given. "
    "Open the file itself, or ask again."
)


async def run_source_command(repl: Repl, arg: str) -> None:
    if not arg.strip().isdecimal():
        repl.console.print(Text(_USAGE, style="yellow"))
        return
    number = int(arg)
    if repl.session is None:
        repl.console.print(Text("No answer yet in this session, so no sources.", style="yellow"))
        return
    sources = operation_sources(await session_payloads(repl.rpc, repl.session.id))
    source = sources.get(number)
    if source is None:
        shown = f"sources 1 to {len(sources)}" if len(sources) > 1 else "source 1" if sources else "no sources"
        repl.console.print(Text(f"No source [{number}]: the latest answer has {shown}.", style="yellow"))
        return
    params = PassageParams(chunk_id=source.citation.chunk_id, session_id=repl.session.id)
    try:
        passage: PassageInfo = await repl.rpc.request("memory/passage", params)
    except RpcError as exc:
        if exc.code != "passage_not_found":
            raise
        label = source_label(source.citation.path, source.citation.heading)
        repl.console.print(Text(_GONE.format(n=number, label=label), style="yellow"))
        return
    where = f"[{number}] {source_label(passage.path, passage.heading, heading_width=200)}"
    repl.console.print(Text(where, style="bold"))
    repl.console.print(Text(clean(passage.text.strip()) or "(empty)"))

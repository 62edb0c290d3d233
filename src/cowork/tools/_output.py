"""Running a tool: the one path every call takes (built-in, plugin or MCP), with the output limit around it.

A result or error longer than the limit (`tools.output_limit_chars`, 30,000 characters by default) is cut to its
head and tail, and the full text is saved under the session's output folder, so the model can `read` it there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from cowork.config._paths import private_dir, write_private

from ._base import Tool, ToolContext, ToolError

__all__ = ["cap_output", "run_tool"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


async def run_tool(tool: Tool[Any], arguments: dict[str, Any], ctx: ToolContext) -> str:
    """Validate the arguments, run the tool and cap what it returns (or the error it raises).

    Raises:
        ToolError: the arguments are invalid or the tool failed; the message is capped like a result.
    """
    limit = ctx.settings.output_limit_chars
    try:
        text = await tool.run(tool.parse(arguments), ctx)
    except ToolError as exc:
        message = str(exc)
        if len(message) <= limit:
            raise
        raise ToolError(await _capped(message, tool, ctx, limit)) from None
    return await _capped(text, tool, ctx, limit) if len(text) > limit else text


async def _capped(text: str, tool: Tool[Any], ctx: ToolContext, limit: int) -> str:
    from ._fsutil import run_blocking

    stem = f"{tool.name}-{ctx.tool_call_id or 'call'}"
    save_dir = ctx.output_dir
    return await run_blocking(lambda: cap_output(text, limit=limit, save_dir=save_dir, stem=stem))


def cap_output(text: str, *, limit: int, save_dir: Path | None, stem: str) -> str:
    """`text` if it fits in `limit` characters; else its first third and last two thirds around a note, with the
    full text saved as `<save_dir>/<stem>.txt` (0600, in a 0700 `save_dir`) and its path in the note.

    Blocking (writes a file): call it off the event loop.
    """
    if len(text) <= limit:
        return text
    saved = _save(text, save_dir, stem)
    head, tail = text[: limit // 3], text[-(limit - limit // 3) :]
    where = (
        f"The full output ({len(text):,} characters) is in {saved}; read it there (read takes an offset)."
        if saved
        else "The full output was not kept."
    )
    return f"{head}\n… [{len(text) - len(head) - len(tail):,} characters cut] …\n{tail}\n{where}"


def _save(text: str, save_dir: Path | None, stem: str) -> Path | None:
    if save_dir is None:
        return None
    # The stem carries a model-chosen call id: keep it to a plain file name in the output folder.
    name = _UNSAFE.sub("_", stem).strip("_")[:120] or "output"
    # A tool's output can hold anything it read (a key in a .env, a private file): the folder is 0700 and the file
    # 0600, whatever the umask.
    private_dir(save_dir)
    path = save_dir / f"{name}.txt"
    write_private(path, text)
    return path

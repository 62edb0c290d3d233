"""MCP servers for tests, built with the SDK's MCPServer (FastMCP): `python -m cowork.testing.mcp_servers <kind>`.

Kinds:
- `normal`: `echo`, `add` (read-only), `env` and `environ` (its environment), `slow` (sleeps until cancelled;
  records the cancellation), `crash` (exits the process), `grow` (adds a tool `extra` and announces the list
  change), `announce` (sends `notifications/resources/updated` for a URI), `pid` (its pid);
- `linger`: like normal, but keeps running after its stdin closes (an orphan when Cowork is killed);
- `silent`: never answers (reads stdin and discards it), for connect timeouts;
- `http <port>`: `normal` over streamable HTTP on 127.0.0.1:<port> at /mcp.
- `sse <port>`: `normal` over the SSE transport on 127.0.0.1:<port> (events at /sse, messages at /messages/).

`COWORK_TEST_MCP_MARKS` names a directory where the server writes files (`started-<pid>`, `cancelled-<text>`)
so a test can observe what happened inside it.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations

__all__ = ["build_server", "main"]


def _mark(name: str) -> None:
    marks = os.environ.get("COWORK_TEST_MCP_MARKS")
    if marks:
        Path(marks).mkdir(parents=True, exist_ok=True)
        (Path(marks) / name).write_text(str(os.getpid()), encoding="utf-8")


def build_server() -> MCPServer:
    server = MCPServer("cowork-test")

    @server.tool(description="Echo the text back.")
    def echo(text: str) -> str:
        return f"echo: {text}"

    @server.tool(description="Add two integers.", annotations=ToolAnnotations(read_only_hint=True))
    def add(a: int, b: int) -> str:
        return str(a + b)

    @server.tool(description="The server's process id.", annotations=ToolAnnotations(read_only_hint=True))
    def pid() -> str:
        return str(os.getpid())

    @server.tool(
        description="An environment variable of the server process.", annotations=ToolAnnotations(read_only_hint=True)
    )
    def env(name: str) -> str:
        return os.environ.get(name, "")

    @server.tool(
        description="The server process's whole environment, one NAME=value a line.",
        annotations=ToolAnnotations(read_only_hint=True),
    )
    def environ() -> str:
        return "\n".join(f"{name}={value}" for name, value in sorted(os.environ.items()))

    @server.tool(description="Wait a long time (until cancelled).")
    async def slow(text: str, seconds: float = 600) -> str:
        _mark(f"slow-started-{text}")
        try:
            await asyncio.sleep(seconds)
        except BaseException:
            _mark(f"cancelled-{text}")
            raise
        return f"slept: {text}"

    @server.tool(description="Exit the server process at once.")
    def crash() -> str:
        os._exit(3)

    @server.tool(description="Add a tool named `extra` and tell the client the tool list changed.")
    async def grow(ctx: Context) -> str:
        def extra(text: str) -> str:
            return f"extra: {text}"

        server.add_tool(extra, name="extra", description="A tool added at run time.")
        await ctx.session.send_tool_list_changed()
        return "grown"

    @server.tool(description="Tell the client a resource changed (`notifications/resources/updated`).")
    async def announce(ctx: Context, uri: str) -> str:
        await ctx.session.send_resource_updated(uri)
        return "announced"

    return server


def _silent() -> None:
    for _line in sys.stdin:
        pass
    time.sleep(3600)


def main(argv: list[str]) -> None:
    kind = argv[0] if argv else "normal"
    _mark(f"started-{os.getpid()}")
    if kind == "silent":
        _silent()
    elif kind == "linger":
        # A non-daemon thread keeps the process alive after the stdio loop ends (its stdin closed).
        threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()
        build_server().run()
    elif kind == "http":
        build_server().run("streamable-http", host="127.0.0.1", port=int(argv[1]), streamable_http_path="/mcp")
    elif kind == "sse":
        build_server().run("sse", host="127.0.0.1", port=int(argv[1]), sse_path="/sse", message_path="/messages/")
    else:
        build_server().run()


if __name__ == "__main__":
    main(sys.argv[1:])

"""Start a server once, shake hands, list its tools, stop it: the install's proof that the server works.

The SDK is imported by the probe itself, so importing this module (the install service does at start-up) does not
load it.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

import anyio

if TYPE_CHECKING:
    import httpx2
    from mcp_types import PaginatedRequestParams

__all__ = ["ProbeFailed", "ServerSpec", "list_tools", "tail"]

TAIL_LINES = 40
TAIL_CHARS = 4000


@dataclass(frozen=True)
class ServerSpec:
    """A server's resolved connection details (secrets filled in; never persisted in this form)."""

    transport: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None


class ProbeFailed(Exception):
    """The server did not start or answer; `stderr_tail` is what it wrote to stderr last."""

    def __init__(self, reason: str, stderr_tail: str | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.stderr_tail = stderr_tail


def tail(text: str) -> str | None:
    """The last lines of `text` (bounded), or None when there is nothing."""
    lines = text.rstrip().splitlines()[-TAIL_LINES:]
    result = "\n".join(lines)[-TAIL_CHARS:]
    return result or None


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@contextlib.asynccontextmanager
async def _streams(spec: ServerSpec, errlog: TextIO, auth: httpx2.Auth | None) -> AsyncIterator[Any]:
    from mcp.client.sse import sse_client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    if spec.transport == "stdio":
        assert spec.command is not None
        params = StdioServerParameters(command=spec.command, args=list(spec.args), env=dict(spec.env), cwd=spec.cwd)
        async with stdio_client(params, errlog=errlog) as streams:
            yield streams
    elif spec.transport == "http":
        assert spec.url is not None
        async with (
            create_mcp_http_client(headers=dict(spec.headers), auth=auth) as client,
            streamable_http_client(spec.url, http_client=client) as streams,
        ):
            yield streams
    else:
        assert spec.url is not None
        async with sse_client(spec.url, headers=dict(spec.headers), auth=auth) as streams:
            yield streams


async def list_tools(spec: ServerSpec, *, within: float, auth: httpx2.Auth | None = None) -> list[str]:
    """Start (or connect to) the server, initialize, and return its tool names; the server is stopped after.

    Raises:
        ProbeFailed: it failed to start, exited, or did not answer within `within` seconds.
    """
    from mcp.client.session import ClientSession

    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:

        def stderr_tail() -> str | None:
            errlog.flush()
            errlog.seek(0)
            return tail(errlog.read())

        try:
            with anyio.fail_after(within):
                async with _streams(spec, errlog, auth) as (read, write), ClientSession(read, write) as session:
                    await session.initialize()
                    names: list[str] = []
                    cursor: str | None = None
                    while True:
                        page = await session.list_tools(params=_page(cursor))
                        names.extend(tool.name for tool in page.tools)
                        cursor = page.next_cursor
                        if not cursor:
                            break
                    return names
        except TimeoutError:
            raise ProbeFailed(f"The server did not answer within {within:g} s.", stderr_tail()) from None
        except Exception as exc:
            raise ProbeFailed(f"The server did not start: {_describe(exc)}", stderr_tail()) from None


def _page(cursor: str | None) -> PaginatedRequestParams | None:
    from mcp_types import PaginatedRequestParams

    return None if cursor is None else PaginatedRequestParams(cursor=cursor)

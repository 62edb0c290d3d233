"""Starting an OAuth sign-in: only a configured HTTP or SSE server can sign in; the refusals are clear."""

from __future__ import annotations

import pytest

from cowork.mcp import start_sign_in
from cowork.protocol import ErrorCode, ProtocolError
from cowork.testing.core import CoreHarness

from .conftest import stdio_server

pytestmark = pytest.mark.anyio


async def test_a_stdio_server_cannot_sign_in(harness: CoreHarness) -> None:
    core = await harness.core("")
    await core.mcp.add(stdio_server("local", enabled=False))

    with pytest.raises(ProtocolError) as refused:
        await start_sign_in(core.mcp, core.mcp_oauth, "local")

    assert (refused.value.code, str(refused.value)) == (
        ErrorCode.INVALID_PARAMS,
        "local is a stdio server; OAuth sign-in is for HTTP and SSE servers.",
    )


async def test_an_unknown_server_is_named(harness: CoreHarness) -> None:
    core = await harness.core("")

    with pytest.raises(ProtocolError) as refused:
        await start_sign_in(core.mcp, core.mcp_oauth, "nowhere")

    assert refused.value.code == ErrorCode.MCP_SERVER_NOT_FOUND

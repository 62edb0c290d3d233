"""The header's health badge: hidden while every subsystem is ready, naming the degraded ones (reasons on hover and
click) as soon as one degrades."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest
from playwright.async_api import BrowserContext, expect

from cowork.sandbox import find_bwrap
from cowork.testing.client import EventClient
from cowork.testing.server import ServerProcess

from .conftest import open_ui

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.slow,
    pytest.mark.skipif(
        find_bwrap() is None or shutil.which("git") is None, reason="needs bubblewrap and git, or it starts degraded"
    ),
]


async def test_a_failing_mcp_server_shows_in_the_header(
    context: BrowserContext, server: ServerProcess, artifacts: Path
) -> None:
    page = await open_ui(context, server)
    badge = page.get_by_test_id("health")
    await expect(badge).to_be_hidden()  # all is well: nothing to say
    client = await EventClient.connect(server.address)
    try:
        await client.call(
            "mcp/add",
            {
                "name": "broken",
                "transport": "stdio",
                "command": sys.executable,
                "args": ["-c", "import sys; sys.exit('no database at /srv/db')"],
            },
        )
    finally:
        await client.close()
    await expect(badge).to_have_text("degraded: mcp")  # refreshed on the server's mcp/status
    await expect(badge).to_have_attribute("title", re.compile(r"^mcp: broken \(error\): .*no database at /srv/db"))
    await badge.click()  # the reasons, for a person who does not hover
    await expect(page.get_by_test_id("toast").filter(has_text="no database at /srv/db")).to_be_visible()
    await page.screenshot(path=str(artifacts / "health.png"))
    assert page.errors == []  # type: ignore[attr-defined]

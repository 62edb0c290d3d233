"""Opening the UI: the printed token is traded for a cookie; without it the page says what to do."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.async_api import BrowserContext, expect

from cowork.protocol import web_url
from cowork.testing.server import ServerProcess

from .conftest import open_ui

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_token_becomes_cookie_and_is_required(
    context: BrowserContext, server: ServerProcess, artifacts: Path
) -> None:
    assert server.url is not None
    page = await context.new_page()
    # No token: the page explains, and the socket is refused.
    await page.goto(server.url + "/")
    await expect(page.get_by_test_id("login")).to_contain_text("Open the link the CLI printed")
    await page.screenshot(path=str(artifacts / "login.png"))
    # A wrong token: refused, and the page says so.
    response = await page.goto(f"{server.url}/?token=wrong")
    assert response is not None and response.status == 401
    await expect(page.get_by_test_id("login")).to_contain_text("not this server's token")
    assert "token" not in page.url
    assert await context.cookies() == []

    page = await open_ui(context, server)
    assert page.url == server.url + "/"  # the token left the address bar
    (cookie,) = await context.cookies()
    assert cookie["value"] == server.token
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Strict", "/")
    assert cookie["name"] == f"cowork_token_{server.port}"
    assert await page.evaluate("document.cookie") == ""  # scripts cannot read it
    assert page.errors == []  # type: ignore[attr-defined]

    # The same link format the docs give; the cookie alone opens /ws but only from the server's own origin.
    assert web_url(server.url, server.token) == f"{server.url}/?token={server.token}"
    assert f"Web UI: {server.url}/?token={server.token}\n" in server.output  # what `cowork serve` prints
    async with httpx.AsyncClient() as http:
        refused = await http.get(server.url + "/auth/check")
        assert refused.status_code == 401
        ok = await http.get(server.url + "/auth/check", headers={"Cookie": f"{cookie['name']}={cookie['value']}"})
        assert ok.json() == {"authorized": True, "auth": True}
        index = await http.get(server.url + "/")
        assert "frame-ancestors 'none'" in index.headers["content-security-policy"]
        static = await http.get(server.url + "/static/js/app.js")
        assert static.status_code == 200 and "javascript" in static.headers["content-type"]

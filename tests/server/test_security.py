"""The server refuses what it must: no token, a wrong token, a foreign Origin, a public bind without a token."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import websockets

from cowork.clients.connection import ServerAddress
from cowork.testing.client import EventClient
from cowork.testing.server import ServerProcess

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("security")
    (root / "ws").mkdir()
    with ServerProcess(root / "home", root / "ws") as proc:
        yield proc


def _rejected(exc: BaseException) -> bool:
    return isinstance(exc, websockets.InvalidStatus) and exc.response.status_code == 403


async def test_websocket_without_token_is_refused(server: ServerProcess) -> None:
    with pytest.raises(websockets.InvalidStatus) as info:
        await EventClient.connect(ServerAddress(server.address.url, None))
    assert _rejected(info.value)


async def test_websocket_with_wrong_token_is_refused(server: ServerProcess) -> None:
    with pytest.raises(websockets.InvalidStatus) as info:
        await EventClient.connect(ServerAddress(server.address.url, "not-the-token"))
    assert _rejected(info.value)


async def test_websocket_from_foreign_origin_is_refused_even_with_token(server: ServerProcess) -> None:
    with pytest.raises(websockets.InvalidStatus) as info:
        await EventClient.connect(server.address, origin="https://evil.example")
    assert _rejected(info.value)
    # The server's own origin (the web UI) is fine.
    port = server.address.url.rsplit(":", 1)[1]
    client = await EventClient.connect(server.address, origin=f"http://127.0.0.1:{port}")
    assert (await client.call("ping"))["pong"] is True
    await client.close()


async def test_token_in_query_string_is_accepted(server: ServerProcess) -> None:
    async with websockets.connect(f"{server.address.ws_url}?token={server.token}") as ws:
        await ws.send('{"jsonrpc":"2.0","id":1,"method":"ping"}')
        assert '"pong":true' in str(await ws.recv())


async def test_http_rpc_requires_token(server: ServerProcess) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx.AsyncClient() as http:
        missing = await http.post(f"{server.address.url}/rpc", json=body)
        wrong = await http.post(f"{server.address.url}/rpc", json=body, headers={"Authorization": "Bearer nope"})
        foreign = await http.post(
            f"{server.address.url}/rpc",
            json=body,
            headers={"Authorization": f"Bearer {server.token}", "Origin": "https://evil.example"},
        )
        ok = await http.post(
            f"{server.address.url}/rpc", json=body, headers={"Authorization": f"Bearer {server.token}"}
        )
    assert missing.status_code == 401 and missing.json()["error"]["data"]["code"] == "unauthorized"
    assert wrong.status_code == 401
    assert foreign.status_code == 403
    assert ok.status_code == 200 and ok.json()["result"]["pong"] is True


def test_token_file_is_private(server: ServerProcess) -> None:
    mode = stat.S_IMODE(os.stat(server.home / "auth" / "token").st_mode)
    assert mode == 0o600
    assert stat.S_IMODE(os.stat(server.home / "server.json").st_mode) == 0o600


def test_public_bind_without_token_refuses_to_start(tmp_path: Path) -> None:
    env = {**os.environ, "COWORK_HOME": str(tmp_path / "home")}
    result = subprocess.run(
        [sys.executable, "-m", "cowork", "serve", "--host", "0.0.0.0", "--port", "0", "--no-auth"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "Refusing to listen on 0.0.0.0 without a token" in result.stderr
    assert not (tmp_path / "home" / "server.json").exists()

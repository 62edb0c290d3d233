"""OAuth against a real authorization server and a protected streamable-HTTP MCP server built with the SDK.

The test plays the browser with httpx: it follows the authorization URL, which redirects to Cowork's loopback
callback.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from cowork.credentials import CredentialStore
from cowork.mcp._oauth import AuthorizationRequired, OAuthManager, client_name, tokens_name
from cowork.protocol import McpAddParams
from cowork.testing.core import CoreHarness
from tests.mcp.conftest import wait_status

pytestmark = pytest.mark.anyio


class MemoryAuthProvider:
    """An authorization server that approves every request at once (the person clicked "Allow")."""

    def __init__(self, token_lifetime: int = 3600) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.token_lifetime = token_lifetime
        self.refreshes = 0
        self.authorizations = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        self.authorizations += 1
        code = secrets.token_urlsafe(16)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["tools"],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    def _issue(self, client_id: str, scopes: list[str]) -> OAuthToken:
        access, refresh = f"at-{secrets.token_hex(8)}", f"rt-{secrets.token_hex(8)}"
        expires = int(time.time()) + self.token_lifetime
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes, expires_at=expires)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        return OAuthToken(
            access_token=access, expires_in=self.token_lifetime, refresh_token=refresh, scope=" ".join(scopes)
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[code.code]
        assert client.client_id is not None
        return self._issue(client.client_id, code.scopes)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refreshes += 1
        del self.refresh[refresh_token.token]
        assert client.client_id is not None
        return self._issue(client.client_id, scopes or refresh_token.scopes)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def expire_access_tokens(self) -> None:
        for token in self.access.values():
            token.expires_at = int(time.time()) - 10


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class ProtectedServer:
    """Authorization server and protected MCP server in one app, served by uvicorn on a thread."""

    def __init__(self) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/mcp"
        self.provider = MemoryAuthProvider()
        server = MCPServer(
            "secure",
            auth_server_provider=self.provider,  # type: ignore[arg-type]
            auth=AuthSettings(
                issuer_url=self.base,
                resource_server_url=self.url,
                validate_token_resource=False,
                client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["tools"]),
                required_scopes=["tools"],
            ),
        )

        @server.tool()
        def whisper(text: str) -> str:
            """Say something quietly."""
            return text.lower()

        app = server.streamable_http_app(host="127.0.0.1")
        self._server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> ProtectedServer:
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            assert time.monotonic() < deadline, "test MCP server did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(10)


@pytest.fixture
def protected() -> Iterator[ProtectedServer]:
    with ProtectedServer() as server:
        yield server


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[tuple[OAuthManager, CredentialStore, list[str]]]:
    store = CredentialStore(tmp_path / "home", backend="file")
    authorized: list[str] = []

    async def on_authorized(name: str) -> None:
        authorized.append(name)

    found = OAuthManager(store, on_authorized=on_authorized, authorize_timeout=30)
    yield found, store, authorized
    await found.aclose()


async def call_whisper(manager: OAuthManager, url: str) -> str:
    """Connect as the hypervisor would (a fresh auth per connection) and call the protected tool."""
    async with (
        create_mcp_http_client(auth=manager.auth_provider("secure", url)) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool("whisper", {"text": "HELLO"})
        block = result.content[0]
        assert block.type == "text"
        return block.text


async def play_browser(authorization_url: str) -> httpx.Response:
    async with httpx.AsyncClient(follow_redirects=True, timeout=20) as browser:
        return await browser.get(authorization_url)


async def test_sign_in_call_expire_refresh(
    protected: ProtectedServer, manager: tuple[OAuthManager, CredentialStore, list[str]]
) -> None:
    oauth, store, authorized = manager
    # Before signing in, the hypervisor's auth refuses to wait for a person.
    with pytest.raises(Exception) as refused:
        await call_whisper(oauth, protected.url)
    assert _contains(refused.value, AuthorizationRequired)

    url = await oauth.start("secure", protected.url)
    assert url.startswith(f"{protected.base}/authorize?")
    assert "code_challenge_method=S256" in url and "redirect_uri=http%3A%2F%2F127.0.0.1%3A" in url
    page = await play_browser(url)
    assert page.status_code == 200 and "Signed in" in page.text
    assert page.url.host == "127.0.0.1" and page.url.path == "/callback"
    await oauth.wait("secure")
    assert authorized == ["secure"]
    assert sorted(store.names()) == [client_name("secure"), tokens_name("secure")]
    first = json.loads(store.get(tokens_name("secure")) or "{}")
    assert first["token"]["access_token"] in protected.provider.access

    assert await call_whisper(oauth, protected.url) == "hello"
    assert protected.provider.refreshes == 0

    # The access token expires (on both sides): the next connection refreshes it instead of asking a person.
    protected.provider.expire_access_tokens()
    store.set(tokens_name("secure"), json.dumps(first | {"expiresAt": time.time() - 5}))
    assert await call_whisper(oauth, protected.url) == "hello"
    assert protected.provider.refreshes == 1
    assert protected.provider.authorizations == 1
    second = json.loads(store.get(tokens_name("secure")) or "{}")
    assert second["token"]["access_token"] != first["token"]["access_token"]
    assert second["expiresAt"] > time.time()

    # Once the refresh token is gone too, a person must sign in again.
    protected.provider.expire_access_tokens()
    protected.provider.refresh.clear()
    store.set(tokens_name("secure"), json.dumps(second | {"expiresAt": time.time() - 5}))
    with pytest.raises(Exception) as again:
        await call_whisper(oauth, protected.url)
    assert _contains(again.value, AuthorizationRequired)


async def test_a_refused_sign_in_reports_it(
    protected: ProtectedServer, manager: tuple[OAuthManager, CredentialStore, list[str]]
) -> None:
    oauth, store, authorized = manager
    url = await oauth.start("secure", protected.url)
    redirect = url.split("redirect_uri=", 1)[1].split("&", 1)[0]
    from urllib.parse import unquote

    async with httpx.AsyncClient() as browser:
        answer = await browser.get(unquote(redirect), params={"error": "access_denied"})
    assert answer.status_code == 400
    with pytest.raises(Exception) as failed:
        await asyncio.wait_for(oauth.wait("secure"), 30)
    assert "access_denied" in str(failed.value)
    assert authorized == []
    assert tokens_name("secure") not in store.names()


def _contains(exc: BaseException, kind: type[BaseException]) -> bool:
    if isinstance(exc, kind):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return any(_contains(e, kind) for e in exc.exceptions)
    return any(_contains(e, kind) for e in (exc.__cause__, exc.__context__) if e is not None)


async def test_the_hypervisor_shows_auth_required_until_sign_in_then_runs(
    protected: ProtectedServer, harness: CoreHarness
) -> None:
    core = await harness.core(env={"COWORK_MCP__CONNECT_TIMEOUT_SECONDS": "15"})
    params = {"name": "secure", "transport": "http", "url": protected.url, "policy": "auto-run"}
    await core.mcp.add(McpAddParams.model_validate(params))
    info = await wait_status(core, "secure", "auth_required", "error")
    assert info.status == "auth_required", info
    assert info.reason is not None and "mcp/auth/start" in info.reason

    url = await core.mcp_oauth.start("secure", protected.url)
    page = await play_browser(url)
    assert page.status_code == 200
    await core.mcp_oauth.wait("secure")
    await wait_status(core, "secure", "running")
    result = await core.mcp.call_tool("secure", "whisper", {"text": "QUIET"})
    assert result.content[0].text == "quiet"  # type: ignore[union-attr]
    assert tokens_name("secure") in core.credentials.names()

"""OAuth (authorization code + PKCE) for HTTP MCP servers, on the SDK's `OAuthClientProvider`.

Tokens and the registered client live in the credential store (`mcp-oauth/<server>/tokens`, `.../client`), never
in the database. The hypervisor gets an `httpx2.Auth` per server from `OAuthManager.auth_provider`: it sends the
stored token, refreshes it when it has expired, and raises `AuthorizationRequired` instead of waiting for a person
when there is no usable token (the server is then `auth_required`). `OAuthManager.start` runs the interactive
sign-in: it returns the authorization URL for the client to open (the CLI prints it, the web UI opens it), and a
loopback HTTP server on 127.0.0.1 receives the code.

The SDK is imported where it is used (the provider subclass lives in `_oauth_provider`): a server with no HTTP MCP
server to sign in to never loads it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import anyio.to_thread

from cowork.credentials import CredentialStore

from .install._probe import ProbeFailed, ServerSpec, list_tools

if TYPE_CHECKING:
    import httpx2
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

__all__ = [
    "AuthorizationRequired",
    "CredentialTokenStorage",
    "LoopbackCallback",
    "OAuthManager",
    "client_name",
    "tokens_name",
]

log = logging.getLogger(__name__)

_PLACEHOLDER_REDIRECT = "http://127.0.0.1/callback"
_DONE_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>Cowork</title>"
    b"<p>Signed in. You can close this window and return to Cowork.</p>"
)


def tokens_name(server: str) -> str:
    return f"mcp-oauth/{server}/tokens"


def client_name(server: str) -> str:
    return f"mcp-oauth/{server}/client"


class AuthorizationRequired(Exception):
    """The server needs a person to sign in (no token, or its refresh failed): run `mcp/auth/start`."""

    def __init__(self, server: str) -> None:
        super().__init__(f"{server} needs you to sign in (mcp/auth/start).")
        self.server = server


class CredentialTokenStorage:
    """The SDK's token storage (its `TokenStorage` protocol), kept in the credential store. Remembers when the access token expires, so a
    restarted Cowork refreshes it instead of sending a dead one."""

    def __init__(self, credentials: CredentialStore, server: str) -> None:
        self._credentials = credentials
        self.server = server
        self.expires_at: float | None = None

    async def _get(self, name: str) -> Any | None:
        text = await anyio.to_thread.run_sync(self._credentials.get, name)
        if text is None:
            return None
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            log.warning("ignoring unreadable %s", name)
            return None

    async def _set(self, name: str, value: Any) -> None:
        await anyio.to_thread.run_sync(self._credentials.set, name, json.dumps(value))

    async def get_tokens(self) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken

        stored = await self._get(tokens_name(self.server))
        if not isinstance(stored, dict) or "token" not in stored:
            return None
        self.expires_at = stored.get("expiresAt")
        return OAuthToken.model_validate(stored["token"])

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.expires_at = time.time() + tokens.expires_in if tokens.expires_in else None
        await self._set(
            tokens_name(self.server), {"token": tokens.model_dump(mode="json"), "expiresAt": self.expires_at}
        )

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull

        stored = await self._get(client_name(self.server))
        return OAuthClientInformationFull.model_validate(stored) if isinstance(stored, dict) else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await self._set(client_name(self.server), client_info.model_dump(mode="json", exclude_none=True))

    async def clear(self, *, tokens: bool = True, client: bool = True) -> None:
        names = [tokens_name(self.server)] * tokens + [client_name(self.server)] * client
        for name in names:
            await anyio.to_thread.run_sync(self._credentials.delete, name)
        if tokens:
            self.expires_at = None


class LoopbackCallback:
    """A one-shot HTTP server on 127.0.0.1 (random port) that receives the authorization redirect."""

    def __init__(self) -> None:
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None
        self.port = 0

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    async def start(self) -> None:
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def wait(self, within: float) -> AuthorizationCodeResult:
        """The code the browser brought back. Raises TimeoutError, or RuntimeError when sign-in was refused."""
        assert self._result is not None, "start() first"
        return await asyncio.wait_for(asyncio.shield(self._result), within)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        from mcp.shared.auth import AuthorizationCodeResult

        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            target = head.split(b"\r\n", 1)[0].split(b" ")[1].decode("ascii", "replace")
            parts = urlsplit(target)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            if parts.path != "/callback" or self._result is None:
                status, body = b"404 Not Found", b"not found"
            elif "error" in query:
                status, body = b"400 Bad Request", b"Sign-in was refused: " + query["error"].encode()[:200]
                if not self._result.done():
                    self._result.set_exception(
                        RuntimeError(f"sign-in refused: {query['error']} {query.get('error_description', '')}".strip())
                    )
            elif "code" in query:
                status, body = b"200 OK", _DONE_PAGE
                if not self._result.done():
                    self._result.set_result(
                        AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))
                    )
            else:
                status, body = b"400 Bad Request", b"missing code"
            writer.write(
                b"HTTP/1.1 " + status + b"\r\nContent-Type: text/html; charset=utf-8\r\nConnection: close\r\n"
                b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
            )
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, IndexError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()


class _Flow:
    def __init__(self, task: asyncio.Task[None], url: str) -> None:
        self.task = task
        self.url = url


class OAuthManager:
    """OAuth for every HTTP MCP server of one Cowork home."""

    def __init__(
        self,
        credentials: CredentialStore,
        *,
        scope: str | None = None,
        authorize_timeout: float = 300.0,
        on_authorized: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        """Args:
        credentials: where tokens and the registered client are kept.
        scope: the scopes to ask for (None: the server's defaults).
        authorize_timeout: seconds a person has to finish signing in.
        on_authorized: called with the server's name once sign-in stored tokens (the hypervisor reconnects).
        """
        self._credentials = credentials
        self._scope = scope
        self._timeout = authorize_timeout
        self._on_authorized = on_authorized
        self._flows: dict[str, _Flow] = {}

    def _metadata(self, redirect_uri: str) -> OAuthClientMetadata:
        from mcp.shared.auth import OAuthClientMetadata
        from pydantic import AnyUrl

        return OAuthClientMetadata(
            client_name="Cowork",
            redirect_uris=[AnyUrl(redirect_uri)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=self._scope,
        )

    def auth_provider(self, server: str, url: str) -> httpx2.Auth:
        """The auth the hypervisor connects with: stored tokens, refreshed on expiry; never waits for a person."""
        from ._oauth_provider import StoredExpiryProvider

        async def needs_person(_authorization_url: str) -> None:
            raise AuthorizationRequired(server)

        async def no_callback() -> AuthorizationCodeResult:
            raise AuthorizationRequired(server)

        return StoredExpiryProvider(
            server_url=url,
            client_metadata=self._metadata(_PLACEHOLDER_REDIRECT),
            token_storage=CredentialTokenStorage(self._credentials, server),
            redirect_handler=needs_person,
            callback_handler=no_callback,
        )

    async def has_tokens(self, server: str) -> bool:
        return await anyio.to_thread.run_sync(self._credentials.get, tokens_name(server)) is not None

    async def start(self, server: str, url: str, *, transport: str = "http") -> str:
        """Begin signing in: returns the authorization URL; the sign-in finishes in the background when the
        browser comes back to the loopback callback (see `wait`). Any earlier tokens are replaced.

        Raises:
            ProbeFailed: the server could not be reached or its authorization server failed before a URL.
        """
        from ._oauth_provider import StoredExpiryProvider

        previous = self._flows.pop(server, None)
        if previous is not None:
            previous.task.cancel()
            with contextlib.suppress(BaseException):
                await previous.task
        storage = CredentialTokenStorage(self._credentials, server)
        # The registration names the redirect URI, whose port is new each time: register again.
        await storage.clear()
        callback = LoopbackCallback()
        await callback.start()
        loop = asyncio.get_running_loop()
        authorization: asyncio.Future[str] = loop.create_future()

        async def redirect(authorization_url: str) -> None:
            if not authorization.done():
                authorization.set_result(authorization_url)

        async def code() -> AuthorizationCodeResult:
            return await callback.wait(self._timeout)

        provider = StoredExpiryProvider(
            server_url=url,
            client_metadata=self._metadata(callback.redirect_uri),
            token_storage=storage,
            redirect_handler=redirect,
            callback_handler=code,
        )

        async def flow() -> None:
            try:
                await list_tools(ServerSpec(transport, url=url), within=self._timeout + 30, auth=provider)
            finally:
                await callback.close()
            if self._on_authorized is not None:
                await self._on_authorized(server)

        task = asyncio.create_task(flow(), name=f"mcp-oauth-{server}")
        pending: list[asyncio.Future[Any]] = [task, authorization]
        await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        if not authorization.done():
            authorization.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task  # raises what went wrong
            raise ProbeFailed(f"{server} did not ask for sign-in.", None)
        self._flows[server] = _Flow(task, authorization.result())
        return authorization.result()

    async def wait(self, server: str) -> None:
        """Wait for the sign-in `start` began to finish. Raises ProbeFailed when it failed."""
        flow = self._flows.get(server)
        if flow is None:
            raise LookupError(f"no sign-in in progress for {server}")
        try:
            await asyncio.shield(flow.task)
        finally:
            if flow.task.done() and self._flows.get(server) is flow:
                del self._flows[server]

    async def forget(self, server: str) -> None:
        """Delete the server's tokens and client registration."""
        await CredentialTokenStorage(self._credentials, server).clear()

    async def aclose(self) -> None:
        flows, self._flows = list(self._flows.values()), {}
        for flow in flows:
            flow.task.cancel()
        for flow in flows:
            with contextlib.suppress(BaseException):
                await flow.task

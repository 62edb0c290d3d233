"""The SDK's OAuth provider, remembering when the stored access token expires (`_oauth` imports it on first use)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from ._oauth import CredentialTokenStorage

__all__ = ["StoredExpiryProvider"]


class StoredExpiryProvider(OAuthClientProvider):
    """The SDK provider, plus the stored expiry: the SDK restores tokens without it and would treat an old access
    token as valid until the server refuses it, and a refusal sends it down the full sign-in, not a refresh."""

    def __init__(
        self,
        server_url: str,
        client_metadata: OAuthClientMetadata,
        token_storage: CredentialTokenStorage,
        redirect_handler: Callable[[str], Awaitable[None]],
        callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]],
    ) -> None:
        super().__init__(
            server_url,
            client_metadata,
            token_storage,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
        )
        self._token_storage = token_storage

    async def _initialize(self) -> None:
        await super()._initialize()
        self.context.token_expiry_time = self._token_storage.expires_at

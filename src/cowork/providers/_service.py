"""The provider service: saved connections (keys in the credential store, base URLs in the settings table),
provider status, what local servers serve, and whether the local model can take a turn."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypeVar, cast

import psutil

from cowork.config import CoworkConfig
from cowork.credentials import CredentialError, CredentialStore
from cowork.models import ModelSelector, ProviderPreset
from cowork.protocol import (
    ErrorCode,
    ErrorSource,
    PreflightInfo,
    ProtocolError,
    ProviderConnectParams,
    ProviderDisconnectResult,
    ProviderStatusInfo,
    ProviderStatusResult,
)
from cowork.store import Connection, Database, repos

from ._preflight import preflight_ollama, same_model
from ._probe import ProbeResult, native_ollama_url, probe

if TYPE_CHECKING:
    import httpx

__all__ = ["LocalState", "ProviderService"]

_KEY_PREFIX = "provider/"
_BASE_URL_SETTING = "provider.{}.base_url"
_CACHE_SECONDS = 30.0
_NOT_CHECKED = ("missing_key", "unchecked")
T = TypeVar("T")


@dataclass(frozen=True)
class LocalState:
    """Whether the local tier can take a turn: off with a note (unreachable, RED), or on with a warning (YELLOW)."""

    available: bool
    note: str | None = None
    warning: str | None = None


class ProviderService:
    """Connect, disconnect, status, local discovery and preflight. The selector holds what is in force."""

    def __init__(
        self,
        selector: ModelSelector,
        credentials: CredentialStore,
        db: Database,
        config: CoworkConfig,
        *,
        total_memory: Callable[[], int] = lambda: int(psutil.virtual_memory().total),
    ) -> None:
        self._selector = selector
        self._credentials = credentials
        self._db = db
        self._config = config
        self._total_memory = total_memory
        self._clients: dict[bool, httpx.AsyncClient] = {}
        """Made on the first probe (httpx and a TLS context cost start-up time), by whether they reach local servers."""
        self._cache: dict[tuple[str, ...], tuple[float, object]] = {}

    async def load(self) -> None:
        """Put saved keys and base URLs in force."""

        def read_keys() -> dict[str, str]:
            keys = {}
            for name in self._credentials.names():
                if name.startswith(_KEY_PREFIX):
                    secret = self._credentials.get(name)
                    if secret:
                        keys[name.removeprefix(_KEY_PREFIX)] = secret
            return keys

        keys = await asyncio.to_thread(read_keys)
        urls = await self._db.read(lambda conn: repos.settings.all_values(conn, prefix="provider."))
        for provider, key in keys.items():
            self._selector.set_stored_key(provider, key)
        for setting, url in urls.items():
            provider = setting.removeprefix("provider.").removesuffix(".base_url")
            if isinstance(url, str):
                self._selector.set_stored_base_url(provider, url)

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()

    def _http(self, *, local: bool) -> httpx.AsyncClient:
        client = self._clients.get(local)
        if client is None:
            import httpx

            # Local servers are reached directly; cloud providers the way the SDKs reach them (proxies honoured).
            client = self._clients[local] = httpx.AsyncClient(trust_env=not local)
        return client

    @property
    def credential_location(self) -> str:
        return self._credentials.info.location

    # -- connect ------------------------------------------------------------------------------------------------

    async def connect(self, params: ProviderConnectParams) -> ProviderStatusInfo:
        """Save a key and/or base URL, after checking them (unless `verify` is false). Nothing is saved on failure.

        Raises:
            ProtocolError: `unknown_provider`; `invalid_params` with neither key nor URL; `auth_failed`,
                `provider_unavailable` or `provider_error` when the check fails; `credentials_error`.
        """
        preset = self._selector.preset(params.provider)
        if params.api_key is None and params.base_url is None:
            hint = "a baseUrl" if not preset.requires_key else "an apiKey (or a baseUrl)"
            raise ProtocolError(
                ErrorCode.INVALID_PARAMS,
                f"Connecting {preset.name} needs {hint}.",
                source=ErrorSource.PROTOCOL,
            )
        key = params.api_key or self._selector.api_key(preset)
        base_url = params.base_url or self._selector.base_url(preset)
        result: ProbeResult | None = None
        if params.verify:
            if base_url is None:
                raise ProtocolError(
                    ErrorCode.INVALID_PARAMS, f"{preset.name} needs a baseUrl.", source=ErrorSource.PROTOCOL
                )
            result = await self._probe(preset, base_url, key)
            failure = {
                "auth_failed": ErrorCode.AUTH_FAILED,
                "unreachable": ErrorCode.PROVIDER_UNAVAILABLE,
                "error": ErrorCode.PROVIDER_ERROR,
            }.get(result.state)
            if failure is not None:
                skip = " Nothing was saved; to save it anyway, connect with verify off (--no-verify)."
                raise ProtocolError(failure, result.message + skip, source=ErrorSource.PROVIDER)
        if params.api_key is not None:
            secret = params.api_key
            try:
                await asyncio.to_thread(self._credentials.set, _KEY_PREFIX + preset.id, secret)
            except (CredentialError, ValueError) as exc:
                raise ProtocolError(ErrorCode.CREDENTIALS_ERROR, str(exc), source=ErrorSource.SERVER) from exc
            self._selector.set_stored_key(preset.id, secret)
        if params.base_url is not None:
            url, now = params.base_url.rstrip("/"), datetime.now(UTC)
            await self._db.write(
                lambda conn: repos.settings.put(conn, _BASE_URL_SETTING.format(preset.id), url, now=now)
            )
            self._selector.set_stored_base_url(preset.id, url)
        self._cache.clear()
        return self._info(preset, result)

    async def disconnect(self, provider: str) -> ProviderDisconnectResult:
        """Raises: ProtocolError `unknown_provider`, `credentials_error`."""
        preset = self._selector.preset(provider)
        try:
            removed_key = await asyncio.to_thread(self._credentials.delete, _KEY_PREFIX + preset.id)
        except CredentialError as exc:
            raise ProtocolError(ErrorCode.CREDENTIALS_ERROR, str(exc), source=ErrorSource.SERVER) from exc

        def forget(conn: Connection) -> bool:
            return repos.settings.delete(conn, _BASE_URL_SETTING.format(preset.id))

        removed_url = await self._db.write(forget)
        self._selector.set_stored_key(preset.id, None)
        self._selector.set_stored_base_url(preset.id, None)
        self._cache.clear()
        return ProviderDisconnectResult(provider=preset.id, removed_key=removed_key, removed_base_url=removed_url)

    # -- status -------------------------------------------------------------------------------------------------

    async def status(self, provider: str | None = None, *, check: bool = True) -> ProviderStatusResult:
        """Raises: ProtocolError `unknown_provider`."""
        chosen = [self._selector.preset(provider)] if provider else list(self._selector.presets.values())
        infos = await asyncio.gather(*(self._status_of(p, check) for p in chosen))
        return ProviderStatusResult(providers=list(infos), credential_store=self.credential_location)

    async def _status_of(self, preset: ProviderPreset, check: bool) -> ProviderStatusInfo:
        if not self._selector.is_configured(preset):
            return self._info(preset, ProbeResult("missing_key", self._selector.missing_key_message(preset)))
        base_url = self._selector.base_url(preset)
        if not check or base_url is None:
            has = "has a key" if self._selector.api_key(preset) else "is set up"
            return self._info(preset, ProbeResult("unchecked", f"{preset.name} {has}; not checked."))
        result = await self._probe(preset, base_url, self._selector.api_key(preset))
        preflight: list[PreflightInfo] = []
        if preset.probe == "ollama" and result.state == "connected" and self._config.local_models.preflight:
            for model in self._local_models_in_use(preset, result.models):
                preflight.append(await self.preflight(preset, model))
        return self._info(preset, result, preflight)

    def _local_models_in_use(self, preset: ProviderPreset, served: list[str]) -> list[str]:
        wanted = []
        local = self._config.router.local
        if local and local.startswith(f"{preset.id}:"):
            wanted.append(local.removeprefix(f"{preset.id}:"))
        default = self._selector.default_model(preset.id)
        if default and default not in wanted:
            wanted.append(default)
        return wanted or served[:1]

    def _info(
        self, preset: ProviderPreset, result: ProbeResult | None, preflight: list[PreflightInfo] | None = None
    ) -> ProviderStatusInfo:
        state = result.state if result is not None else "unchecked"
        message = result.message if result is not None else f"{preset.name} is saved; not checked."
        return ProviderStatusInfo(
            id=preset.id,
            name=preset.name,
            state=state,
            message=message,
            local=preset.local,
            key_source=self._selector.key_source(preset),
            key_env=list(self._selector.key_env(preset)),
            base_url=self._selector.base_url(preset),
            models=result.models if result is not None and preset.local else [],
            preflight=preflight or [],
            latency_ms=round(result.latency_ms, 1) if result is not None and result.latency_ms is not None else None,
            checked_at=datetime.now(UTC) if result is not None and result.state not in _NOT_CHECKED else None,
        )

    async def _probe(self, preset: ProviderPreset, base_url: str, api_key: str | None) -> ProbeResult:
        client = self._http(local=preset.local)
        wait = self._config.local_models.probe_timeout_seconds if preset.local else 10.0
        return await probe(client, preset, base_url, api_key, wait_seconds=wait)

    # -- local servers ------------------------------------------------------------------------------------------

    async def _cached(self, key: tuple[str, ...], refresh: bool, make: Callable[[], Awaitable[T]]) -> T:
        hit = self._cache.get(key)
        if hit is not None and not refresh and time.monotonic() - hit[0] < _CACHE_SECONDS:
            return cast(T, hit[1])
        value = await make()
        self._cache[key] = (time.monotonic(), value)
        return value

    def own_server(self, preset: ProviderPreset) -> bool:
        """A local server, or a provider given a base URL of its own: it decides which models exist."""
        return preset.local or self._selector.base_url(preset) != preset.base_url

    async def served_default(self, provider: str, model: str, *, wait: float | None = None) -> str | None:
        """The model to use instead of `model`, the catalog's default for `provider`, when the provider is a server
        of one's own that answers and does not serve it: the first model it serves. None: keep `model` (also when
        the user's configuration names it, or the server cannot be asked, or did not answer within `wait` seconds;
        the question then goes on, and its answer is cached for the next caller)."""
        preset = self._selector.presets.get(provider)
        if preset is None or not self.own_server(preset) or self._selector.model_is_configured(provider):
            return None
        asking = asyncio.ensure_future(self.served_models(preset))
        try:
            served = await asyncio.wait_for(asyncio.shield(asking), wait)
        except TimeoutError:
            return None
        if served.state != "connected" or not served.models:
            return None
        if any(same_model(name, model) for name in served.models):
            return None
        return served.models[0]

    async def served_models(self, preset: ProviderPreset, *, refresh: bool = False) -> ProbeResult:
        """What a local server says it serves (cached for 30 s)."""
        base_url = self._selector.base_url(preset) or ""

        async def ask() -> ProbeResult:
            return await self._probe(preset, base_url, self._selector.api_key(preset))

        return await self._cached(("served", preset.id, base_url), refresh, ask)

    async def preflight(self, preset: ProviderPreset, model: str, *, refresh: bool = False) -> PreflightInfo:
        """Does an Ollama model fit in memory? (cached for 30 s)."""
        settings = self._config.local_models
        root = native_ollama_url(self._selector.base_url(preset) or "")

        async def check() -> PreflightInfo:
            return await preflight_ollama(
                self._http(local=True),
                root,
                model,
                context_tokens=settings.context_tokens,
                total_memory=self._total_memory(),
                reserve_bytes=int(settings.reserve_gb * 1024**3),
                wait_seconds=settings.probe_timeout_seconds,
            )

        return await self._cached(("preflight", preset.id, root, model), refresh, check)

    async def local_state(self, provider: str, model: str) -> LocalState:
        """Can the local tier take this turn? Unreachable or RED: no, with a note; YELLOW: yes, with a warning."""
        preset = self._selector.presets.get(provider)
        if preset is None:
            return LocalState(False, f"unknown local provider {provider!r}")
        served = await self.served_models(preset)
        if served.state != "connected":
            return LocalState(False, served.message)
        if preset.probe != "ollama":
            return LocalState(True)
        if not any(same_model(name, model) for name in served.models):
            # Ollama answers a model it has not pulled with a 404, so the turn would fail there.
            return LocalState(False, f"Ollama has no model {model!r}; pull it with `ollama pull {model}`")
        if not self._config.local_models.preflight:
            return LocalState(True)
        check = await self.preflight(preset, model)
        if check.verdict == "red":
            return LocalState(False, check.message)
        if check.verdict == "yellow":
            return LocalState(True, warning=check.message)
        return LocalState(True)

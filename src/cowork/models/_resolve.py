"""Which provider and model a turn uses, and where its key and base URL come from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from cowork.config import CoworkConfig
from cowork.protocol import ErrorCode, ErrorSource, ProtocolError

from ._catalog import Family, ProviderPreset, presets

__all__ = ["KeySource", "ModelSelector", "ModelTarget", "connect_hint", "no_provider_message"]

KeySource = Literal["store", "env", "none", "not_needed"]


@dataclass(frozen=True)
class ModelTarget:
    """Everything needed to talk to one model."""

    provider: str
    model: str
    family: Family
    base_url: str | None
    api_key: str | None
    profile: str | None = None
    """pydantic-ai's provider whose model profiles fit (OpenAI-compatible providers)."""
    local: bool = False


def connect_hint(provider: str = "PROVIDER") -> str:
    """Where a person connects a provider, in every client's words (only the REPL has `/connect`)."""
    return f"/connect {provider} in the REPL, Models → Connect in the web UI"


def no_provider_message() -> str:
    return (
        f"No model provider is connected. Connect one ({connect_hint()}), or set one of "
        "OPENAI_API_KEY, ANTHROPIC_API_KEY or GOOGLE_API_KEY; or OPENAI_BASE_URL for an OpenAI-compatible server "
        "(Ollama, LM Studio, vLLM, llama.cpp, OpenRouter); or choose a local provider in ~/.cowork/config.toml "
        '(for example `provider = "ollama"`) or with COWORK_PROVIDER. Then start a new turn.'
    )


class ModelSelector:
    """Resolves provider and model from a session's choice, the configuration, saved credentials and the environment.

    Keys saved with `provider/connect` (the credential store) win over environment variables: connecting is the
    newer, explicit choice. Base URLs saved the same way win over configuration and environment.
    """

    def __init__(
        self,
        config: CoworkConfig,
        env: Mapping[str, str],
        *,
        stored_keys: Mapping[str, str] | None = None,
        stored_base_urls: Mapping[str, str] | None = None,
    ) -> None:
        self._config = config
        self._env = env
        self._stored_keys: dict[str, str] = dict(stored_keys or {})
        self._stored_base_urls: dict[str, str] = dict(stored_base_urls or {})

    @property
    def presets(self) -> dict[str, ProviderPreset]:
        return presets()

    @property
    def config(self) -> CoworkConfig:
        return self._config

    # -- saved connections (kept in memory; the credential store and the settings table are the record) --------

    def set_stored_key(self, provider: str, key: str | None) -> None:
        if key is None:
            self._stored_keys.pop(provider, None)
        else:
            self._stored_keys[provider] = key

    def set_stored_base_url(self, provider: str, url: str | None) -> None:
        if url is None:
            self._stored_base_urls.pop(provider, None)
        else:
            self._stored_base_urls[provider] = url

    def stored_base_url(self, provider: str) -> str | None:
        return self._stored_base_urls.get(provider)

    # -- lookups ----------------------------------------------------------------------------------------------

    def _first_env(self, names: tuple[str, ...] | list[str]) -> str | None:
        for name in names:
            if self._env.get(name):
                return self._env[name]
        return None

    def key_env(self, preset: ProviderPreset) -> tuple[str, ...]:
        override = self._config.providers.get(preset.id)
        if override is not None and override.api_key_env:
            return (override.api_key_env, *preset.key_env)
        return preset.key_env

    def api_key(self, preset: ProviderPreset) -> str | None:
        return self._stored_keys.get(preset.id) or self._first_env(self.key_env(preset))

    def key_source(self, preset: ProviderPreset) -> KeySource:
        if preset.id in self._stored_keys:
            return "store"
        if self._first_env(self.key_env(preset)):
            return "env"
        return "not_needed" if not preset.requires_key else "none"

    def _custom_base_url(self, preset: ProviderPreset) -> str | None:
        """A base URL the user chose (saved, configured or in the environment), not the preset's default."""
        override = self._config.providers.get(preset.id)
        return (
            self._stored_base_urls.get(preset.id)
            or (override.base_url if override is not None else None)
            or self._first_env(preset.base_url_env)
        )

    def base_url(self, preset: ProviderPreset) -> str | None:
        return self._custom_base_url(preset) or preset.base_url

    def is_configured(self, preset: ProviderPreset) -> bool:
        if not preset.requires_key:
            return True
        if self.api_key(preset):
            return True
        # An OpenAI-compatible base URL alone is enough: local servers accept any key.
        return preset.family == "openai" and self._custom_base_url(preset) is not None

    def default_provider(self) -> str | None:
        """The configured provider, else the first keyed provider with a key (saved or in the environment)."""
        if self._config.provider:
            return self._config.provider
        for preset in presets().values():
            if preset.requires_key and self.is_configured(preset):
                return preset.id
        return None

    def model_is_configured(self, provider: str) -> bool:
        """Does the user's configuration name `provider`'s default model (not only the catalog)?"""
        override = self._config.providers.get(provider)
        if override is not None and override.default_model:
            return True
        return bool(self._config.model) and provider == self.default_provider()

    def default_model(self, provider: str) -> str | None:
        preset = presets().get(provider)
        override = self._config.providers.get(provider)
        if override is not None and override.default_model:
            return override.default_model
        if self._config.model and provider == self.default_provider():
            return self._config.model
        return preset.default_model if preset else None

    def split(self, model: str, provider: str | None) -> tuple[str | None, str]:
        """Accept `provider:model` as well as a bare model id."""
        head, sep, tail = model.partition(":")
        if sep and provider is None and head in presets():
            return head, tail
        return provider, model

    def preset(self, provider: str) -> ProviderPreset:
        try:
            return presets()[provider]
        except KeyError:
            known = ", ".join(presets())
            raise ProtocolError(
                ErrorCode.UNKNOWN_PROVIDER,
                f"Unknown provider {provider!r}. Known providers: {known}.",
                source=ErrorSource.PROVIDER,
            ) from None

    def missing_key_message(self, preset: ProviderPreset) -> str:
        names = " or ".join(self.key_env(preset))
        where = f" (get one at {preset.key_url})" if preset.key_url else ""
        return (
            f"Provider {preset.name!r} needs an API key{where}: connect it ({connect_hint(preset.id)}) "
            f"or set {names}, then start a new turn; or switch to another provider with /model."
        )

    def resolve(self, provider: str | None, model: str | None) -> ModelTarget:
        """Pick the provider and model for a turn.

        Raises:
            ProtocolError: `no_provider` when nothing is connected or the chosen provider has no key;
                `unknown_provider` for a provider id Cowork does not know.
        """
        provider = provider or self.default_provider()
        if provider is None:
            raise ProtocolError(ErrorCode.NO_PROVIDER, no_provider_message(), source=ErrorSource.PROVIDER)
        preset = self.preset(provider)
        if not self.is_configured(preset):
            raise ProtocolError(
                ErrorCode.NO_PROVIDER,
                self.missing_key_message(preset),
                source=ErrorSource.PROVIDER,
                details={"provider": provider, "keyEnv": list(self.key_env(preset))},
            )
        model = model or self.default_model(provider)
        if not model:
            raise ProtocolError(
                ErrorCode.NO_PROVIDER,
                f"Provider {preset.name!r} has no default model: choose one with /model or set `model` in config.",
                source=ErrorSource.PROVIDER,
            )
        family: Family = preset.family
        override = self._config.providers.get(provider)
        if family == "openai":
            api = override.api if override is not None and override.api else None
            # OpenAI itself gets the Responses API; compatible servers (Ollama, vLLM, gateways) only speak Chat.
            if api == "chat" or (api is None and self._custom_base_url(preset) is not None):
                family = "openai-chat"
        return ModelTarget(
            provider,
            model,
            family,
            self.base_url(preset),
            self.api_key(preset),
            profile=preset.profile,
            local=preset.local,
        )

"""Adapter families: how a `ModelTarget` becomes a pydantic-ai model. One registered factory per family.

A family's SDK and adapter are imported when its first model is built (or by `preload`), not with this module:
together they take a few hundred milliseconds, which a server's start-up does not pay.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from cowork.lazy import HEAVY_IMPORTS

from ._resolve import ModelTarget

if TYPE_CHECKING:
    from pydantic_ai.models import Model

__all__ = ["Built", "ModelCache", "family_factory", "preload", "register_family"]

# Local servers accept any key, but the SDKs refuse to start without one.
_PLACEHOLDER_KEY = "cowork-no-key"


@dataclass
class Built:
    """A model and what to close with it (clients the model's provider does not own)."""

    model: Model
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)


Factory: TypeAlias = Callable[[ModelTarget], Built]
_FACTORIES: dict[str, Factory] = {}
_MODULES: dict[str, tuple[str, ...]] = {}


def register_family(name: str, *, modules: tuple[str, ...] = ()) -> Callable[[Factory], Factory]:
    """Register the factory of a family; `modules` are what it imports (`preload` imports them ahead)."""

    def decorator(factory: Factory) -> Factory:
        _FACTORIES[name] = factory
        _MODULES[name] = modules
        return factory

    return decorator


def preload(target: ModelTarget) -> None:
    """Import what building, streaming and pricing `target`'s model needs: its SDK, pydantic-ai's adapter, our
    streaming, the price table.

    Blocking (a few hundred milliseconds the first time) and thread-safe (under `HEAVY_IMPORTS`); building the
    model is then quick.
    """
    with HEAVY_IMPORTS:
        importlib.import_module(f"{__package__}._stream")
        importlib.import_module("genai_prices")
        for module in _MODULES.get(target.family, ()):
            importlib.import_module(module)
        if target.profile:
            importlib.import_module(f"pydantic_ai.providers.{target.profile}")


def family_factory(name: str) -> Factory:
    try:
        return _FACTORIES[name]
    except KeyError:
        raise LookupError(f"no adapter registered for model family {name!r}") from None


def _openai_provider(target: ModelTarget) -> Built:
    """An OpenAI-compatible provider: pydantic-ai's named one when there is one (for its model profiles)."""
    from openai import AsyncOpenAI
    from pydantic_ai.providers import Provider
    from pydantic_ai.providers.openai import OpenAIProvider

    from ._raw import RawAsyncOpenAI

    # Cowork retries itself (see `stream_with_retries`), so the SDK makes one attempt. The raw client sends the
    # body without the SDK's per-request walk of the whole history (see `_raw`).
    client = RawAsyncOpenAI(base_url=target.base_url, api_key=target.api_key or _PLACEHOLDER_KEY, max_retries=0)
    provider: Provider[AsyncOpenAI] = OpenAIProvider(openai_client=client)
    if target.profile:
        module = importlib.import_module(f"pydantic_ai.providers.{target.profile}")
        cls = next(
            value
            for name, value in vars(module).items()
            if name.endswith("Provider") and isinstance(value, type) and value.__module__ == module.__name__
        )
        provider = cls(openai_client=client)
    return Built(_with_provider(target, provider), [client.close])


def _with_provider(target: ModelTarget, provider: object) -> Model:
    from ._adapters import ChatModel, ResponsesModel

    if target.family == "openai":
        return ResponsesModel(target.model, provider=provider)
    return ChatModel(target.model, provider=provider)


_OPENAI_MODULES = ("openai", "pydantic_ai.providers.openai", "pydantic_ai.models.openai")


@register_family("openai-chat", modules=_OPENAI_MODULES)
def _openai_chat(target: ModelTarget) -> Built:
    return _openai_provider(target)


@register_family("openai", modules=_OPENAI_MODULES)
def _openai_responses(target: ModelTarget) -> Built:
    return _openai_provider(target)


@register_family(
    "anthropic",
    modules=("pydantic_ai.models.anthropic", "pydantic_ai.providers.anthropic", f"{__package__}._anthropic_model"),
)
def _anthropic(target: ModelTarget) -> Built:
    from pydantic_ai._http import create_async_httpx2_client
    from pydantic_ai.providers.anthropic import AnthropicProvider

    from ._anthropic_model import AnthropicModel
    from ._raw_anthropic import RawAsyncAnthropic

    # As for OpenAI: Cowork retries itself, and the raw client sends the body without copying it (see `_raw`).
    client = RawAsyncAnthropic(
        api_key=target.api_key or _PLACEHOLDER_KEY,
        base_url=target.base_url,
        http_client=create_async_httpx2_client(),
        max_retries=0,
    )
    provider = AnthropicProvider(anthropic_client=client)
    # Each plain history message is mapped once (see `_anthropic_model`).
    return Built(AnthropicModel(target.model, provider=provider), [client.close])


@register_family(
    "google", modules=("pydantic_ai.models.google", "pydantic_ai.providers.google", f"{__package__}._google")
)
def _google(target: ModelTarget) -> Built:
    from pydantic_ai.providers.google import GoogleProvider

    from ._google import GoogleModel
    from ._raw_google import raw_client

    provider = GoogleProvider(api_key=target.api_key or _PLACEHOLDER_KEY, base_url=target.base_url)
    # Each history message is mapped, and converted to the SDK's wire form, once (see `_google`, `_raw_google`).
    raw_client(provider.client)
    return Built(GoogleModel(target.model, provider=provider))


class ModelCache:
    """Reuses model instances (and so their HTTP connection pools) across turns; `aclose` closes them all."""

    def __init__(self) -> None:
        self._models: dict[ModelTarget, Model] = {}
        self._stack = contextlib.AsyncExitStack()
        self._building: defaultdict[ModelTarget, asyncio.Lock] = defaultdict(asyncio.Lock)
        """One build per target, when the server's warm-up and a first turn ask at once."""

    async def get(self, target: ModelTarget) -> Model:
        model = self._models.get(target)
        if model is None:
            async with self._building[target]:
                model = self._models.get(target)
                if model is None:
                    with HEAVY_IMPORTS:  # building imports the provider's SDK the first time
                        built = family_factory(target.family)(target)
                    for close in built.closers:
                        self._stack.push_async_callback(close)
                    model = await self._stack.enter_async_context(built.model)
                    self._models[target] = model
        return model

    async def aclose(self) -> None:
        self._models.clear()
        await self._stack.aclose()

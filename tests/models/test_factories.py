"""The model cache: one model per target, however many ask at once (the server's warm-up and a first turn)."""

from __future__ import annotations

import asyncio

import pytest

from cowork.models import ModelCache, ModelTarget

pytestmark = pytest.mark.anyio


async def test_concurrent_gets_of_one_target_build_one_model() -> None:
    cache = ModelCache()
    target = ModelTarget("mock", "mock-model", "openai-chat", "http://127.0.0.1:9/v1", "test-key")
    try:
        first, second = await asyncio.gather(cache.get(target), cache.get(target))
        assert first is second
        other = await cache.get(ModelTarget("mock", "other-model", "openai-chat", "http://127.0.0.1:9/v1", "k"))
        assert other is not first
    finally:
        await cache.aclose()
